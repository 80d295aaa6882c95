#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "cachewise/tuner.hpp"
#include "fake_workload.hpp"

namespace cachewise::tuner {
namespace {

TEST(VisitingOrder, ExhaustiveKeepsSpaceOrder) {
  const std::vector<Config> candidates = testing::fake_space().enumerate();
  const std::vector<std::size_t> order = visiting_order(candidates, Strategy::exhaustive());
  std::vector<std::size_t> identity(candidates.size());
  std::iota(identity.begin(), identity.end(), std::size_t{0});
  EXPECT_EQ(order, identity);
}

TEST(VisitingOrder, RandomIsASeededPermutation) {
  const std::vector<Config> candidates = testing::fake_space().enumerate();
  const std::vector<std::size_t> first = visiting_order(candidates, Strategy::random(7));
  EXPECT_EQ(first, visiting_order(candidates, Strategy::random(7)));
  EXPECT_NE(first, visiting_order(candidates, Strategy::random(8)));
  std::vector<std::size_t> sorted = first;
  std::ranges::sort(sorted);
  std::vector<std::size_t> identity(candidates.size());
  std::iota(identity.begin(), identity.end(), std::size_t{0});
  EXPECT_EQ(sorted, identity);
}

TEST(VisitingOrder, ModelRankedSortsByPredictionKeepingTiesInSpaceOrder) {
  const std::vector<Config> candidates = {Config::parse("a=1"), Config::parse("a=2"), Config::parse("a=3"),
                                          Config::parse("a=4")};
  // Predictions 3, 1, 3, 0 -> a=4, a=2, then the tie a=1, a=3 in space order.
  const auto predict = [](const Config& c) {
    return std::vector<double>{3, 1, 3, 0}[static_cast<std::size_t>(c.get("a") - 1)];
  };
  EXPECT_EQ(visiting_order(candidates, Strategy::model_ranked(predict)), (std::vector<std::size_t>{3, 1, 0, 2}));
  EXPECT_THROW(visiting_order(candidates, Strategy::model_ranked({})), InputError);
}

TEST(ModelRankedStop, FirstBatchInPredictedOrderStops) {
  EXPECT_EQ(model_ranked_stop_reason({1.0, 1.2, 1.5}, 3, 0.01), "measured order agrees with the prediction");
  // Within noise (1% of 1.0) an inversion does not count.
  EXPECT_TRUE(model_ranked_stop_reason({1.0, 0.995, 1.5}, 3, 0.01).has_value());
}

TEST(ModelRankedStop, FirstBatchInversionWidens) {
  EXPECT_FALSE(model_ranked_stop_reason({1.0, 0.8, 1.5}, 3, 0.01).has_value());
}

TEST(ModelRankedStop, AllFailedWidens) {
  EXPECT_FALSE(model_ranked_stop_reason({std::nullopt, std::nullopt, std::nullopt}, 3, 0.01).has_value());
}

TEST(ModelRankedStop, WideningStopsWhenTheNewBatchFindsNothingFaster) {
  // Leader before the second batch is 0.8; the batch's best 0.85 is not faster.
  EXPECT_EQ(model_ranked_stop_reason({1.0, 0.8, 1.5, 0.85, 2.0, std::nullopt}, 3, 0.01),
            "widening found nothing faster than the leader");
  // 0.7 beats 0.8: keep widening.
  EXPECT_FALSE(model_ranked_stop_reason({1.0, 0.8, 1.5, 0.85, 0.7, 2.0}, 3, 0.01).has_value());
}

TEST(StrategyKind, ParsesCliSpellings) {
  EXPECT_EQ(parse_strategy_kind("model"), StrategyKind::model_ranked);
  EXPECT_EQ(parse_strategy_kind("random"), StrategyKind::random);
  EXPECT_EQ(parse_strategy_kind("exhaustive"), StrategyKind::exhaustive);
  EXPECT_THROW(parse_strategy_kind("greedy"), InputError);
}

} // namespace
} // namespace cachewise::tuner
