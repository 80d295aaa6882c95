// How fast each strategy would have found a near-best config, computed from one exhaustive
// run: the model-ranked order is known from the predictions, the random one in expectation.
#include <algorithm>
#include <numeric>

#include <nlohmann/json.hpp>

#include "cachewise/tuner/convergence.hpp"
#include "cachewise/tuner/strategy.hpp"

namespace cachewise::tuner {

ConvergenceReport convergence(const TuningResult& exhaustive, double fraction, int batch, double noise_fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) throw InputError("convergence: fraction must be in (0, 1]");
  const std::vector<Evaluation>& evaluations = exhaustive.evaluations;
  for (const Evaluation& e : evaluations) {
    if (!e.predicted) throw InputError("convergence: " + e.config.to_string() + " has no prediction");
  }
  const Evaluation* best = exhaustive.best_evaluation();
  if (best == nullptr) throw InputError("convergence: no candidate was measured successfully");

  ConvergenceReport report;
  report.fraction = fraction;
  report.best_ms = best->time_ms.median;
  report.candidates = std::ranges::count_if(evaluations, [](const Evaluation& e) { return e.ok; });
  const auto is_good = [&](const Evaluation& e) { return e.ok && report.best_ms / e.time_ms.median >= fraction; };
  report.good_candidates = std::ranges::count_if(evaluations, is_good);

  std::vector<std::size_t> predicted_order(evaluations.size());
  std::iota(predicted_order.begin(), predicted_order.end(), std::size_t{0});
  std::ranges::stable_sort(predicted_order, {}, [&](std::size_t i) { return *evaluations[i].predicted; });
  for (std::size_t position = 0; position < predicted_order.size(); ++position) {
    if (is_good(evaluations[predicted_order[position]])) {
      report.model_evaluations_to_good = static_cast<std::int64_t>(position + 1);
      break;
    }
  }
  // Draws without replacement from N with g good: E[first good] = (N + 1) / (g + 1).
  report.random_expected_evaluations =
      static_cast<double>(evaluations.size() + 1) / static_cast<double>(report.good_candidates + 1);

  // Replay the widening rule on the recorded times.
  std::vector<std::optional<double>> times;
  for (const std::size_t i : predicted_order) {
    times.push_back(evaluations[i].ok ? std::optional(evaluations[i].time_ms.median) : std::nullopt);
  }
  const std::size_t step = static_cast<std::size_t>(std::max(batch, 1));
  std::size_t measured = std::min(step, times.size());
  while (measured < times.size()) {
    const std::vector<std::optional<double>> prefix(times.begin(),
                                                    times.begin() + static_cast<std::ptrdiff_t>(measured));
    if (model_ranked_stop_reason(prefix, batch, noise_fraction)) break;
    measured = std::min(measured + step, times.size());
  }
  report.model_strategy_evaluations = static_cast<std::int64_t>(measured);
  std::optional<double> found;
  for (std::size_t i = 0; i < measured; ++i) {
    if (times[i] && (!found || *times[i] < *found)) found = times[i];
  }
  report.model_strategy_fraction_of_best = found ? report.best_ms / *found : 0.0;
  return report;
}

nlohmann::json convergence_to_json(const ConvergenceReport& report) {
  return {{"candidates", report.candidates},
          {"best_ms", report.best_ms},
          {"fraction", report.fraction},
          {"good_candidates", report.good_candidates},
          {"model_evaluations_to_good", report.model_evaluations_to_good},
          {"random_expected_evaluations", report.random_expected_evaluations},
          {"model_strategy_evaluations", report.model_strategy_evaluations},
          {"model_strategy_fraction_of_best", report.model_strategy_fraction_of_best}};
}

} // namespace cachewise::tuner
