#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <limits>
#include <map>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "cachewise/tuner.hpp"
#include "fake_workload.hpp"

namespace cachewise::tuner {
namespace {

Options quick_options(Isolation isolation = Isolation::in_process) {
  Options options;
  options.isolation = isolation;
  options.measurement.warmup_runs = 2;
  options.measurement.min_repeats = 5;
  options.measurement.max_repeats = 20;
  options.candidate_timeout = std::chrono::milliseconds(2000);
  return options;
}

Tuner fake_tuner(Measure measure, Strategy strategy = Strategy::exhaustive(), Options options = quick_options()) {
  Tuner tuner(testing::fake_problem(), testing::fake_space());
  tuner.set_measure(std::move(measure));
  tuner.set_strategy(std::move(strategy));
  tuner.set_options(std::move(options));
  return tuner;
}

double exact(const Config& config, std::int64_t) { return testing::fake_time_ms(config); }

TEST(Tuner, ExhaustivePicksTheFastestAndVisitsEverything) {
  Tuner tuner = fake_tuner(exact);
  const TuningResult result = tuner.tune();
  EXPECT_EQ(result.space_size, 11);
  EXPECT_EQ(result.unconstrained_size, 12);
  ASSERT_EQ(result.evaluations.size(), 11u);
  EXPECT_EQ(result.stop_reason, "space exhausted (11 candidates)");
  ASSERT_NE(result.best_evaluation(), nullptr);
  EXPECT_EQ(result.best_evaluation()->config, Config::parse("a=3,b=2"));
  EXPECT_DOUBLE_EQ(result.best_evaluation()->time_ms.median, 1.0);
  // Noise-free times: every interval is a point, nobody overlaps the leader, nothing re-measured.
  // A 95% interval needs 6 samples (2^-5 > 0.025), so min_repeats 5 still takes 6.
  for (const Evaluation& e : result.evaluations) {
    EXPECT_TRUE(e.ok);
    EXPECT_TRUE(e.converged);
    EXPECT_EQ(e.rounds, 1);
    EXPECT_EQ(e.samples_ms.size(), 6u);
  }
}

TEST(Tuner, AddParameterAndConstraintBuildTheSpace) {
  Tuner tuner(testing::fake_problem());
  tuner.add_parameter("a", {1, 2, 3, 4});
  tuner.add_parameter("b", {1, 2, 3});
  tuner.add_constraint(
      {"a", "b"}, [](const Config& c) { return c.get("a") * c.get("b") <= 9; }, "a*b <= 9");
  tuner.set_measure(exact);
  tuner.set_options(quick_options());
  EXPECT_EQ(tuner.tune().space_size, 11);
}

TEST(Tuner, WarmupThenRepeatsWithIterationIndices) {
  std::map<std::string, std::vector<std::int64_t>> iterations;
  Tuner tuner = fake_tuner([&](const Config& c, std::int64_t iteration) {
    iterations[c.to_string()].push_back(iteration);
    return testing::fake_time_ms(c);
  });
  tuner.tune();
  ASSERT_EQ(iterations.size(), 11u);
  // 2 warm-ups + 6 timed calls (a constant time converges as soon as a 95% interval exists:
  // at 6 samples), numbered 0..7.
  for (const auto& [config, seen] : iterations)
    EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7})) << config;
}

TEST(Tuner, NoisyTimesRepeatUpToTheCapAndSayNotConverged) {
  // Alternating +-25%: the interval never gets within 2% of the median.
  Tuner tuner =
      fake_tuner([](const Config& c, std::int64_t i) { return testing::fake_time_ms(c) * (i % 2 ? 1.25 : 0.75); });
  const TuningResult result = tuner.tune();
  for (const Evaluation& e : result.evaluations) {
    EXPECT_FALSE(e.converged);
    EXPECT_GE(e.samples_ms.size(), 20u);
  }
}

TEST(Tuner, CloseContendersAreMeasuredAgainBeforeThePick) {
  Tuner tuner(testing::fake_problem());
  tuner.add_parameter("a", {1, 2, 3});
  // a=1 alternates 1.0/1.2 (median 1.1, 95% interval [1.0, 1.2] over 10), a=2 alternates
  // 1.1/1.3 (median 1.2, [1.1, 1.3]): they overlap. a=3 is a constant 3 ms: clearly slower.
  tuner.set_measure([](const Config& c, std::int64_t i) {
    const std::int64_t a = c.get("a");
    if (a == 3) return 3.0;
    return (a == 1 ? 1.0 : 1.1) + (i % 2 ? 0.2 : 0.0);
  });
  Options options = quick_options();
  options.measurement.warmup_runs = 0;
  options.measurement.min_repeats = 10;
  options.measurement.max_repeats = 10;
  tuner.set_options(options);
  const TuningResult result = tuner.tune();
  ASSERT_EQ(result.evaluations.size(), 3u);
  EXPECT_EQ(result.evaluations[0].rounds, 2);
  EXPECT_EQ(result.evaluations[1].rounds, 2);
  EXPECT_EQ(result.evaluations[2].rounds, 1);
  EXPECT_EQ(result.evaluations[0].samples_ms.size(), 20u);
  EXPECT_EQ(result.evaluations[2].samples_ms.size(), 10u);
  EXPECT_EQ(result.best, std::optional<std::size_t>(0));
}

TEST(Tuner, RandomWithBudgetMeasuresThatManyInItsSeededOrder) {
  Options options = quick_options();
  options.budget = 4;
  Tuner tuner = fake_tuner(exact, Strategy::random(3), options);
  const TuningResult result = tuner.tune();
  ASSERT_EQ(result.evaluations.size(), 4u);
  EXPECT_EQ(result.stop_reason, "budget of 4 reached");
  EXPECT_EQ(result.strategy, "random (seed 3)");
  const std::vector<Config> candidates = testing::fake_space().enumerate();
  const std::vector<std::size_t> order = visiting_order(candidates, Strategy::random(3));
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(result.evaluations[i].config, candidates[order[i]]);
}

TEST(Tuner, ModelRankedWithAnAccuratePredictionMeasuresOneBatch) {
  Tuner tuner = fake_tuner(exact, Strategy::model_ranked(testing::fake_time_ms));
  const TuningResult result = tuner.tune();
  ASSERT_EQ(result.evaluations.size(), 3u);
  EXPECT_EQ(result.stop_reason, "measured order agrees with the prediction");
  EXPECT_EQ(result.best_evaluation()->config, Config::parse("a=3,b=2"));
  EXPECT_EQ(result.evaluations[0].predicted, std::optional(1.0));
}

TEST(Tuner, ModelRankedWidensWhenTheMeasuredOrderDisagrees) {
  // Predicted first: a=3,b=1 (1.5 ms), a=2,b=2 (2 ms), a=3,b=2 (1 ms): the third beats the
  // first, so it widens to the next three by fake time (a=3,b=3 1.5, a=4,b=2 2, a=2,b=1 2.5),
  // which beat nothing: stop after 6.
  const auto predict = [](const Config& c) {
    const std::string text = c.to_string();
    if (text == "a=3,b=1") return 0.0;
    if (text == "a=2,b=2") return 1.0;
    if (text == "a=3,b=2") return 2.0;
    return 10.0 + testing::fake_time_ms(c);
  };
  Tuner tuner = fake_tuner(exact, Strategy::model_ranked(predict));
  const TuningResult result = tuner.tune();
  ASSERT_EQ(result.evaluations.size(), 6u);
  EXPECT_EQ(result.stop_reason, "widening found nothing faster than the leader");
  EXPECT_EQ(result.evaluations[3].config, Config::parse("a=3,b=3"));
  EXPECT_EQ(result.best_evaluation()->config, Config::parse("a=3,b=2"));
}

TEST(Tuner, FailingCandidatesAreIsolatedAndReported) {
  const auto measure = [](const Config& c, std::int64_t) -> double {
    const std::string text = c.to_string();
    // SIG_DFL first: a sanitizer's handler would otherwise turn the signals into exit(1).
    if (text == "a=1,b=1") {
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
    }
    if (text == "a=1,b=2") throw std::runtime_error("launch failed");
    if (text == "a=1,b=3") ::_exit(4);
    if (text == "a=2,b=1") {
      std::signal(SIGABRT, SIG_DFL);
      std::abort();
    }
    if (text == "a=2,b=3") std::this_thread::sleep_for(std::chrono::seconds(30));
    if (text == "a=4,b=1") return std::numeric_limits<double>::quiet_NaN();
    return testing::fake_time_ms(c);
  };
  Options options = quick_options(Isolation::child_process);
  options.candidate_timeout = std::chrono::milliseconds(500);
  Tuner tuner = fake_tuner(measure, Strategy::exhaustive(), options);
  const TuningResult result = tuner.tune();
  std::map<std::string, std::string> failures;
  for (const Evaluation& e : result.evaluations) {
    if (!e.ok) failures[e.config.to_string()] = e.failure;
  }
  ASSERT_EQ(failures.size(), 6u);
  EXPECT_EQ(failures["a=1,b=1"].rfind("killed by signal 11", 0), 0u) << failures["a=1,b=1"];
  EXPECT_EQ(failures["a=1,b=2"], "threw: launch failed");
  EXPECT_EQ(failures["a=1,b=3"], "exited with code 4");
  EXPECT_EQ(failures["a=2,b=1"].rfind("killed by signal 6", 0), 0u) << failures["a=2,b=1"];
  EXPECT_EQ(failures["a=2,b=3"], "timed out after 500 ms");
  EXPECT_EQ(failures["a=4,b=1"].rfind("returned a non-positive or non-finite time", 0), 0u) << failures["a=4,b=1"];
  EXPECT_EQ(result.best_evaluation()->config, Config::parse("a=3,b=2"));
}

TEST(Tuner, AllFailedLeavesNoBest) {
  Tuner tuner = fake_tuner([](const Config&, std::int64_t) -> double { throw std::runtime_error("no device"); });
  const TuningResult result = tuner.tune();
  EXPECT_EQ(result.best_evaluation(), nullptr);
  EXPECT_EQ(result.evaluations.size(), 11u);
}

TEST(Tuner, ReportsProgressOncePerEvaluation) {
  Tuner tuner = fake_tuner(exact);
  int reports = 0;
  tuner.on_progress([&](const Progress& progress) {
    ++reports;
    EXPECT_EQ(progress.round, 0);
    EXPECT_FALSE(progress.from_journal);
  });
  tuner.tune();
  EXPECT_EQ(reports, 11);
}

TEST(Tuner, RejectsMissingMeasureEmptySpaceAndBadPolicy) {
  Tuner no_measure(testing::fake_problem(), testing::fake_space());
  EXPECT_THROW(no_measure.tune(), InputError);

  Tuner empty(testing::fake_problem());
  empty.add_parameter("a", {1, 2});
  empty.add_constraint(
      {"a"}, [](const Config&) { return false; }, "never");
  empty.set_measure(exact);
  EXPECT_THROW(empty.tune(), InputError);

  Options bad = quick_options();
  bad.measurement.max_repeats = 2;
  Tuner bad_policy = fake_tuner(exact, Strategy::exhaustive(), bad);
  EXPECT_THROW(bad_policy.tune(), InputError);
}

} // namespace
} // namespace cachewise::tuner
