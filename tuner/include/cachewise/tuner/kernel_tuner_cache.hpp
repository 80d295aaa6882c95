// cachewise::tuner results as Kernel Tuner's cache file (schema 1.0.0), so a user can compare
// with Kernel Tuner or continue there (docs/tuner.md has the mapping).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/search_space.hpp"
#include "cachewise/tuner/results.hpp"

namespace cachewise::tuner {

struct KernelTunerCacheInfo {
  std::string device_name;
  std::string kernel_name;
  std::vector<std::int64_t> problem_size; ///< the size bucket's arg values, in order
  std::string timestamp;                  ///< ISO-8601 UTC, for every entry
};

/// {"schema_version": "1.0.0", "device_name", "kernel_name", "problem_size", "tune_params_keys"
/// (the space's parameters in order), "tune_params", "objective": "time", "cache": {"16,4,0":
/// {"TILE_DIM": 16, ..., "time": median ms, "times": [samples ms], ...}}}. A failed candidate's
/// "time" is "CompilationFailedConfig" or "RuntimeFailedConfig", as Kernel Tuner writes.
nlohmann::json kernel_tuner_cache(const TuningResult& result, const advisor::SearchSpace& space, const KernelTunerCacheInfo& info);

} // namespace cachewise::tuner
