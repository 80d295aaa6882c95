#include <gtest/gtest.h>

#include "cachewise/tuner.hpp"
#include "fake_workload.hpp"

namespace cachewise::tuner {
namespace {

/// An exhaustive run with the given medians (nullopt = failed) and predictions.
TuningResult synthetic(const std::vector<std::optional<double>>& times_ms, const std::vector<double>& predicted) {
  TuningResult result;
  result.problem = testing::fake_problem();
  for (std::size_t i = 0; i < times_ms.size(); ++i) {
    Evaluation e;
    e.config = Config{{"i", static_cast<std::int64_t>(i)}};
    e.ok = times_ms[i].has_value();
    if (e.ok) e.time_ms.median = *times_ms[i];
    e.predicted = predicted[i];
    if (e.ok && (!result.best || *times_ms[i] < result.evaluations[*result.best].time_ms.median)) result.best = i;
    result.evaluations.push_back(e);
  }
  return result;
}

// Six candidates: 1.0 and 1.005 are within 99% of the best (1/1.005 = 0.995); 1.2 is not.
const std::vector<std::optional<double>> kTimes = {1.0, 1.005, 1.2, 1.5, 2.0, std::nullopt};

TEST(Convergence, CountsGoodCandidatesAndTheRandomExpectation) {
  const ConvergenceReport report = convergence(synthetic(kTimes, {3, 5, 1, 2, 4, 0}), 0.99, 2);
  EXPECT_EQ(report.candidates, 5);
  EXPECT_DOUBLE_EQ(report.best_ms, 1.0);
  EXPECT_EQ(report.good_candidates, 2);
  // Predicted order: failed, 1.2, 1.5, 1.0, ... -> the first good one is 4th.
  EXPECT_EQ(report.model_evaluations_to_good, 4);
  // (N + 1) / (g + 1) with N = 6 candidates (the failed one costs a draw too), g = 2.
  EXPECT_DOUBLE_EQ(report.random_expected_evaluations, 7.0 / 3.0);
}

TEST(Convergence, ReplaysTheWideningRuleThatStopsTooEarly) {
  // Batch 2 measures [failed, 1.2]: no inversion, so the rule stops at 2 with 1/1.2 of the best.
  const ConvergenceReport report = convergence(synthetic(kTimes, {3, 5, 1, 2, 4, 0}), 0.99, 2);
  EXPECT_EQ(report.model_strategy_evaluations, 2);
  EXPECT_DOUBLE_EQ(report.model_strategy_fraction_of_best, 1.0 / 1.2);
}

TEST(Convergence, ReplaysTheWideningRuleThatWidensToTheBest) {
  // Predicted order: 1.5, 1.2, failed | 1.0, 2.0, 1.005. Batch 3: 1.2 beats 1.5 -> widen; the
  // second batch's 1.0 beats 1.2 -> widen, but the space is done: 6 evaluations, the best found.
  const ConvergenceReport report = convergence(synthetic(kTimes, {3, 5, 1, 0, 4, 2}), 0.99, 3);
  EXPECT_EQ(report.model_evaluations_to_good, 4);
  EXPECT_EQ(report.model_strategy_evaluations, 6);
  EXPECT_DOUBLE_EQ(report.model_strategy_fraction_of_best, 1.0);
}

TEST(Convergence, AnAccurateModelNeedsOneEvaluation) {
  const ConvergenceReport report = convergence(synthetic(kTimes, {0, 1, 2, 3, 4, 5}), 0.99, 3);
  EXPECT_EQ(report.model_evaluations_to_good, 1);
  EXPECT_EQ(report.model_strategy_evaluations, 3);
  EXPECT_DOUBLE_EQ(report.model_strategy_fraction_of_best, 1.0);
}

TEST(Convergence, RejectsMissingPredictionsAndAllFailed) {
  TuningResult missing = synthetic(kTimes, {0, 1, 2, 3, 4, 5});
  missing.evaluations[2].predicted.reset();
  EXPECT_THROW(convergence(missing), InputError);
  EXPECT_THROW(convergence(synthetic({std::nullopt}, {0})), InputError);
}

} // namespace
} // namespace cachewise::tuner
