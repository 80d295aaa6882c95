// Kernel spec: flag parsing, the JSON form, and merging flags over a spec file.
#include "cachewise/frontend/spec.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cachewise/frontend/compile.hpp"
#include "cachewise/frontend/contents.hpp"
#include "cachewise/model.hpp"
#include "cachewise/model/strict_json.hpp"

namespace cachewise::frontend {
namespace {

using Json = nlohmann::ordered_json;

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

bool is_name(std::string_view name) {
  return !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
         std::ranges::all_of(name, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// Whether the whole text is a finite number ("2.5", "-1e-3", "4").
bool is_number(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && std::isfinite(value);
}

std::pair<std::string, std::string> split_assignment(std::string_view text, const std::string& flag,
                                                     bool value_required) {
  const auto equals = text.find('=');
  const std::string name = trim(text.substr(0, equals));
  if (name.empty() || (equals == std::string_view::npos && value_required)) {
    throw InputError(flag + ": expected NAME=VALUE, got '" + std::string(text) + "'");
  }
  if (!is_name(name)) throw InputError(flag + ": '" + name + "' is not a name");
  return {name, equals == std::string_view::npos ? std::string() : trim(text.substr(equals + 1))};
}

/// An integer past int64, never wrapped ("18446744073709551615" is not -1) nor read as a double.
InputError out_of_range(const std::string& where, const std::string& text) {
  return InputError(where + ": " + text + " is outside the 64-bit integer range [" + std::to_string(INT64_MIN) + ", " +
                    std::to_string(INT64_MAX) + "]");
}

/// An arg's value: an integer arg when it is one and names no field, else text read by type.
void add_arg(ArgFlag& flag, const std::string& name, const std::string& value, const std::string& where) {
  std::int64_t integer = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), integer);
  const bool whole = !value.empty() && error == std::errc() && end == value.data() + value.size();
  if (error == std::errc::result_out_of_range && end == value.data() + value.size()) throw out_of_range(where, value);
  if (name.find('.') == std::string::npos) {
    if (whole) return flag.integers.push_back({name, integer});
    if (!is_number(value)) throw InputError(where + ": expected a number, got '" + value + "'");
  } else if (value.empty()) {
    throw InputError(where + ": expected a value after '='");
  }
  flag.values.push_back({name, value});
}

std::int64_t parse_integer(std::string_view text, const std::string& where) {
  const std::string trimmed = trim(text);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), value);
  if (error == std::errc::result_out_of_range && end == trimmed.data() + trimmed.size())
    throw out_of_range(where, trimmed);
  if (trimmed.empty() || error != std::errc() || end != trimmed.data() + trimmed.size()) {
    throw InputError(where + ": expected an integer, got '" + trimmed + "'");
  }
  return value;
}

bool is_integer_text(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && end == text.data() + text.size() && error != std::errc::invalid_argument;
}

ParameterValues integer_parameter(const std::string& name, const std::vector<std::string>& items,
                                  const std::string& where) {
  ParameterValues parameter{name, {}, {}};
  for (const std::string& item : items) parameter.values.push_back(parse_integer(item, where));
  return parameter;
}

ParameterValues type_parameter(const std::string& name, const std::vector<std::string>& items,
                               const std::string& where) {
  ParameterValues parameter{name, {}, {}};
  for (const std::string& item : items) {
    if (is_integer_text(item))
      throw InputError(where + ": mixes integers and types ('" + item +
                       "'); a parameter's values are all integers or all types");
    if (!is_type_name(item)) throw InputError(where + ": '" + item + "' is neither an integer nor a type name");
    parameter.values.push_back(static_cast<std::int64_t>(parameter.types.size()));
    parameter.types.push_back(item);
  }
  return parameter;
}

/// A JSON integer as int64: one past INT64_MAX (2^64 - 1 would wrap to -1) is refused.
std::int64_t json_integer(const Json& value, const std::string& where) {
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    throw InputError(where + ": " + value.dump() + " is past the largest integer, " + std::to_string(INT64_MAX));
  }
  return value.get<std::int64_t>();
}

std::string json_text(const Json& value, const std::string& where) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(json_integer(value, where));
  throw InputError(where + ": expected a string or an integer, got " + value.dump());
}

/// A launch shape: "a, b" or ["a", "b"].
std::string json_dims(const Json& value, const std::string& where) {
  if (!value.is_array()) return json_text(value, where);
  std::string text;
  for (const Json& item : value) text += (text.empty() ? "" : ", ") + json_text(item, where);
  return text;
}

const Json& object_at(const Json& json, const char* key, const std::string& where) {
  const Json& value = json.at(key);
  if (!value.is_object()) throw InputError(where + ": '" + key + "' must be an object");
  return value;
}

void read_collections(const Json& json, const std::filesystem::path& spec_directory, const std::string& where,
                      KernelSpec& spec) {
  if (json.contains("parameters")) {
    for (const auto& [name, values] : object_at(json, "parameters", where).items()) {
      if (!values.is_array()) throw InputError(where + ": parameter '" + name + "' must list its values");
      const std::string context = where + ": parameter '" + name + "'";
      std::vector<std::string> items;
      for (const Json& value : values) {
        if (!value.is_number_integer() && !value.is_string())
          throw InputError(context + ": " + value.dump() + " is not an integer or a type");
        items.push_back(value.is_string() ? value.get<std::string>() : std::to_string(json_integer(value, context)));
      }
      const bool types = !values.empty() && values.front().is_string();
      if (!types && std::ranges::any_of(values, [](const Json& v) { return v.is_string(); })) {
        throw InputError(context + ": mixes integers and types; a parameter's values are all integers or all types");
      }
      spec.parameters.push_back(types ? type_parameter(name, items, context) : integer_parameter(name, items, context));
    }
  }
  if (json.contains("constraints")) {
    if (!json["constraints"].is_array()) throw InputError(where + ": 'constraints' must be a list of expressions");
    for (const Json& constraint : json["constraints"])
      spec.constraints.push_back(json_text(constraint, where + ": constraints"));
  }
  if (json.contains("buffers")) {
    for (const auto& [name, bytes] : object_at(json, "buffers", where).items())
      spec.buffers.push_back({name, json_text(bytes, where + ": buffer '" + name + "'")});
  }
  if (json.contains("contents")) {
    for (const auto& [name, value] : object_at(json, "contents", where).items()) {
      const std::string context = where + ": contents of '" + name + "'";
      if (!value.is_object()) {
        spec.contents.push_back({name, json_text(value, context), "i32"});
        continue;
      }
      for (const auto& [key, item] : value.items()) {
        if (key != "value" && key != "type")
          throw InputError(context + ": unknown key '" + key + "' (known: value, type)");
      }
      if (!value.contains("value")) throw InputError(context + ": no \"value\"");
      spec.contents.push_back({name, json_text(value["value"], context), value.value("type", std::string("i32"))});
    }
  }
  if (json.contains("args")) {
    for (const auto& [name, value] : object_at(json, "args", where).items()) {
      if (value.is_number_integer()) {
        spec.args.push_back({name, json_integer(value, where + ": arg '" + name + "'")});
      } else if (value.is_number_float()) {
        spec.value_args.push_back({name, value.dump()});
      } else if (value.is_object()) { // a struct argument: {"width": 4096, "scale": 2.0}
        for (const auto& [field, field_value] : value.items()) {
          if (!field_value.is_number() && !field_value.is_string()) {
            throw InputError(where + ": arg '" + name + "." + field + "' must be a number or an expression, got " +
                             field_value.dump());
          }
          spec.value_args.push_back(
              {name + "." + field, field_value.is_string() ? field_value.get<std::string>() : field_value.dump()});
        }
      } else {
        throw InputError(where + ": arg '" + name +
                         "' must be a number or, for a struct, an object of its fields, got " + value.dump());
      }
    }
  }
  if (json.contains("include_dirs")) {
    if (!json["include_dirs"].is_array()) throw InputError(where + ": 'include_dirs' must be a list of directories");
    for (const Json& directory : json["include_dirs"]) {
      const std::filesystem::path path = directory.get<std::string>();
      spec.include_directories.push_back(path.is_absolute() ? path : spec_directory / path);
    }
  }
  if (json.contains("compiler_options")) {
    if (!json["compiler_options"].is_array())
      throw InputError(where + ": 'compiler_options' must be a list of options");
    for (const Json& option : json["compiler_options"]) spec.compiler_options.push_back(option.get<std::string>());
  }
  if (json.contains("defines")) {
    for (const auto& [name, value] : object_at(json, "defines", where).items())
      spec.defines.push_back({name, json_text(value, where + ": define '" + name + "'")});
  }
  if (json.contains("reference")) {
    for (const auto& [name, value] : object_at(json, "reference", where).items()) {
      if (!value.is_number_integer())
        throw InputError(where + ": reference '" + name + "' must be an integer, got " + value.dump());
      spec.reference.push_back({name, json_integer(value, where + ": reference '" + name + "'")});
    }
  }
  if (json.contains("outputs")) {
    for (const auto& [name, type] : object_at(json, "outputs", where).items())
      spec.outputs.push_back({name, type.get<std::string>()});
  }
  if (json.contains("tolerance")) spec.tolerance = json["tolerance"].get<double>();
}

template <typename Item>
void merge_by_name(std::vector<Item>& base, const std::vector<Item>& overrides) {
  for (const Item& item : overrides) {
    auto found = std::ranges::find(base, item.name, &Item::name);
    if (found != base.end()) *found = item;
    else base.push_back(item);
  }
}

template <typename Item>
void check_unique(const std::vector<Item>& items, const char* what, std::set<std::string>& seen) {
  for (const Item& item : items) {
    if (!seen.insert(item.name).second)
      throw InputError(std::string("kernel spec: ") + what + " '" + item.name + "' is given twice");
  }
}

/// Every name a spec gives (parameters become macros or template arguments, args and buffers are
/// the kernel's parameters, "S.FIELD" a struct's field) is a C identifier: nothing else can
/// name what the kernel declares, and the generated source never pastes anything else.
void check_names(const KernelSpec& spec) {
  const auto check = [](const std::string& name, const char* what) {
    if (!is_name(name)) throw InputError(std::string("kernel spec: ") + what + " '" + name + "' is not a C identifier");
  };
  for (const ParameterValues& parameter : spec.parameters) check(parameter.name, "parameter");
  for (const NamedValue& arg : spec.args) check(arg.name, "arg");
  for (const ArgumentText& arg : spec.value_args) {
    const auto dot = arg.name.find('.');
    if (!is_name(arg.name.substr(0, dot)) || (dot != std::string::npos && !is_name(arg.name.substr(dot + 1)))) {
      throw InputError("kernel spec: arg '" + arg.name + "' is not a C identifier (or STRUCT.FIELD)");
    }
  }
  for (const BufferSpec& buffer : spec.buffers) check(buffer.name, "buffer");
  for (const NamedValue& reference : spec.reference) check(reference.name, "reference parameter");
}

/// The outputs a tuning run compares with the reference variant: buffers of a known element type,
/// with a reference to compare against, within a finite tolerance >= 0.
void check_outputs(const KernelSpec& spec) {
  static const std::set<std::string> types = {"f32", "f64", "i32", "u8"};
  for (const OutputSpec& output : spec.outputs) {
    if (std::ranges::none_of(spec.buffers, [&](const BufferSpec& b) { return b.name == output.name; })) {
      throw InputError("kernel spec: output '" + output.name + "' is not a buffer");
    }
    if (!types.contains(output.type)) {
      throw InputError("kernel spec: output '" + output.name + "' has type '" + output.type +
                       "' (valid: f32, f64, i32, u8)");
    }
  }
  if (!spec.outputs.empty() && spec.reference.empty())
    throw InputError("kernel spec: outputs are checked against a \"reference\": give one");
  if (!spec.reference.empty() && spec.outputs.empty())
    throw InputError("kernel spec: a \"reference\" needs \"outputs\" to compare");
  if (!(spec.tolerance >= 0.0) || !std::isfinite(spec.tolerance)) {
    std::ostringstream shown;
    shown << spec.tolerance;
    throw InputError("kernel spec: tolerance must be a finite number >= 0, got " + shown.str());
  }
}

} // namespace

ParameterValues parse_parameter_flag(std::string_view text) {
  auto [name, list] = split_assignment(text, "--param", true);
  std::vector<std::string> items;
  std::string_view rest = list;
  for (;;) {
    const auto comma = rest.find(',');
    items.push_back(trim(rest.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  const bool types = !items.empty() && !items.front().empty() && !is_integer_text(items.front());
  return types ? type_parameter(name, items, "--param " + name) : integer_parameter(name, items, "--param " + name);
}

BufferSpec parse_buffer_flag(std::string_view text) {
  auto [name, bytes] = split_assignment(text, "--buffer", true);
  if (bytes.empty()) throw InputError("--buffer " + name + ": expected a size expression after '='");
  return {name, bytes};
}

ContentsSpec parse_contents_flag(std::string_view text) {
  const auto equals = text.find('=');
  const auto colon = text.substr(0, equals).find(':');
  std::string type = "i32";
  std::string assignment(text);
  if (colon != std::string_view::npos) { // "col:i64=EXPR": the type between the name and '='
    type = trim(text.substr(colon + 1, equals - colon - 1));
    assignment = std::string(text.substr(0, colon)) +
                 std::string(text.substr(equals == std::string_view::npos ? text.size() : equals));
  }
  auto [name, value] = split_assignment(assignment, "--contents", true);
  if (value.empty()) throw InputError("--contents " + name + ": expected an expression over i after '='");
  return {name, value, type};
}

NamedValue parse_arg_flag(std::string_view text) {
  auto [name, value] = split_assignment(text, "--arg", true);
  return {name, parse_integer(value, "--arg " + name)};
}

ArgFlag parse_kernel_arg_flag(std::string_view text) {
  const auto equals = text.find('=');
  const std::string name = trim(text.substr(0, equals));
  const auto dot = name.find('.');
  const bool field = dot != std::string::npos && is_name(name.substr(0, dot)) && is_name(name.substr(dot + 1));
  if (equals == std::string_view::npos || (!is_name(name) && !field)) {
    throw InputError("--arg: expected NAME=VALUE or STRUCT.FIELD=VALUE, got '" + std::string(text) + "'");
  }
  const std::string value = trim(text.substr(equals + 1));
  ArgFlag flag;
  if (value.starts_with('{')) { // "p={width=4096, scale=2.0}": one entry per field
    if (field || !value.ends_with('}'))
      throw InputError("--arg " + name + ": expected " + name + "={FIELD=VALUE, ...}, got '" + value + "'");
    const std::string inner = value.substr(1, value.size() - 2);
    for (std::size_t start = 0; start <= inner.size();) {
      const std::size_t comma = std::min(inner.find(',', start), inner.size());
      const std::string item = trim(std::string_view(inner).substr(start, comma - start));
      const auto item_equals = item.find('=');
      const std::string field_name = trim(std::string_view(item).substr(0, item_equals));
      if (item_equals == std::string::npos || !is_name(field_name)) {
        throw InputError("--arg " + name + ": expected FIELD=VALUE inside {...}, got '" + item + "'");
      }
      add_arg(flag, name + "." + field_name, trim(std::string_view(item).substr(item_equals + 1)),
              "--arg " + name + "." + field_name);
      start = comma + 1;
    }
    return flag;
  }
  add_arg(flag, name, value, "--arg " + name);
  return flag;
}

Define parse_define_flag(std::string_view text) {
  auto [name, value] = split_assignment(text, "--define", false);
  return {name, value};
}

OutOfBoundsReads parse_out_of_bounds_reads(std::string_view text, const std::string& where) {
  if (text == "error") return OutOfBoundsReads::error;
  if (text == "simulate") return OutOfBoundsReads::simulate;
  throw InputError(where + ": expected \"error\" or \"simulate\", got \"" + std::string(text) + "\"");
}

BranchesOnLoadedData parse_branches_on_loaded_data(std::string_view text, const std::string& where) {
  if (text == "error") return BranchesOnLoadedData::error;
  if (text == "not-taken") return BranchesOnLoadedData::not_taken;
  throw InputError(where + ": expected \"error\" or \"not-taken\", got \"" + std::string(text) + "\"");
}

KernelSpec kernel_spec_from_json(const Json& json, const std::filesystem::path& spec_directory,
                                 const std::string& where) {
  if (!json.is_object()) throw InputError(where + ": a kernel spec is a JSON object");
  static const std::set<std::string> known = {"source",
                                              "entry",
                                              "parameters",
                                              "constraints",
                                              "grid",
                                              "block",
                                              "shared_bytes",
                                              "useful_bytes",
                                              "buffers",
                                              "contents",
                                              "args",
                                              "defines",
                                              "std",
                                              "include_dirs",
                                              "compiler_options",
                                              "reference",
                                              "outputs",
                                              "tolerance",
                                              "out_of_bounds_reads",
                                              "branches_on_loaded_data"};
  for (const auto& [key, value] : json.items()) {
    if (!known.contains(key)) throw InputError(where + ": unknown key '" + key + "'");
  }
  KernelSpec spec;
  try {
    if (json.contains("source")) {
      const std::filesystem::path source = json["source"].get<std::string>();
      spec.source = source.is_absolute() ? source : spec_directory / source;
    }
    if (json.contains("entry")) spec.entry = json["entry"].get<std::string>();
    if (json.contains("std")) spec.language_standard = json["std"].get<std::string>();
    if (json.contains("grid")) spec.grid = json_dims(json["grid"], where + ": grid");
    if (json.contains("block")) spec.block = json_dims(json["block"], where + ": block");
    if (json.contains("shared_bytes"))
      spec.dynamic_shared_bytes = json_text(json["shared_bytes"], where + ": shared_bytes");
    if (json.contains("useful_bytes")) spec.useful_bytes = json_text(json["useful_bytes"], where + ": useful_bytes");
    if (json.contains("out_of_bounds_reads"))
      spec.out_of_bounds_reads =
          parse_out_of_bounds_reads(json["out_of_bounds_reads"].get<std::string>(), where + ": out_of_bounds_reads");
    if (json.contains("branches_on_loaded_data"))
      spec.branches_on_loaded_data = parse_branches_on_loaded_data(json["branches_on_loaded_data"].get<std::string>(),
                                                                   where + ": branches_on_loaded_data");
    read_collections(json, spec_directory, where, spec);
  } catch (const nlohmann::json::exception& error) {
    throw InputError(where + ": " + error.what());
  }
  return spec;
}

KernelSpec load_kernel_spec(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error)) {
    throw InputError(path.string() + ": not a regular file (a kernel spec is a JSON file)");
  }
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open kernel spec");
  Json json;
  try {
    json = parse_strict_json<Json>(in);
  } catch (const nlohmann::json::exception& parse_error) { // a syntax error, or a number past double (1e999)
    throw InputError(path.string() + ": not valid JSON (" + parse_error.what() + ")");
  } catch (const InputError& input_error) {
    throw InputError(path.string() + ": " + input_error.what());
  }
  return kernel_spec_from_json(json, path.parent_path(), path.string());
}

KernelSpec merge_kernel_specs(KernelSpec base, const KernelSpec& overrides) {
  if (!overrides.source.empty()) base.source = overrides.source;
  for (auto [target, source] : {std::pair{&base.entry, &overrides.entry},
                                {&base.grid, &overrides.grid},
                                {&base.block, &overrides.block},
                                {&base.dynamic_shared_bytes, &overrides.dynamic_shared_bytes},
                                {&base.useful_bytes, &overrides.useful_bytes},
                                {&base.language_standard, &overrides.language_standard}}) {
    if (!source->empty()) *target = *source;
  }
  if (!overrides.constraints.empty()) base.constraints = overrides.constraints;
  base.include_directories.insert(base.include_directories.end(), overrides.include_directories.begin(),
                                  overrides.include_directories.end());
  base.compiler_options.insert(base.compiler_options.end(), overrides.compiler_options.begin(),
                               overrides.compiler_options.end());
  merge_by_name(base.parameters, overrides.parameters);
  merge_by_name(base.buffers, overrides.buffers);
  merge_by_name(base.contents, overrides.contents);
  // An arg given anew replaces the file's of that name, integer or not.
  std::erase_if(base.args, [&](const NamedValue& arg) {
    return std::ranges::find(overrides.value_args, arg.name, &ArgumentText::name) != overrides.value_args.end();
  });
  std::erase_if(base.value_args, [&](const ArgumentText& arg) {
    return std::ranges::find(overrides.args, arg.name, &NamedValue::name) != overrides.args.end();
  });
  merge_by_name(base.args, overrides.args);
  merge_by_name(base.value_args, overrides.value_args);
  merge_by_name(base.defines, overrides.defines);
  merge_by_name(base.reference, overrides.reference);
  merge_by_name(base.outputs, overrides.outputs);
  if (overrides.tolerance != 0.0) base.tolerance = overrides.tolerance;
  return base;
}

void check_define(const Define& define) {
  const bool identifier = !define.name.empty() && std::isdigit(static_cast<unsigned char>(define.name.front())) == 0 &&
                          std::all_of(define.name.begin(), define.name.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
                          });
  if (!identifier) throw InputError("--define '" + define.name + "': a macro name must be an identifier");
  if (define.value.find_first_of(std::string_view("\n\r\0", 3)) != std::string::npos) {
    throw InputError("--define " + define.name + ": a macro value must be one line");
  }
  if (!define.value.empty() && define.value.back() == '\\')
    throw InputError("--define " + define.name + ": a macro value must not end in a backslash");
}

std::vector<NamedValue> integer_defines(const KernelSpec& spec) {
  std::vector<NamedValue> values;
  for (const Define& define : spec.defines) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(define.value.data(), define.value.data() + define.value.size(), value);
    if (!define.value.empty() && error == std::errc() && end == define.value.data() + define.value.size())
      values.push_back({define.name, value});
  }
  return values;
}

void validate_kernel_spec(const KernelSpec& spec) {
  if (spec.source.empty()) throw InputError("kernel spec: no source (--kernel FILE.cu or \"source\")");
  if (spec.entry.empty()) throw InputError("kernel spec: no entry (--entry NAME or \"entry\")");
  if (spec.grid.empty()) throw InputError("kernel spec: no grid (--grid \"X[, Y[, Z]]\" or \"grid\")");
  if (spec.block.empty()) throw InputError("kernel spec: no block (--block \"X[, Y[, Z]]\" or \"block\")");
  std::set<std::string> names;
  check_unique(spec.parameters, "parameter", names);
  check_unique(spec.args, "arg", names);
  check_unique(spec.value_args, "arg", names);
  std::set<std::string> buffers;
  check_unique(spec.buffers, "buffer", buffers);
  std::set<std::string> declared;
  check_unique(spec.contents, "contents of buffer", declared);
  for (const ContentsSpec& contents : spec.contents) {
    if (!buffers.contains(contents.name))
      throw InputError("--contents " + contents.name + ": '" + contents.name + "' is not a buffer (--buffer)");
    (void)contents_element_type(contents.type, "--contents " + contents.name);
  }
  for (const Define& define : spec.defines) {
    check_define(define);
    if (names.contains(define.name)) {
      throw InputError("--define " + define.name + ": '" + define.name + "' is already a parameter or an arg");
    }
  }
  for (const ParameterValues& parameter : spec.parameters) {
    if (parameter.values.empty()) throw InputError("kernel spec: parameter '" + parameter.name + "' has no values");
  }
  if (spec.max_candidates == 0 || spec.max_candidates > kLargestMaxCandidates) {
    throw InputError("kernel spec: max_candidates must be 1 to " + std::to_string(kLargestMaxCandidates) + ", got " +
                     std::to_string(spec.max_candidates));
  }
  check_names(spec);
  check_outputs(spec);
  CompileRequest compiled_as; // what reaches the compiler, checked before any candidate compiles
  compiled_as.source = spec.source;
  compiled_as.include_directories = spec.include_directories;
  compiled_as.compiler_options = spec.compiler_options;
  check_compile_request(compiled_as);
}

bool is_type_name(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text.front())) || text.front() == '_')) return false;
  return std::ranges::all_of(text, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '*' || c == ' ';
  });
}

EntryName parse_entry_name(std::string_view entry) {
  std::string text = trim(entry);
  std::string signature;
  if (!text.empty() && text.back() == ')') { // "scale(float*, int)": the parameters pick one overload
    int depth = 0;
    std::size_t open = text.size();
    while (open-- > 0) {
      depth += text[open] == ')' ? 1 : text[open] == '(' ? -1 : 0;
      if (depth == 0) break;
    }
    if (open == std::string::npos || open == 0)
      throw InputError("--entry: expected NAME(PARAMETER, ...), got '" + text + "'");
    signature = text.substr(open);
    text = trim(std::string_view(text).substr(0, open));
  }
  const auto open = text.find('<');
  if (open == std::string::npos) return {text, {}, signature};
  if (text.back() != '>') throw InputError("--entry: expected NAME<ARG, ...>, got '" + text + "'");
  EntryName name{trim(std::string_view(text).substr(0, open)), {}, signature};
  const std::string_view arguments = std::string_view(text).substr(open + 1, text.size() - open - 2);
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= arguments.size(); ++i) {
    const char c = i < arguments.size() ? arguments[i] : ',';
    depth += c == '(' || c == '<' ? 1 : c == ')' || c == '>' ? -1 : 0;
    if (c != ',' || depth > 0) continue;
    name.template_arguments.push_back(trim(arguments.substr(start, i - start)));
    if (name.template_arguments.back().empty()) throw InputError("--entry: empty template argument in '" + text + "'");
    start = i + 1;
  }
  return name;
}

} // namespace cachewise::frontend
