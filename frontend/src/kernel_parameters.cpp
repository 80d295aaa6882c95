// Kernel arguments: where the buffers lie in the traced address space, and the bytes each of
// the entry's parameters receives: a buffer's address, an integer or floating-point scalar
// encoded as its type, or a struct's fields placed at their offsets.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>

#include "cachewise/frontend/kernel_advisor.hpp"

namespace cachewise::frontend {
namespace {

constexpr std::uint64_t kFirstBufferAddress = std::uint64_t{1} << 30;
constexpr std::uint64_t kBufferAlignmentBytes = std::uint64_t{1} << 20;

using Bytes = std::vector<std::uint8_t>;

struct ScalarType {
  enum class Kind { signed_integer, unsigned_integer, floating };
  Kind kind = Kind::signed_integer;
  int bytes = 4;
};

/// C++'s scalar types by their canonical spelling (SourceParameter::type), for the host's ABI.
std::optional<ScalarType> source_scalar_type(std::string type) {
  using Kind = ScalarType::Kind;
  if (type.starts_with("std::")) type = type.substr(5);
  static const std::map<std::string, ScalarType, std::less<>> types = {
      {"bool", {Kind::unsigned_integer, 1}},
      {"char", {Kind::signed_integer, 1}},
      {"signed char", {Kind::signed_integer, 1}},
      {"int8_t", {Kind::signed_integer, 1}},
      {"unsigned char", {Kind::unsigned_integer, 1}},
      {"uint8_t", {Kind::unsigned_integer, 1}},
      {"short", {Kind::signed_integer, 2}},
      {"short int", {Kind::signed_integer, 2}},
      {"int16_t", {Kind::signed_integer, 2}},
      {"unsigned short", {Kind::unsigned_integer, 2}},
      {"unsigned short int", {Kind::unsigned_integer, 2}},
      {"uint16_t", {Kind::unsigned_integer, 2}},
      {"int", {Kind::signed_integer, 4}},
      {"signed", {Kind::signed_integer, 4}},
      {"signed int", {Kind::signed_integer, 4}},
      {"int32_t", {Kind::signed_integer, 4}},
      {"unsigned", {Kind::unsigned_integer, 4}},
      {"unsigned int", {Kind::unsigned_integer, 4}},
      {"uint32_t", {Kind::unsigned_integer, 4}},
      {"long", {Kind::signed_integer, 8}},
      {"long int", {Kind::signed_integer, 8}},
      {"long long", {Kind::signed_integer, 8}},
      {"long long int", {Kind::signed_integer, 8}},
      {"int64_t", {Kind::signed_integer, 8}},
      {"ptrdiff_t", {Kind::signed_integer, 8}},
      {"unsigned long", {Kind::unsigned_integer, 8}},
      {"unsigned long int", {Kind::unsigned_integer, 8}},
      {"unsigned long long", {Kind::unsigned_integer, 8}},
      {"unsigned long long int", {Kind::unsigned_integer, 8}},
      {"uint64_t", {Kind::unsigned_integer, 8}},
      {"size_t", {Kind::unsigned_integer, 8}},
      {"float", {Kind::floating, 4}},
      {"double", {Kind::floating, 8}}};
  const auto found = types.find(type);
  if (found == types.end()) return std::nullopt;
  return found->second;
}

/// A scalar parameter's type: the source's when it names a C++ scalar, else the compiled
/// parameter's (.f32 / .f64 are floating; a template's T = float compiles to .f32).
ScalarType parameter_scalar_type(const std::string& source_type, const PtxParam& compiled) {
  if (const auto type = source_scalar_type(source_type); type && type->bytes == compiled.bytes) return *type;
  const bool floating = compiled.type.starts_with('f');
  return {floating                         ? ScalarType::Kind::floating
          : compiled.type.starts_with('u') ? ScalarType::Kind::unsigned_integer
                                           : ScalarType::Kind::signed_integer,
          static_cast<int>(compiled.bytes)};
}

std::string type_word(const ScalarType& type, const std::string& source_type) {
  if (!source_type.empty()) return source_type;
  return type.kind == ScalarType::Kind::floating ? (type.bytes == 4 ? "float" : "double")
                                                 : std::to_string(type.bytes) + "-byte integer";
}

/// Where a value comes from: an integer arg or parameter (a binding), or an arg's text.
struct ValueSource {
  std::optional<std::int64_t> integer;
  const ArgumentText* text = nullptr;
};

void put_little_endian(Bytes& bytes, std::size_t offset, std::uint64_t value, int size) {
  for (int b = 0; b < size; ++b)
    bytes[offset + static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(value >> (8 * b));
}

/// `value` encoded as `type` at `offset` of `bytes`; `shown` names it in messages ("kernel parameter 'alpha'").
void encode(Bytes& bytes, std::size_t offset, const ScalarType& type, const std::string& type_name,
            const ValueSource& value, const Bindings& bindings, const std::string& shown) {
  if (type.kind == ScalarType::Kind::floating) {
    double number = 0;
    if (value.integer) {
      number = static_cast<double>(*value.integer);
    } else {
      char* end = nullptr;
      number = std::strtod(value.text->text.c_str(), &end);
      if (end != value.text->text.c_str() + value.text->text.size()) {
        number =
            static_cast<double>(Expression::parse(value.text->text, "--arg " + value.text->name).evaluate(bindings));
      }
    }
    if (type.bytes == 4) {
      if (!(std::fabs(number) <= FLT_MAX)) {
        throw InputError(shown + " is a float: " + (value.text ? value.text->text : std::to_string(*value.integer)) +
                         " is out of its range");
      }
      return put_little_endian(bytes, offset, std::bit_cast<std::uint32_t>(static_cast<float>(number)), 4);
    }
    return put_little_endian(bytes, offset, std::bit_cast<std::uint64_t>(number), 8);
  }
  std::int64_t integer = 0;
  if (value.integer) {
    integer = *value.integer;
  } else {
    const std::string& text = value.text->text;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
    if (error != std::errc() || end != text.data() + text.size()) {
      char* number_end = nullptr;
      std::strtod(text.c_str(), &number_end);
      if (number_end == text.c_str() + text.size()) {
        throw InputError(shown + " is " + type_name + ": give it an integer, not '" + text + "'");
      }
      integer = Expression::parse(text, "--arg " + value.text->name).evaluate(bindings);
    }
  }
  const int bits = type.bytes * 8;
  const bool fits =
      bits >= 64 || (type.kind == ScalarType::Kind::signed_integer
                         ? integer >= -(std::int64_t{1} << (bits - 1)) && integer < (std::int64_t{1} << (bits - 1))
                         : integer >= 0 && integer < (std::int64_t{1} << bits));
  if (!fits) throw InputError(shown + ": " + std::to_string(integer) + " does not fit " + type_name);
  put_little_endian(bytes, offset, static_cast<std::uint64_t>(integer), type.bytes);
}

std::string listed(const std::vector<SourceParameter>& parameters) {
  std::string text;
  for (const SourceParameter& parameter : parameters) text += (text.empty() ? "" : ", ") + parameter.name;
  return text;
}

/// "--arg p.width=VALUE --arg p.scale=VALUE": the fix for a struct given no fields or a scalar.
std::string field_syntax(const std::string& parameter, const std::vector<SourceField>& fields) {
  std::string text;
  for (const SourceField& field : fields)
    text += (text.empty() ? "" : " ") + std::string("--arg ") + parameter + "." + field.name + "=VALUE";
  return text;
}

/// A struct argument's bytes: each field, by the C layout rules (a field at the next multiple
/// of its alignment, the struct's size a multiple of the largest, or of the compiled parameter's
/// `.align` when the struct is over-aligned: `__align__(16)`), checked against the compiled
/// parameter's size.
Bytes struct_bytes(const SourceParameter& parameter, const PtxParam& compiled, const KernelSpec& spec,
                   const Bindings& bindings, std::vector<bool>& used) {
  const std::vector<SourceField>& fields = *parameter.fields;
  const std::string shown = "kernel parameter '" + parameter.name + "' (struct " + parameter.type + ")";
  if (bindings.contains(parameter.name)) {
    throw InputError(
        shown + " is a struct passed by value, not a scalar: give its fields: " + field_syntax(parameter.name, fields));
  }
  Bytes bytes(static_cast<std::size_t>(compiled.bytes), 0);
  std::int64_t offset = 0, alignment = 1;
  for (const SourceField& field : fields) {
    const std::optional<ScalarType> type = source_scalar_type(field.type);
    if (!type || field.elements != 1) {
      throw InputError(shown + ": field '" + field.name + "' (" + field.type + (field.elements != 1 ? " array" : "") +
                       ") is not a scalar: only structs of scalar fields can be passed");
    }
    offset = (offset + type->bytes - 1) / type->bytes * type->bytes;
    alignment = std::max<std::int64_t>(alignment, type->bytes);
    const std::string name = parameter.name + "." + field.name;
    const auto text = std::ranges::find(spec.value_args, name, &ArgumentText::name);
    if (text == spec.value_args.end()) {
      throw InputError(shown + ": field '" + field.name + "' has no value: give " +
                       field_syntax(parameter.name, fields));
    }
    used[static_cast<std::size_t>(text - spec.value_args.begin())] = true;
    if (offset + type->bytes <= compiled.bytes) {
      encode(bytes, static_cast<std::size_t>(offset), *type, field.type, {std::nullopt, &*text}, bindings,
             "--arg " + name);
    }
    offset += type->bytes;
  }
  alignment = std::max(alignment, compiled.align);
  const std::int64_t size = (offset + alignment - 1) / alignment * alignment;
  if (size != compiled.bytes) {
    throw InputError(shown + ": its fields lay out to " + std::to_string(size) +
                     " bytes by the C rules, the compiled parameter has " + std::to_string(compiled.bytes) +
                     " (a packed struct, or one with an over-aligned field, cannot be placed)");
  }
  return bytes;
}

std::vector<Bytes> values_by_name(const std::vector<PtxParam>& compiled, const std::vector<SourceParameter>& parameters,
                                  const KernelSpec& spec, const EvaluatedSpec& evaluated,
                                  const std::vector<std::uint64_t>& bases) {
  for (const BufferSpec& buffer : spec.buffers) {
    if (std::ranges::none_of(parameters,
                             [&](const SourceParameter& p) { return p.pointer && p.name == buffer.name; })) {
      throw InputError("--buffer " + buffer.name + ": the entry has no pointer parameter '" + buffer.name +
                       "' (parameters: " + listed(parameters) + ")");
    }
  }
  std::vector<bool> used(spec.value_args.size(), false);
  std::vector<Bytes> values;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const SourceParameter& parameter = parameters[i];
    const std::string position = std::to_string(i + 1);
    const std::string shown =
        parameter.name.empty() ? "#" + position : "'" + parameter.name + "'"; // unnamed: by position
    const std::string given = parameter.name.empty() ? "NAME" : parameter.name;
    Bytes bytes(static_cast<std::size_t>(compiled[i].bytes), 0);
    if (parameter.pointer) {
      const auto buffer = std::ranges::find(spec.buffers, parameter.name, &BufferSpec::name);
      if (buffer == spec.buffers.end()) {
        throw InputError("kernel parameter " + shown + " is a pointer with no buffer: give --buffer " + given +
                         "=BYTES");
      }
      put_little_endian(bytes, 0, bases[static_cast<std::size_t>(buffer - spec.buffers.begin())],
                        std::min<int>(8, static_cast<int>(bytes.size())));
      values.push_back(std::move(bytes));
      continue;
    }
    if (parameter.fields) {
      values.push_back(struct_bytes(parameter, compiled[i], spec, evaluated.bindings, used));
      continue;
    }
    if (compiled[i].bytes > 8) {
      throw InputError(
          "kernel parameter " + shown + " is " + std::to_string(compiled[i].bytes) + " bytes passed by value (type '" +
          parameter.type +
          "'), whose definition is not in the source: only structs defined in the kernel's file can be passed");
    }
    ValueSource value;
    if (const auto binding = evaluated.bindings.find(parameter.name); binding != evaluated.bindings.end())
      value.integer = binding->second;
    if (const auto text = std::ranges::find(spec.value_args, parameter.name, &ArgumentText::name);
        text != spec.value_args.end()) {
      value.text = &*text;
      used[static_cast<std::size_t>(text - spec.value_args.begin())] = true;
    }
    if (!value.integer && value.text == nullptr) {
      throw InputError("kernel parameter " + shown + " has no value: give --arg " + given +
                       "=N (or a --param of that name)");
    }
    const ScalarType type = parameter_scalar_type(parameter.type, compiled[i]);
    encode(bytes, 0, type, type_word(type, parameter.type), value, evaluated.bindings, "kernel parameter " + shown);
    values.push_back(std::move(bytes));
  }
  for (std::size_t a = 0; a < used.size(); ++a) {
    if (used[a]) continue;
    const std::string& name = spec.value_args[a].name;
    const std::string holder = name.substr(0, name.find('.'));
    const auto parameter = std::ranges::find(parameters, holder, &SourceParameter::name);
    if (parameter != parameters.end() && parameter->fields) {
      std::string fields;
      for (const SourceField& field : *parameter->fields) fields += (fields.empty() ? "" : ", ") + field.name;
      throw InputError("--arg " + name + ": struct " + parameter->type + " has no field '" +
                       name.substr(holder.size() + 1) + "' (fields: " + fields + ")");
    }
    if (parameter != parameters.end()) {
      throw InputError("--arg " + name + ": kernel parameter '" + holder + "' is " +
                       (parameter->type.empty() ? "a scalar" : parameter->type) + ", not a struct: give --arg " +
                       holder + "=VALUE");
    }
    throw InputError("--arg " + name + ": the entry has no parameter '" + holder +
                     "' (parameters: " + listed(parameters) + ")");
  }
  return values;
}

std::vector<Bytes> values_in_order(const std::vector<PtxParam>& compiled, const KernelSpec& spec,
                                   const std::vector<std::uint64_t>& bases) {
  if (!spec.value_args.empty()) {
    throw InputError("--arg " + spec.value_args.front().name +
                     ": the entry's parameters could not be read from the source, so " +
                     "floating-point and struct args cannot be matched to them; give integers, in order");
  }
  std::vector<Bytes> values;
  std::size_t next_buffer = 0, next_arg = 0;
  for (const PtxParam& parameter : compiled) {
    Bytes bytes(static_cast<std::size_t>(parameter.bytes), 0);
    const int size = std::min<int>(8, static_cast<int>(parameter.bytes));
    if (parameter.bytes == 8 && next_buffer < bases.size()) {
      put_little_endian(bytes, 0, bases[next_buffer++], size);
    } else if (next_arg < spec.args.size()) {
      put_little_endian(bytes, 0, static_cast<std::uint64_t>(spec.args[next_arg++].value), size);
    } else {
      throw InputError("the entry's parameters could not be read from the source, and its " +
                       std::to_string(compiled.size()) + " parameters outnumber the " + std::to_string(bases.size()) +
                       " buffers and " + std::to_string(spec.args.size()) + " args given (in order)");
    }
    values.push_back(std::move(bytes));
  }
  return values;
}

} // namespace

std::vector<std::uint64_t> buffer_base_addresses(const std::vector<std::int64_t>& buffer_bytes) {
  std::vector<std::uint64_t> bases;
  std::uint64_t next = kFirstBufferAddress;
  for (const std::int64_t bytes : buffer_bytes) {
    bases.push_back(next);
    const std::uint64_t rounded =
        (static_cast<std::uint64_t>(bytes) + kBufferAlignmentBytes - 1) / kBufferAlignmentBytes * kBufferAlignmentBytes;
    const std::uint64_t guarded = std::max(rounded, kBufferAlignmentBytes) * 2; // the buffer, then its guard gap
    if (rounded > (std::uint64_t{1} << 62) || __builtin_add_overflow(next, guarded, &next))
      throw InputError("--buffer: the buffers do not fit a 64-bit address space");
  }
  return bases;
}

std::vector<std::vector<std::uint8_t>> kernel_parameter_values(
    const std::vector<PtxParam>& parameters, const std::optional<std::vector<SourceParameter>>& source_parameters,
    const KernelSpec& spec, const EvaluatedSpec& evaluated, const std::vector<std::uint64_t>& buffer_bases) {
  if (source_parameters && source_parameters->size() == parameters.size()) {
    return values_by_name(parameters, *source_parameters, spec, evaluated, buffer_bases);
  }
  return values_in_order(parameters, spec, buffer_bases);
}

} // namespace cachewise::frontend
