// cachewise::tuner tune results: what `advisor tune --json` writes and `advisor merge-tuned`
// reads back: the run (scope, parameter space, device, profile, strategy) and each size
// bucket's pick, with the model's static pick beside it. One place owns the file's keys.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cachewise/model/problem.hpp"
#include "cachewise/tuner/devices.hpp"

namespace cachewise::tuner {

/// A config and its time: the run's pick of a bucket, or the model's.
struct TunedPick {
  Config config;
  double time_ms = 0.0;
};

/// One size bucket of a run.
struct TunedSize {
  std::vector<std::pair<std::string, std::int64_t>> sizes; ///< "bucket": [{"name": "n", "value": 1024}, ...]
  TunedPick pick;                                          ///< "config", "time_ms": measured, or static when not
  std::string note;                                        ///< "note": how the pick was made
  std::optional<TunedPick> static_pick;                    ///< "static": the model's pick (none: it could not rank)
  /// What the run records beside them, under its own keys: a family's "problem", "n",
  /// "feasible", "time_us", "results" (results_to_json), "convergence"; a user kernel's "size",
  /// "ranked", "rejected", "results".
  nlohmann::json record = nlohmann::json::object();
};

/// One `advisor tune --json` file.
struct TuneResults {
  std::optional<std::string> cachewise_version;         ///< "cachewise_version": a family's run
  std::optional<std::string> kernel;                    ///< "kernel": a user kernel's "ENTRY in FILE"
  std::string scope;                                    ///< the header's namespace: "transpose_f32", "transpose_tiled"
  nlohmann::json parameters = nlohmann::json::object(); ///< {"TILE_DIM": [16, 32, 64], ...}: the parameter space
  bool measured = false;
  std::string device_name;              ///< "device": measured only
  int compute_capability = 0;           ///< measured only; 0: unknown
  std::vector<MeasuringDevice> devices; ///< "devices": those that measured
  std::string profile;                  ///< the profile that ranked the candidates
  std::string strategy;
  std::vector<TunedSize> sizes;
};

nlohmann::json tune_results_to_json(const TuneResults& results);
/// Throws InputError naming the missing or malformed field; `source` names the file in it.
TuneResults tune_results_from_json(const nlohmann::json& json, const std::string& source);

/// tune_results_to_json, indented by 2, with a final newline.
void write_tune_results(const TuneResults& results, const std::filesystem::path& path);
/// Throws InputError for a file that cannot be read or is not tune results ("<path>: ...").
TuneResults read_tune_results(const std::filesystem::path& path);

} // namespace cachewise::tuner
