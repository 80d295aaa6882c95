#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "cachewise/tuner.hpp"

namespace cachewise::tuner {
namespace {

TEST(EstimateMedian, OddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(estimate_median({3.0, 1.0, 2.0}).median, 2.0);
  EXPECT_DOUBLE_EQ(estimate_median({4.0, 1.0, 3.0, 2.0}).median, 2.5);
}

// n = 10: P(B <= 1) = 11/1024 = 0.0107 <= 0.025 < P(B <= 2) = 56/1024, so l = 2 and the 95%
// interval is [x_(2), x_(9)].
TEST(EstimateMedian, TenSamplesGiveSecondAndNinthOrderStatistics) {
  const MedianEstimate estimate = estimate_median({10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, 0.95);
  EXPECT_DOUBLE_EQ(estimate.median, 5.5);
  EXPECT_DOUBLE_EQ(estimate.ci_low, 2.0);
  EXPECT_DOUBLE_EQ(estimate.ci_high, 9.0);
  EXPECT_NEAR(estimate.ci_width_fraction(), 7.0 / 5.5, 1e-12);
}

// n = 6: P(B <= 0) = 1/64 = 0.0156 <= 0.025, so [x_(1), x_(6)]; n = 5: 1/32 > 0.025, no interval.
TEST(EstimateMedian, TooFewSamplesGiveAnUnboundedInterval) {
  const MedianEstimate six = estimate_median({1, 2, 3, 4, 5, 6});
  EXPECT_DOUBLE_EQ(six.ci_low, 1.0);
  EXPECT_DOUBLE_EQ(six.ci_high, 6.0);
  const MedianEstimate five = estimate_median({1, 2, 3, 4, 5});
  EXPECT_TRUE(std::isinf(five.ci_low) && five.ci_low < 0);
  EXPECT_TRUE(std::isinf(five.ci_high) && five.ci_high > 0);
}

// A lower confidence narrows the interval: at 80%, n = 10 allows P(B <= 2) = 0.0547 <= 0.1.
TEST(EstimateMedian, LowerConfidenceNarrowsTheInterval) {
  const MedianEstimate estimate = estimate_median({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.80);
  EXPECT_DOUBLE_EQ(estimate.ci_low, 3.0);
  EXPECT_DOUBLE_EQ(estimate.ci_high, 8.0);
}

TEST(EstimateMedian, RejectsEmptySamplesAndBadConfidence) {
  EXPECT_THROW(estimate_median({}), InputError);
  EXPECT_THROW(estimate_median({1.0}, 1.0), InputError);
  EXPECT_THROW(estimate_median({1.0}, 0.0), InputError);
}

} // namespace
} // namespace cachewise::tuner
