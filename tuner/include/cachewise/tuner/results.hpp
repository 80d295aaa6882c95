// cachewise::tuner results: each candidate's measurement or failure, the run's pick, and their
// JSON form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/model/problem.hpp"
#include "cachewise/tuner/devices.hpp"
#include "cachewise/tuner/statistics.hpp"

namespace cachewise::tuner {

/// One candidate: its measurement or why it failed.
struct Evaluation {
  Config config;
  bool ok = false;
  /// Why it failed: "threw: <what>", "exited with code 3", "killed by signal 11 (Segmentation
  /// fault)", "timed out after 2000 ms", "returned a non-positive or non-finite time".
  std::string failure;
  std::vector<double> samples_ms;  ///< timed samples of every round, warm-ups excluded
  MedianEstimate time_ms;          ///< over samples_ms
  bool converged = false;          ///< the last round reached max_ci_width_fraction
  int rounds = 0;                  ///< 1 + contender re-measurements
  std::optional<double> predicted; ///< model_ranked only
  bool from_journal = false;       ///< every round of it was read from the journal
  MeasuringDevice device; ///< where samples_ms were measured (one device: a re-measurement elsewhere replaces them)
};

struct TuningResult {
  ProblemSpec problem;
  std::string strategy;
  std::int64_t space_size = 0;         ///< candidates satisfying the constraints
  std::int64_t unconstrained_size = 0; ///< product of the parameter value counts
  std::vector<Evaluation> evaluations; ///< in the order the strategy visited them
  std::optional<std::size_t> best;     ///< index into evaluations; empty when all failed
  std::string stop_reason;             ///< e.g. "space exhausted", "budget of 8 reached"
  const Evaluation* best_evaluation() const { return best ? &evaluations[*best] : nullptr; }
};

/// Reported after each evaluation (measured or read from the journal).
struct Progress {
  const Evaluation& evaluation;
  int round = 0; ///< 0 = first measurement, 1.. = contender re-measurement
  bool from_journal = false;
};

nlohmann::json results_to_json(const TuningResult& result);
/// Writes results_to_json atomically (temporary file, then rename).
void save_results_json(const TuningResult& result, const std::filesystem::path& path);

} // namespace cachewise::tuner
