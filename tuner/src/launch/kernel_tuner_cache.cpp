// Kernel Tuner's cache-file JSON from a tuning run.
#include "cachewise/tuner/kernel_tuner_cache.hpp"

#include <nlohmann/json.hpp>

namespace cachewise::tuner {

nlohmann::json kernel_tuner_cache(const TuningResult& result, const SearchSpace& space,
                                  const KernelTunerCacheInfo& info, const KernelTunerCache* resumed) {
  nlohmann::ordered_json keys = nlohmann::ordered_json::array();
  nlohmann::ordered_json tune_params = nlohmann::ordered_json::object();
  for (const auto& [name, values] : space.parameters()) {
    keys.push_back(name);
    tune_params[name] = values;
  }
  nlohmann::ordered_json cache = nlohmann::ordered_json::object();
  if (resumed != nullptr) {
    for (const KernelTunerEntry& entry : resumed->entries) cache[entry.key] = nlohmann::ordered_json::parse(entry.json);
  }
  for (const Evaluation& evaluation : result.evaluations) {
    std::string key;
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    for (const auto& [name, values] : space.parameters()) {
      const std::int64_t value = evaluation.config.values().at(name);
      key += (key.empty() ? "" : ",") + std::to_string(value);
      entry[name] = value;
    }
    // Taken from the resumed cache and not measured again: its entry stays as it was.
    if (resumed != nullptr && evaluation.from_journal && evaluation.rounds == 1 && resumed->find(key) != nullptr)
      continue;
    double benchmark_ms = 0.0;
    for (const double sample : evaluation.samples_ms) benchmark_ms += sample;
    if (evaluation.ok) {
      entry["time"] = evaluation.time_ms.median;
      entry["times"] = evaluation.samples_ms;
    } else {
      const bool compile = evaluation.failure.find("does not compile") != std::string::npos;
      entry["time"] = compile ? "CompilationFailedConfig" : "RuntimeFailedConfig";
      entry["times"] = nlohmann::ordered_json::array();
    }
    // cachewise does not time compilation, verification or its own work per candidate.
    entry["compile_time"] = 0.0;
    entry["verification_time"] = 0.0;
    entry["benchmark_time"] = benchmark_ms;
    entry["strategy_time"] = 0.0;
    entry["framework_time"] = 0.0;
    entry["timestamp"] = info.timestamp;
    cache[key] = std::move(entry);
  }
  const nlohmann::ordered_json json = {{"schema_version", "1.0.0"},
                                       {"device_name", info.device_name},
                                       {"kernel_name", info.kernel_name},
                                       {"problem_size", info.problem_size},
                                       {"tune_params_keys", keys},
                                       {"tune_params", tune_params},
                                       {"objective", "time"},
                                       {"cache", cache}};
  return nlohmann::json::parse(json.dump()); // nlohmann::json sorts keys; Kernel Tuner reads by key
}

} // namespace cachewise::tuner
