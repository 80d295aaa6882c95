// cachewise::tuner convergence: how many evaluations each strategy needs to reach a fraction of
// the best.
#pragma once

#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/tuner/results.hpp"

namespace cachewise::tuner {

struct ConvergenceReport {
  std::int64_t candidates = 0; ///< measured successfully in the exhaustive run
  double best_ms = 0.0;
  double fraction = 0.99;
  std::int64_t good_candidates = 0; ///< with best_ms / time >= fraction
  /// Position (1-based) in predicted order of the first good candidate: what model-ranked
  /// needs at the least.
  std::int64_t model_evaluations_to_good = 0;
  /// Expected draws without replacement until the first good one: (N + 1) / (good + 1).
  double random_expected_evaluations = 0.0;
  /// What the model-ranked widening rule spends on these times, and the fraction of the best
  /// it ends with (best_ms / its best).
  std::int64_t model_strategy_evaluations = 0;
  double model_strategy_fraction_of_best = 0.0;
};

/// From an exhaustive run with predictions (Evaluation::predicted set on successes); throws
/// InputError when none succeeded or a prediction is missing.
ConvergenceReport convergence(const TuningResult& exhaustive, double fraction = 0.99, int batch = 3,
                              double noise_fraction = 0.01);
nlohmann::json convergence_to_json(const ConvergenceReport& report);

} // namespace cachewise::tuner
