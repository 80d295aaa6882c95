// The probe's curve analysis on synthetic curves whose answers are known by construction,
// with and without noise.
#include <cmath>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

#include "analysis.hpp"

namespace cachewise::probe {
namespace {

constexpr double kKiB = 1024;
constexpr double kMiB = 1024 * kKiB;

/// Multiplies each y by 1 + uniform(-amplitude, amplitude), reproducibly.
std::vector<Point> with_noise(std::vector<Point> curve, double amplitude, unsigned seed = 7) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> noise(-amplitude, amplitude);
  for (auto& point : curve) point.second *= 1.0 + noise(random);
  return curve;
}

/// L1-like step: 33 cycles up to the capacity, 300 beyond.
std::vector<Point> step_curve(double capacity) {
  std::vector<Point> curve;
  for (double kib = 8; kib <= 512; kib += 8) curve.emplace_back(kib * kKiB, kib * kKiB <= capacity ? 33.0 : 300.0);
  return curve;
}

TEST(Summarize, QuartilesAndRelativeSpread) {
  const Summary summary = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(summary.median, 3);
  EXPECT_DOUBLE_EQ(summary.p25, 2);
  EXPECT_DOUBLE_EQ(summary.p75, 4);
  EXPECT_DOUBLE_EQ(summary.spread, 2.0 / 3.0);
  EXPECT_EQ(summary.samples, 5);
}

TEST(Summarize, InterpolatesBetweenSamples) {
  const Summary summary = summarize({10, 20});
  EXPECT_DOUBLE_EQ(summary.median, 15);
  EXPECT_DOUBLE_EQ(summary.p25, 12.5);
}

TEST(Summarize, RejectsNoSamples) { EXPECT_THROW(summarize({}), std::invalid_argument); }

TEST(Confidence, FollowsSpreadAndWeakestWins) {
  EXPECT_EQ(confidence_from_spread(0.01), Confidence::high);
  EXPECT_EQ(confidence_from_spread(0.05), Confidence::medium);
  EXPECT_EQ(confidence_from_spread(0.5), Confidence::low);
  EXPECT_EQ(weakest(Confidence::high, Confidence::low), Confidence::low);
  EXPECT_EQ(weakest(Confidence::medium, Confidence::high), Confidence::medium);
  const Provenance provenance = provenance_from("m", summarize({100, 101, 102, 103}));
  EXPECT_EQ(provenance.samples, 4);
  EXPECT_EQ(provenance.confidence, Confidence::high); // spread 1.5 / 101.5
}

TEST(FindRise, CleanStepGivesLastPointOnThePlateau) {
  const auto rise = find_rise(step_curve(240 * kKiB));
  ASSERT_TRUE(rise);
  EXPECT_DOUBLE_EQ(rise->last_flat_x, 240 * kKiB);
  EXPECT_DOUBLE_EQ(rise->first_risen_x, 248 * kKiB);
  EXPECT_DOUBLE_EQ(rise->base_level, 33);
  EXPECT_DOUBLE_EQ(rise->top_level, 300);
}

TEST(FindRise, NoiseAndASingleSpikeDoNotMoveTheKnee) {
  std::vector<Point> curve = with_noise(step_curve(200 * kKiB), 0.05);
  curve[7].second = 250; // one outlier at 64 KiB: not sustained, so not the knee
  const auto rise = find_rise(curve);
  ASSERT_TRUE(rise);
  EXPECT_DOUBLE_EQ(rise->last_flat_x, 200 * kKiB);
}

TEST(FindRise, UnsortedInputIsSortedFirst) {
  std::vector<Point> curve = step_curve(96 * kKiB);
  std::reverse(curve.begin(), curve.end());
  const auto rise = find_rise(curve);
  ASSERT_TRUE(rise);
  EXPECT_DOUBLE_EQ(rise->last_flat_x, 96 * kKiB);
}

TEST(FindRise, FlatNoisyCurveHasNoRise) {
  std::vector<Point> flat;
  for (int i = 1; i <= 30; ++i) flat.emplace_back(i, 100.0);
  EXPECT_FALSE(find_rise(with_noise(flat, 0.04)));
}

TEST(FindRise, GradualWarmThenSampleCurve) {
  // Hit probability C / W beyond the capacity: latency = 300 + 500 * (1 - C / W).
  // Threshold 5% of (top - base): top = median of the last three (W = 198..200 MiB) ~= 674.4,
  // so the first risen W solves 500 * (1 - 50 / W) > 0.05 * 374.4, i.e. W > 51.95 MiB.
  std::vector<Point> curve;
  const double capacity = 50 * kMiB;
  for (double mib = 10; mib <= 200; mib += 1) {
    const double w = mib * kMiB;
    curve.emplace_back(w, 300 + 500 * (1 - std::min(1.0, capacity / w)));
  }
  const auto rise = find_rise(curve, 0.05);
  ASSERT_TRUE(rise);
  EXPECT_DOUBLE_EQ(rise->last_flat_x, 51 * kMiB);
  EXPECT_DOUBLE_EQ(rise->first_risen_x, 52 * kMiB);
}

TEST(FindDrop, BandwidthKnee) {
  std::vector<Point> curve;
  for (double mib = 4; mib <= 256; mib *= 2) curve.emplace_back(mib * kMiB, mib <= 32 ? 10000.0 : 4000.0);
  const auto drop = find_drop(with_noise(curve, 0.02));
  ASSERT_TRUE(drop);
  EXPECT_DOUBLE_EQ(drop->last_flat_x, 32 * kMiB);
  EXPECT_DOUBLE_EQ(drop->first_risen_x, 64 * kMiB);
  EXPECT_NEAR(drop->base_level, 10000, 200);
}

TEST(Grid, InclusiveStepsAndEmptyForBadStep) {
  EXPECT_EQ(grid(4, 16, 4), (std::vector<double>{4, 8, 12, 16}));
  EXPECT_EQ(grid(4, 14, 4), (std::vector<double>{4, 8, 12}));
  EXPECT_TRUE(grid(4, 16, 0).empty());
  EXPECT_TRUE(grid(16, 4, 4).empty());
}

TEST(CapacityFromHitFractions, EveryPointBeyondTheKneeAgrees) {
  // Hit fraction 60 / W: W = 100, 150, 200, 300 give 0.6, 0.4, 0.3, 0.2, each 60 when multiplied.
  const std::vector<Point> hits{{50, 1.0}, {100, 0.6}, {150, 0.4}, {200, 0.3}, {300, 0.2}, {3000, 0.02}};
  const auto capacity = capacity_from_hit_fractions(hits, 0);
  ASSERT_TRUE(capacity);
  EXPECT_DOUBLE_EQ(capacity->median, 60);
  EXPECT_EQ(capacity->samples, 4); // W = 50 (all hit) and W = 3000 (almost none) carry no information
  EXPECT_FALSE(capacity_from_hit_fractions(hits, 1000));
}

TEST(SplitTwoClusters, NearAndFarLatencies) {
  std::vector<double> latencies;
  for (int i = 0; i < 100; ++i) {
    latencies.push_back(260 + (i % 11) - 5);
    latencies.push_back(480 + (i % 7) - 3);
  }
  const TwoClusters clusters = split_two_clusters(latencies);
  EXPECT_DOUBLE_EQ(clusters.low.median, 260);
  EXPECT_DOUBLE_EQ(clusters.high.median, 480);
  EXPECT_DOUBLE_EQ(clusters.low_fraction, 0.5);
  EXPECT_DOUBLE_EQ(clusters.threshold, 370);
  EXPECT_GT(clusters.separation, 3.0);
}

TEST(SplitTwoClusters, OneNoisyGroupIsPoorlySeparated) {
  std::vector<double> latencies;
  std::mt19937 random(3);
  std::normal_distribution<double> noise(300, 10);
  for (int i = 0; i < 500; ++i) latencies.push_back(noise(random));
  EXPECT_LT(split_two_clusters(latencies).separation, 3.0);
}

TEST(SplitTwoClusters, RejectsIdenticalValues) {
  EXPECT_THROW(split_two_clusters({5, 5, 5}), std::invalid_argument);
}

TEST(SmallestSaturatingBlock, LineOf128Bytes) {
  // Knee footprint C * B / 128 below the line, C from the line on (C = 256 KiB).
  const double c = 256 * kKiB;
  const std::vector<Point> knees{{32, c / 4}, {64, c / 2}, {128, c}, {256, c * 0.97}, {512, c * 1.05}};
  EXPECT_EQ(smallest_saturating_block(knees), 128);
}

TEST(SmallestSaturatingBlock, UndecidableCurves) {
  EXPECT_FALSE(smallest_saturating_block({{32, 10}, {64, 10}, {128, 10}}));   // line <= 32: not known
  EXPECT_FALSE(smallest_saturating_block({{32, 10}, {64, 20}, {128, 40}}));   // never levels off
  EXPECT_FALSE(smallest_saturating_block({{32, 10}}));
}

TEST(FillGranularity, FirstMissingOffset) {
  EXPECT_EQ(fill_granularity({{8, 35}, {16, 36}, {32, 250}, {64, 260}}, 140), 32);
  EXPECT_EQ(fill_granularity({{64, 700}, {8, 300}, {32, 310}, {16, 305}}, 500), 64); // any order
  EXPECT_FALSE(fill_granularity({{8, 250}, {16, 260}}, 140));                       // even offset 8 missed
  EXPECT_FALSE(fill_granularity({{8, 35}, {16, 36}}, 140));                         // nothing missed
}

/// Class of each 32 B address when a hash of the `granularity`-sized chunk index picks the partition.
std::vector<int> hashed_classes(std::size_t count, std::size_t granularity_bytes) {
  std::vector<int> classes;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t chunk = i * 32 / granularity_bytes;
    classes.push_back(__builtin_popcountll(chunk) & 1);
  }
  return classes;
}

TEST(InterleaveGranularity, PopcountHashOverChunks) {
  const std::vector<int> classes = hashed_classes(32768, 4096);
  EXPECT_DOUBLE_EQ(pair_agreement(classes, 1), 1.0);
  EXPECT_DOUBLE_EQ(pair_agreement(classes, 64), 1.0);  // 2 KiB apart, same chunk
  EXPECT_DOUBLE_EQ(pair_agreement(classes, 128), 0.0); // chunks 2k and 2k+1 differ in parity
  EXPECT_EQ(interleave_granularity(classes, 32), 4096);
  EXPECT_EQ(interleave_granularity(hashed_classes(32768, 512), 32), 512);
}

TEST(InterleaveGranularity, NoneWhenEverythingAgrees) {
  EXPECT_FALSE(interleave_granularity(std::vector<int>(4096, 0), 32));
}

TEST(BankConflictDegree, ThirtyTwoFourByteBanks) {
  EXPECT_EQ(bank_conflict_degree(4, 4, 32), 1);
  EXPECT_EQ(bank_conflict_degree(8, 4, 32), 2);
  EXPECT_EQ(bank_conflict_degree(12, 4, 32), 1); // odd word stride: every lane its own bank
  EXPECT_EQ(bank_conflict_degree(128, 4, 32), 32);
  EXPECT_EQ(bank_conflict_degree(1024, 4, 32), 32);
  EXPECT_EQ(bank_conflict_degree(4, 4, 64), 1);
  EXPECT_EQ(bank_conflict_degree(8, 4, 64), 1); // 64 banks: two words apart still spread 32 lanes
  EXPECT_EQ(bank_conflict_degree(4, 4, 16), 2); // 16 banks: lanes i and i + 16 share a bank
  EXPECT_EQ(bank_conflict_degree(4, 8, 16), 1); // two lanes per 8-byte word: 16 words, 16 banks
}

std::vector<Point> bank_curve(double width, double banks, double base, double extra) {
  std::vector<Point> curve;
  for (double stride = 4; stride <= 1024; stride *= 2) {
    curve.emplace_back(stride, base + extra * (bank_conflict_degree(stride, width, banks) - 1));
  }
  return curve;
}

TEST(AnalyzeBanks, RecoversWidthBanksAndWavefrontCost) {
  const auto hopper = analyze_banks(with_noise(bank_curve(4, 32, 30, 2), 0.01));
  ASSERT_TRUE(hopper);
  EXPECT_EQ(hopper->width_bytes, 4);
  EXPECT_EQ(hopper->banks, 32);
  EXPECT_NEAR(hopper->extra_wavefront_cycles, 2, 0.1);

  const auto sixteen = analyze_banks(bank_curve(4, 16, 28, 4));
  ASSERT_TRUE(sixteen);
  EXPECT_EQ(sixteen->width_bytes, 4);
  EXPECT_EQ(sixteen->banks, 16);
  EXPECT_NEAR(sixteen->extra_wavefront_cycles, 4, 1e-9);
}

TEST(AnalyzeBanks, EqualRowWidthsAreIndistinguishableSoTheNarrowerBankIsReported) {
  // For 4-byte loads at power-of-two strides, 32 banks of 8 B conflict exactly like 64 banks of 4 B
  // (both rows are 256 B); the analysis reports the narrower bank.
  const auto wide = analyze_banks(bank_curve(8, 32, 28, 4));
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->width_bytes, 4);
  EXPECT_EQ(wide->banks, 64);
}

TEST(AnalyzeBanks, NoConflictsNoAnswer) {
  std::vector<Point> flat;
  for (double stride = 4; stride <= 1024; stride *= 2) flat.emplace_back(stride, 30);
  EXPECT_FALSE(analyze_banks(flat));
}

TEST(WaysFromSameSetCurve, StepAfterTheLastWay) {
  std::vector<Point> curve;
  for (int n = 2; n <= 20; ++n) curve.emplace_back(n, n <= 4 ? 35.0 : 290.0);
  EXPECT_EQ(ways_from_same_set_curve(with_noise(curve, 0.03)), 4);
  std::vector<Point> flat;
  for (int n = 2; n <= 20; ++n) flat.emplace_back(n, 35.0);
  EXPECT_FALSE(ways_from_same_set_curve(flat));
}

TEST(ClassifyReplacement, Fingerprints) {
  EXPECT_EQ(classify_replacement(16, 0, 16).policy, ReplacementPolicy::lru);
  EXPECT_EQ(classify_replacement(0, 16, 16).policy, ReplacementPolicy::fifo);
  EXPECT_EQ(classify_replacement(8, 7, 16).policy, ReplacementPolicy::random);
  EXPECT_EQ(classify_replacement(16, 16, 16).policy, ReplacementPolicy::unknown); // nothing evicted
  EXPECT_EQ(classify_replacement(16, 0, 0).policy, ReplacementPolicy::unknown);
  EXPECT_NE(classify_replacement(15, 1, 16).fingerprint.find("line 0 kept 15/16, line 1 kept 1/16"), std::string::npos);
}

} // namespace
} // namespace cachewise::probe
