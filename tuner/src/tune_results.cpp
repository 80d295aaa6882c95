// The tune results file: written by `advisor tune --json`, read by `advisor merge-tuned`.
#include "cachewise/tuner/tune_results.hpp"

#include <fstream>

#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/tuned_header.hpp"

namespace cachewise::tuner {
namespace {

nlohmann::json pick_json(const TunedPick& pick) {
  return {{"config", pick.config.to_string()}, {"time_ms", pick.time_ms}};
}

TunedPick pick_from_json(const nlohmann::json& json) {
  return {Config::parse(json.at("config").get<std::string>()), json.at("time_ms").get<double>()};
}

nlohmann::json size_json(const TunedSize& size) {
  nlohmann::json json = size.record;
  nlohmann::json bucket = nlohmann::json::array();
  for (const auto& [name, value] : size.sizes) bucket.push_back({{"name", name}, {"value", value}});
  json["bucket"] = bucket;
  json["config"] = size.pick.config.to_string();
  json["time_ms"] = size.pick.time_ms;
  json["note"] = size.note;
  if (size.static_pick) json["static"] = pick_json(*size.static_pick);
  return json;
}

TunedSize size_from_json(const nlohmann::json& json) {
  TunedSize size;
  for (const nlohmann::json& entry : json.at("bucket"))
    size.sizes.emplace_back(entry.at("name").get<std::string>(), entry.at("value").get<std::int64_t>());
  size.pick = pick_from_json(json);
  size.note = json.value("note", std::string());
  if (json.contains("static")) size.static_pick = pick_from_json(json.at("static"));
  for (const auto& [key, value] : json.items()) {
    if (key != "bucket" && key != "config" && key != "time_ms" && key != "note" && key != "static")
      size.record[key] = value;
  }
  return size;
}

} // namespace

nlohmann::json tune_results_to_json(const TuneResults& results) {
  nlohmann::json devices = nlohmann::json::array();
  for (const MeasuringDevice& device : results.devices) devices.push_back(device_to_json(device));
  nlohmann::json sizes = nlohmann::json::array();
  for (const TunedSize& size : results.sizes) sizes.push_back(size_json(size));
  nlohmann::json json = {
      {"scope", results.scope},
      {"parameters", results.parameters},
      {"compute_capability", results.measured ? nlohmann::json(results.compute_capability) : nlohmann::json()},
      {"device", results.measured ? nlohmann::json(results.device_name) : nlohmann::json()},
      {"devices", devices},
      {"measured", results.measured},
      {"profile", results.profile},
      {"strategy", results.strategy},
      {"sizes", sizes}};
  if (results.cachewise_version) json["cachewise_version"] = *results.cachewise_version;
  if (results.kernel) json["kernel"] = *results.kernel;
  return json;
}

TuneResults tune_results_from_json(const nlohmann::json& json, const std::string& source) {
  if (!json.contains("scope") || !json.contains("parameters")) {
    throw InputError(source + ": not the --json of advisor tune (no 'scope' and 'parameters')");
  }
  try {
    TuneResults results;
    results.scope = json.at("scope").get<std::string>();
    results.parameters = json.at("parameters");
    results.measured = json.at("measured").get<bool>();
    if (results.measured) results.device_name = json.at("device").get<std::string>();
    if (json.contains("compute_capability") && json.at("compute_capability").is_number()) {
      results.compute_capability = json.at("compute_capability").get<int>();
    }
    results.profile = json.value("profile", std::string());
    results.strategy = json.value("strategy", std::string());
    if (json.contains("cachewise_version")) results.cachewise_version = json.at("cachewise_version").get<std::string>();
    if (json.contains("kernel")) results.kernel = json.at("kernel").get<std::string>();
    for (const nlohmann::json& device : json.value("devices", nlohmann::json::array()))
      results.devices.push_back(device_from_json(device));
    for (const nlohmann::json& size : json.at("sizes")) results.sizes.push_back(size_from_json(size));
    if (results.sizes.empty()) throw InputError(source + ": no sizes");
    return results;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source + ": " + e.what());
  }
}

void write_tune_results(const TuneResults& results, const std::filesystem::path& path) {
  write_text_file(path, tune_results_to_json(results).dump(2) + '\n');
}

TuneResults read_tune_results(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path.string() + ": " + e.what());
  }
  return tune_results_from_json(json, path.string());
}

} // namespace cachewise::tuner
