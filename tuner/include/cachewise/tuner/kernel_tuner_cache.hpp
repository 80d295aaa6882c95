// Kernel Tuner's cache file (schema 1.0.0), both ways: cachewise::tuner results written as one,
// so a user can compare with Kernel Tuner or continue there, and a file Kernel Tuner wrote read
// back, to compare the model's ranking with its measurements or to resume from them
// (docs/tuner.md has the mapping).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/model/search_space.hpp"
#include "cachewise/tuner/results.hpp"

namespace cachewise::tuner {

/// One configuration of a Kernel Tuner cache file.
struct KernelTunerEntry {
  std::string key; ///< "16,4,0": the values in tune_params_keys order, comma-joined
  /// The tune_params_keys values as Kernel Tuner prints them ("16", "True", "alg_1"), and as
  /// integers where they are (an integral number).
  std::vector<std::string> value_texts;
  std::vector<std::optional<std::int64_t>> values;
  std::optional<double> time_ms; ///< "time"; empty when the configuration failed
  std::vector<double> times_ms;  ///< "times": every benchmark sample in ms; may be empty
  /// Why it has no time: "InvalidConfig" (Kernel Tuner skipped it), "CompilationFailedConfig",
  /// "RuntimeFailedConfig", "ErrorConfig", or "time 1e20" (a failure before Kernel Tuner 0.4.3).
  std::string error;
  std::string json; ///< the entry as it was in the file, for writing it back unchanged
};

struct KernelTunerCache {
  std::string device_name;
  std::string kernel_name;
  std::string problem_size;            ///< as JSON text: "[4096,4096]", "100", "\"callable\""
  std::vector<std::string> parameters; ///< tune_params_keys, in order
  std::string objective = "time";
  std::vector<KernelTunerEntry> entries; ///< by key, in byte order
  bool complete = true;                  ///< false: the closing braces were missing (a run still writing, or killed)

  const KernelTunerEntry* find(std::string_view key) const;
};

/// Reads the text of a cache file as Kernel Tuner does: a file without its closing braces (a
/// run still writing, or killed) is closed first, and a last line cut mid-write is dropped. A
/// failed entry is one with a field holding one of Kernel Tuner's error names, or a "time" of
/// 1e20 or more. Throws InputError "<where>: ..." naming the first problem: not JSON, no
/// "cache" object or "tune_params_keys" list, an entry without a parameter or without a time,
/// a time that is not a positive number.
KernelTunerCache parse_kernel_tuner_cache(std::string_view text, const std::string& where);
/// parse_kernel_tuner_cache of a file; InputError when it cannot be read.
KernelTunerCache load_kernel_tuner_cache(const std::filesystem::path& path);

struct KernelTunerCacheInfo {
  std::string device_name;
  std::string kernel_name;
  std::vector<std::int64_t> problem_size; ///< the size bucket's arg values, in order
  std::string timestamp;                  ///< ISO-8601 UTC, for every entry
};

/// Throws InputError "<where>: ..." unless `cache` holds this device's, kernel's and problem
/// size's measurements of `space`'s parameters in its order, as Kernel Tuner requires before it
/// continues from a cache (a problem size n equals [n]).
void check_cache_continues(const KernelTunerCache& cache, const KernelTunerCacheInfo& info, const SearchSpace& space,
                           const std::string& where);

/// {"schema_version": "1.0.0", "device_name", "kernel_name", "problem_size", "tune_params_keys"
/// (the space's parameters in order), "tune_params", "objective": "time", "cache": {"16,4,0":
/// {"TILE_DIM": 16, ..., "time": median ms, "times": [samples ms], ...}}}. A failed candidate's
/// "time" is "CompilationFailedConfig" or "RuntimeFailedConfig", as Kernel Tuner writes.
/// `resumed`: the cache the run resumed from; its entries this run did not measure again are
/// written as they were, those it did not visit too.
nlohmann::json kernel_tuner_cache(const TuningResult& result, const SearchSpace& space,
                                  const KernelTunerCacheInfo& info, const KernelTunerCache* resumed = nullptr);

} // namespace cachewise::tuner
