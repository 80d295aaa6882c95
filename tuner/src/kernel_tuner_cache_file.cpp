// Reading Kernel Tuner's cache file the way Kernel Tuner reads it (kernel_tuner/util.py:
// read_cache, correct_open_cache).
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cachewise/model/strict_json.hpp"
#include "cachewise/tuner/kernel_tuner_cache.hpp"

namespace cachewise::tuner {
namespace {

/// The names Kernel Tuner writes in place of a value when a configuration fails.
constexpr std::array<std::string_view, 4> kErrorNames = {"ErrorConfig", "InvalidConfig", "CompilationFailedConfig",
                                                         "RuntimeFailedConfig"};
/// Kernel Tuner before 0.4.3 wrote a failed configuration's time as 1e20.
constexpr double kOldFailureTimeMs = 1e20;

bool is_error_name(const nlohmann::json& value) {
  if (!value.is_string()) return false;
  const auto& text = value.get_ref<const std::string&>();
  for (const std::string_view name : kErrorNames) {
    if (text == name) return true;
  }
  return false;
}

/// Kernel Tuner's correct_open_cache: a file that does not end in its closing braces gets them,
/// after any trailing comma.
std::string closed(std::string_view text) {
  std::string closed_text(text);
  while (!closed_text.empty() && std::isspace(static_cast<unsigned char>(closed_text.back())) != 0)
    closed_text.pop_back();
  if (!closed_text.empty() && closed_text.back() == ',') closed_text.pop_back();
  return closed_text + "}\n}";
}

/// The file's JSON: as it is, else closed, else closed without its last (half-written) line.
nlohmann::json parse_cache_text(std::string_view text, const std::string& where, bool& complete) try {
  complete = true;
  nlohmann::json json = parse_strict_json(text, false);
  if (!json.is_discarded()) return json;
  complete = false;
  json = parse_strict_json(closed(text), false);
  if (!json.is_discarded()) return json;
  std::string_view trimmed = text;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())) != 0) trimmed.remove_suffix(1);
  const std::size_t last_line = trimmed.rfind('\n');
  if (last_line != std::string_view::npos) {
    json = parse_strict_json(closed(trimmed.substr(0, last_line)), false);
    if (!json.is_discarded()) return json;
  }
  throw InputError("not JSON, nor a Kernel Tuner cache file cut short while being written");
} catch (const InputError& error) { // a duplicate key, or the last throw above
  throw InputError(where + ": " + error.what());
}

/// Python's str() of a parameter value, as Kernel Tuner joins them into keys.
std::string python_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  return value.dump();
}

std::optional<std::int64_t> integer_value(const nlohmann::json& value) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return value.get<std::int64_t>();
  }
  if (value.is_number_float()) {
    const double number = value.get<double>();
    // 2^63 as a double: the first value past int64's range.
    if (std::isfinite(number) && number == std::floor(number) && std::abs(number) < 9.2233720368547758e18) {
      return static_cast<std::int64_t>(number);
    }
  }
  return std::nullopt;
}

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(key);
  while (std::getline(in, part, ',')) parts.push_back(part);
  if (!key.empty() && key.back() == ',') parts.emplace_back();
  return parts;
}

KernelTunerEntry parse_entry(const std::string& key, const nlohmann::json& json,
                             const std::vector<std::string>& parameters, const std::string& where) {
  const std::string here = where + ": cache entry \"" + key + "\"";
  if (!json.is_object()) throw InputError(here + " is not an object");
  KernelTunerEntry entry;
  entry.key = key;
  entry.json = json.dump();
  // The values from the entry's fields, else from the key (files that store only the key).
  const std::vector<std::string> key_parts = split_key(key);
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const auto field = json.find(parameters[i]);
    if (field != json.end()) {
      entry.value_texts.push_back(python_text(*field));
      entry.values.push_back(integer_value(*field));
    } else if (key_parts.size() == parameters.size()) {
      entry.value_texts.push_back(key_parts[i]);
      entry.values.push_back(integer_value(nlohmann::json::parse(key_parts[i], nullptr, false)));
    } else {
      throw InputError(here + " has no value for tune parameter \"" + parameters[i] + "\"");
    }
  }
  for (const nlohmann::json& value : json) {
    if (is_error_name(value)) entry.error = value.get<std::string>();
  }
  if (!entry.error.empty()) return entry;
  const auto time = json.find("time");
  if (time == json.end()) throw InputError(here + " has no \"time\" and no error");
  if (!time->is_number()) throw InputError(here + ": \"time\" is " + time->dump() + ", not a number or an error name");
  const double time_ms = time->get<double>();
  if (!(time_ms > 0.0) || !std::isfinite(time_ms))
    throw InputError(here + ": \"time\" must be a positive number of ms, got " + time->dump());
  if (time_ms >= kOldFailureTimeMs) {
    entry.error = "time 1e20";
    return entry;
  }
  entry.time_ms = time_ms;
  if (const auto times = json.find("times"); times != json.end()) {
    if (!times->is_array()) throw InputError(here + ": \"times\" is not a list");
    for (const nlohmann::json& sample : *times) {
      if (!sample.is_number() || !(sample.get<double>() > 0.0) || !std::isfinite(sample.get<double>())) {
        throw InputError(here + ": \"times\" holds " + sample.dump() + ", not a positive number of ms");
      }
      entry.times_ms.push_back(sample.get<double>());
    }
  }
  return entry;
}

std::string string_field(const nlohmann::json& json, const char* name, const std::string& where) {
  const auto field = json.find(name);
  if (field == json.end()) return {};
  if (!field->is_string()) throw InputError(where + ": \"" + name + "\" is not a string");
  return field->get<std::string>();
}

} // namespace

const KernelTunerEntry* KernelTunerCache::find(std::string_view key) const {
  for (const KernelTunerEntry& entry : entries) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

KernelTunerCache parse_kernel_tuner_cache(std::string_view text, const std::string& where) {
  KernelTunerCache cache;
  const nlohmann::json json = parse_cache_text(text, where, cache.complete);
  if (!json.is_object()) throw InputError(where + ": not a Kernel Tuner cache file (not a JSON object)");
  const auto keys = json.find("tune_params_keys");
  if (keys == json.end() || !keys->is_array())
    throw InputError(where + ": not a Kernel Tuner cache file (no \"tune_params_keys\" list)");
  for (const nlohmann::json& name : *keys) {
    if (!name.is_string()) throw InputError(where + ": \"tune_params_keys\" holds " + name.dump() + ", not a name");
    cache.parameters.push_back(name.get<std::string>());
  }
  if (cache.parameters.empty()) throw InputError(where + ": \"tune_params_keys\" is empty");
  const auto entries = json.find("cache");
  if (entries == json.end() || !entries->is_object())
    throw InputError(where + ": not a Kernel Tuner cache file (no \"cache\" object)");
  cache.device_name = string_field(json, "device_name", where);
  cache.kernel_name = string_field(json, "kernel_name", where);
  if (const std::string objective = string_field(json, "objective", where); !objective.empty())
    cache.objective = objective;
  if (const auto size = json.find("problem_size"); size != json.end()) cache.problem_size = size->dump();
  for (const auto& [key, entry] : entries->items())
    cache.entries.push_back(parse_entry(key, entry, cache.parameters, where));
  return cache;
}

void check_cache_continues(const KernelTunerCache& cache, const KernelTunerCacheInfo& info, const SearchSpace& space,
                           const std::string& where) {
  const auto differs = [&](const std::string& what, const std::string& cached, const std::string& here) {
    throw InputError(where + ": the cache holds another " + what + " (" + cached + ", not " + here + ")");
  };
  if (cache.device_name != info.device_name) differs("device", cache.device_name, info.device_name);
  if (cache.kernel_name != info.kernel_name) differs("kernel", cache.kernel_name, info.kernel_name);
  const std::string size = nlohmann::json(info.problem_size).dump();
  const bool one_number =
      info.problem_size.size() == 1 && cache.problem_size == std::to_string(info.problem_size.front());
  if (cache.problem_size != size && !one_number) differs("problem_size", cache.problem_size, size);
  std::string names, cached_names;
  for (const auto& [name, values] : space.parameters()) names += (names.empty() ? "" : ",") + name;
  for (const std::string& name : cache.parameters) cached_names += (cached_names.empty() ? "" : ",") + name;
  if (names != cached_names) differs("tune_params_keys", cached_names, names);
}

KernelTunerCache load_kernel_tuner_cache(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot read the Kernel Tuner cache file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_kernel_tuner_cache(text.str(), path.string());
}

} // namespace cachewise::tuner
