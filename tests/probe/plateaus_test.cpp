// Plateau and step detection (find_plateaus) and the near-capacity estimate on synthetic latency
// curves whose plateaus and steps are set by construction: two and three plateaus, exact and with
// multiplicative noise, with single outliers, and curves with no plateau at all.
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "analysis.hpp"

namespace cachewise::probe {
namespace {

/// The full-cycle chase's shape (working sets in MiB): near 265 cycles up to 28 MiB, one point
/// half way up at 32, far 470 from 36 to 56, one point on the way at 64, DRAM 650 from 80.
std::vector<Point> three_plateau_curve() {
  return {{1, 265},  {2, 265},  {4, 265},  {8, 265},  {16, 265}, {28, 265},  {32, 300},  {36, 470}, {40, 470},
          {48, 470}, {56, 470}, {64, 560}, {80, 650}, {96, 650}, {128, 650}, {160, 650}, {200, 650}};
}

void expect_level(const Plateau& plateau, double level, double first_x, double last_x, std::size_t points) {
  EXPECT_NEAR(plateau.level, level, 1e-9);
  EXPECT_EQ(plateau.first_x, first_x);
  EXPECT_EQ(plateau.last_x, last_x);
  EXPECT_EQ(plateau.points, points);
}

TEST(FindPlateaus, TwoPlateausAndTheStepBetween) {
  std::vector<Point> curve;
  for (int x = 1; x <= 10; ++x) curve.emplace_back(x, x <= 5 ? 100.0 : 200.0);
  const std::optional<Plateaus> found = find_plateaus(curve);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->levels.size(), 2u);
  expect_level(found->levels[0], 100, 1, 5, 5);
  expect_level(found->levels[1], 200, 6, 10, 5);
  ASSERT_EQ(found->steps.size(), 1u);
  EXPECT_EQ(found->steps[0].last_flat_x, 5);
  EXPECT_EQ(found->steps[0].first_risen_x, 6);
  EXPECT_TRUE(found->outlier_x.empty());
}

TEST(FindPlateaus, ThreePlateausWithTransitionPointsBetween) {
  // The points at 32 and 64 MiB lie between two levels: neither plateau holds them.
  const std::optional<Plateaus> found = find_plateaus(three_plateau_curve());
  ASSERT_TRUE(found);
  ASSERT_EQ(found->levels.size(), 3u);
  expect_level(found->levels[0], 265, 1, 28, 6);
  expect_level(found->levels[1], 470, 36, 56, 4);
  expect_level(found->levels[2], 650, 80, 200, 5);
  ASSERT_EQ(found->steps.size(), 2u);
  EXPECT_EQ(found->steps[0].last_flat_x, 28);
  EXPECT_EQ(found->steps[0].first_risen_x, 32);
  EXPECT_EQ(found->steps[1].last_flat_x, 56);
  EXPECT_EQ(found->steps[1].first_risen_x, 64);
}

TEST(FindPlateaus, MultiplicativeNoiseKeepsLevelsAndSteps) {
  // Factors chosen so each plateau's median factor is exactly 1 (sorted: the middle pair of
  // 0.975 0.98 0.99 1.01 1.02 1.025 averages 1; 0.98 0.99 1.01 1.02 likewise; 5 points: 1.00).
  const std::vector<double> factors{1.02, 0.98, 1.01, 0.99, 1.025, 0.975, // near, 6 points
                                    1.0,                                  // the point at 32
                                    1.02, 0.99, 1.01, 0.98,               // far, 4 points
                                    1.0,                                  // the point at 64
                                    1.02, 0.98, 1.0,  1.01, 0.99};        // DRAM, 5 points
  std::vector<Point> curve = three_plateau_curve();
  ASSERT_EQ(curve.size(), factors.size());
  for (std::size_t i = 0; i < curve.size(); ++i) curve[i].second *= factors[i];
  const std::optional<Plateaus> found = find_plateaus(curve);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->levels.size(), 3u);
  expect_level(found->levels[0], 265, 1, 28, 6);
  expect_level(found->levels[1], 470, 36, 56, 4);
  expect_level(found->levels[2], 650, 80, 200, 5);
  EXPECT_EQ(found->steps[0].last_flat_x, 28);
  EXPECT_EQ(found->steps[1].last_flat_x, 56);
}

TEST(FindPlateaus, AnyUniformNoiseWithinTwoAndAHalfPercentKeepsLevelsAndSteps) {
  // Two points of one plateau then differ by at most 1.025 / 0.975 = 5.1%, inside the 6%
  // tolerance, and every transition point stays more than 6% from both neighbouring levels
  // (300 x 0.975 / (265 x 1.025) = 1.077, 560 x 0.975 / (470 x 1.025) = 1.133,
  // 650 x 0.975 / (560 x 1.025) = 1.104): every draw gives the clean curve's plateaus.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> noise(-0.025, 0.025);
    std::vector<Point> curve = three_plateau_curve();
    for (Point& point : curve) point.second *= 1.0 + noise(random);
    const std::optional<Plateaus> found = find_plateaus(curve);
    ASSERT_TRUE(found) << seed;
    ASSERT_EQ(found->levels.size(), 3u) << seed;
    EXPECT_NEAR(found->levels[0].level, 265, 0.025 * 265) << seed;
    EXPECT_NEAR(found->levels[1].level, 470, 0.025 * 470) << seed;
    EXPECT_NEAR(found->levels[2].level, 650, 0.025 * 650) << seed;
    EXPECT_EQ(found->steps[0].last_flat_x, 28) << seed;
    EXPECT_EQ(found->steps[0].first_risen_x, 32) << seed;
    EXPECT_EQ(found->steps[1].last_flat_x, 56) << seed;
    EXPECT_EQ(found->steps[1].first_risen_x, 64) << seed;
    EXPECT_TRUE(found->outlier_x.empty()) << seed;
  }
}

TEST(FindPlateaus, SingleOutliersInsideAPlateauAreSkipped) {
  // A spike on the first plateau (x = 3) and a dip on the second (x = 8): each is one point
  // whose neighbour is back on the level.
  const std::vector<Point> curve{{1, 100}, {2, 100}, {3, 400}, {4, 100}, {5, 100},
                                 {6, 200}, {7, 200}, {8, 100}, {9, 200}, {10, 200}};
  const std::optional<Plateaus> found = find_plateaus(curve);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->levels.size(), 2u);
  expect_level(found->levels[0], 100, 1, 5, 4);
  expect_level(found->levels[1], 200, 6, 10, 4);
  EXPECT_EQ(found->outlier_x, (std::vector<double>{3, 8}));
  EXPECT_EQ(found->steps[0].last_flat_x, 5);
  EXPECT_EQ(found->steps[0].first_risen_x, 6);
}

TEST(FindPlateaus, AnOutlierRightAfterAPlateauIsNotItsStep) {
  // 100 up to x = 4, a spike at 5, back at 100 at 6, then 200: the step is after 6, and the
  // next point after the plateau skips the spike.
  const std::vector<Point> curve{{1, 100}, {2, 100}, {3, 100}, {4, 100}, {5, 900}, {6, 100}, {7, 200}, {8, 200}};
  const std::optional<Plateaus> found = find_plateaus(curve);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->levels.size(), 2u);
  EXPECT_EQ(found->levels[0].last_x, 6);
  EXPECT_EQ(found->steps[0].last_flat_x, 6);
  EXPECT_EQ(found->steps[0].first_risen_x, 7);
}

TEST(FindPlateaus, ALoneLastPointIsNoPlateau) {
  const std::vector<Point> curve{{1, 100}, {2, 100}, {3, 100}, {4, 200}, {5, 200}, {6, 200}, {7, 400}};
  const std::optional<Plateaus> found = find_plateaus(curve);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->levels.size(), 2u);
  expect_level(found->levels[1], 200, 4, 6, 3);
}

TEST(FindPlateaus, LevelsCloserThanTheStepRatioAreOne) {
  // 108 / 100 is outside the 6% tolerance but below the 1.15 step ratio: one plateau whose
  // level is the median of all six points, (100 + 108) / 2.
  const std::vector<Point> curve{{1, 100}, {2, 100}, {3, 100}, {4, 108}, {5, 108}, {6, 108}};
  const std::optional<Plateaus> found = find_plateaus(curve);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->levels.size(), 1u);
  expect_level(found->levels[0], 104, 1, 6, 6);
  EXPECT_TRUE(found->steps.empty());
}

TEST(FindPlateaus, BeyondMaxLevelsTheClosestNeighboursMerge) {
  // Four levels, 100 / 300 / 360 / 800: 360 / 300 = 1.2 is the closest pair, so with three
  // levels allowed those two become one at the median of their six points, 330.
  std::vector<Point> curve;
  const std::vector<double> levels{100, 300, 360, 800};
  for (std::size_t k = 0; k < levels.size(); ++k) {
    for (int i = 0; i < 3; ++i) curve.emplace_back(static_cast<double>(3 * k + i + 1), levels[k]);
  }
  const std::optional<Plateaus> found = find_plateaus(curve, 0.06, 2, 1.15, 3);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->levels.size(), 3u);
  expect_level(found->levels[0], 100, 1, 3, 3);
  expect_level(found->levels[1], 330, 4, 9, 6);
  expect_level(found->levels[2], 800, 10, 12, 3);
  EXPECT_EQ(found->steps[1].last_flat_x, 9);
  EXPECT_EQ(found->steps[1].first_risen_x, 10);
  // With four allowed, all four stay.
  EXPECT_EQ(find_plateaus(curve, 0.06, 2, 1.15, 4)->levels.size(), 4u);
}

TEST(FindPlateaus, UnsortedInputIsSortedFirst) {
  std::vector<Point> curve = three_plateau_curve();
  std::swap(curve[0], curve[16]);
  std::swap(curve[5], curve[9]);
  const std::optional<Plateaus> found = find_plateaus(curve);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->levels.size(), 3u);
  EXPECT_EQ(found->steps[0].last_flat_x, 28);
}

TEST(FindPlateaus, ASteadyRiseHasNoPlateau) {
  std::vector<Point> curve;
  double y = 100;
  for (int x = 1; x <= 8; ++x, y *= 1.1) curve.emplace_back(x, y); // every step 10%, over the 6% tolerance
  EXPECT_FALSE(find_plateaus(curve));
  EXPECT_FALSE(find_plateaus({}));
}

TEST(FindPlateaus, RejectsNonPositiveLatencies) {
  EXPECT_THROW(find_plateaus({{1, 100}, {2, 0}}), std::invalid_argument);
}

TEST(NearCapacityFromHitCurves, NearHitsPastTheKneeGiveThePartition) {
  // C = 60, C_near = 30, plateau hit fraction 0.9: h = 0.9 * min(1, 60 / W), near = 0.9 * 30 / W
  // past the knee. Relative hit fractions: W = 32 -> 1, 64 -> 0.9375 (both above 0.8, unused),
  // 96 -> 0.625, 128 -> 0.46875; estimates W * near / 0.9 = 30 at both.
  const std::vector<Point> hits{{32, 0.9}, {64, 0.84375}, {96, 0.5625}, {128, 0.421875}};
  const std::vector<Point> near{{32, 0.45}, {64, 0.421875}, {96, 0.28125}, {128, 0.2109375}};
  const std::optional<Summary> estimate = near_capacity_from_hit_curves(hits, near, 0.9);
  ASSERT_TRUE(estimate);
  EXPECT_NEAR(estimate->median, 30.0, 1e-9);
  EXPECT_EQ(estimate->samples, 2);
}

TEST(NearCapacityFromHitCurves, UnmatchedPointsAndNoPlateauGiveNothing) {
  const std::vector<Point> hits{{96, 0.5625}};
  EXPECT_FALSE(near_capacity_from_hit_curves(hits, {{128, 0.2}}, 0.9)); // no near point at W = 96
  EXPECT_FALSE(near_capacity_from_hit_curves(hits, {{96, 0.28}}, 0.0));
}

} // namespace
} // namespace cachewise::probe
