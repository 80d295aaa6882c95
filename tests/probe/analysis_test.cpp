// The probe's curve analysis on synthetic curves whose answers are known by construction,
// with and without noise.
#include <algorithm>
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

/// H200-like store-warmed sweep: the classifier sees `plateau` of the hits, C = 40 MiB, and a
/// gradual knee (W = 36..48 MiB lose hits earlier than C / W says).
std::vector<Point> hit_curve(double plateau) {
  std::vector<Point> curve;
  for (double mib : {1, 2, 4, 8, 16, 24, 32, 36, 40, 44, 48, 56, 64, 80, 96, 128, 192, 256, 512}) {
    double relative = std::min(1.0, 40 / mib);
    if (mib >= 36 && mib <= 48) relative = 1.0 - (mib - 32) * 0.015; // 0.94 .. 0.76 (48: below 0.8)
    curve.emplace_back(mib * kMiB, plateau * relative);
  }
  return curve;
}

TEST(CapacityFromHitCurve, PlateauBelowOneIsDividedOut) {
  for (double plateau : {1.0, 0.9}) {
    const auto capacity = capacity_from_hit_curve(hit_curve(plateau), 20 * kMiB);
    ASSERT_TRUE(capacity);
    EXPECT_DOUBLE_EQ(capacity->plateau_hit_fraction, plateau); // median of W = 1..16 MiB
    // Relative hits in [0.1, 0.8]: W = 48 (0.76 -> 36.48 MiB) and 56..256 (exactly 40 MiB each);
    // 36..44 (knee) and 512 (0.078) are left out. Median of 8 estimates: 40 MiB.
    EXPECT_EQ(capacity->capacity.samples, 8);
    EXPECT_NEAR(capacity->capacity.median, 40 * kMiB, 1e-6 * kMiB);
  }
  // Without the division a 0.9 plateau reads as 36 MiB: what capacity_from_hit_fractions gives.
  EXPECT_NEAR(capacity_from_hit_fractions(hit_curve(0.9), 50 * kMiB)->median, 36 * kMiB, 1e-6 * kMiB);
}

TEST(CapacityFromHitCurve, BinomialNoiseMovesTheEstimateLittle) {
  // Each point: 4 x 4096 sampled lines, as in the full probe.
  std::mt19937 random(13);
  std::vector<double> estimates;
  for (int run = 0; run < 20; ++run) {
    std::vector<Point> noisy;
    for (const auto& [w, h] : hit_curve(0.9)) {
      std::binomial_distribution<int> hits(4 * 4096, h);
      noisy.emplace_back(w, hits(random) / (4.0 * 4096));
    }
    estimates.push_back(capacity_from_hit_curve(noisy, 20 * kMiB)->capacity.median);
  }
  // Relative binomial sd of one point 0.6% (W = 56) .. 2% (W = 256), of the median of 8 about
  // 0.5%: every run within 1.5% of 40 MiB.
  for (double estimate : estimates) EXPECT_NEAR(estimate, 40 * kMiB, 0.015 * 40 * kMiB);
}

TEST(CapacityFromHitCurve, NoPlateauOrNoPointPastTheKnee) {
  EXPECT_FALSE(capacity_from_hit_curve(hit_curve(0.9), 0.5 * kMiB));
  const std::vector<Point> all_fit{{kMiB, 0.9}, {2 * kMiB, 0.9}, {4 * kMiB, 0.89}};
  EXPECT_FALSE(capacity_from_hit_curve(all_fit, 2 * kMiB));
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

TEST(SplitTwoClusters, RejectsIdenticalValues) { EXPECT_THROW(split_two_clusters({5, 5, 5}), std::invalid_argument); }

TEST(SmallestSaturatingBlock, LineOf128Bytes) {
  // Knee footprint C * B / 128 below the line, C from the line on (C = 256 KiB).
  const double c = 256 * kKiB;
  const std::vector<Point> knees{{32, c / 4}, {64, c / 2}, {128, c}, {256, c * 0.97}, {512, c * 1.05}};
  EXPECT_EQ(smallest_saturating_block(knees), 128);
  // The H200's L1, two back-to-back runs: past the line the knees scatter (117.5 / 94 KiB).
  EXPECT_EQ(smallest_saturating_block({{32, 23.5}, {64, 58.75}, {128, 117.5}, {256, 94}, {512, 117.5}}), 128);
  EXPECT_EQ(smallest_saturating_block({{32, 23.5}, {64, 58.75}, {128, 117.5}, {256, 94}, {512, 94}}), 128);
}

TEST(SmallestSaturatingBlock, UndecidableCurves) {
  EXPECT_FALSE(smallest_saturating_block({{32, 10}, {64, 10}, {128, 10}})); // line <= 32: not known
  EXPECT_FALSE(smallest_saturating_block({{32, 10}, {64, 20}, {128, 40}})); // never levels off
  EXPECT_FALSE(smallest_saturating_block({{32, 10}}));
}

TEST(FillGranularity, FirstMissingOffset) {
  EXPECT_EQ(fill_granularity({{8, 35}, {16, 36}, {32, 250}, {64, 260}}, 140), 32);
  EXPECT_EQ(fill_granularity({{64, 700}, {8, 300}, {32, 310}, {16, 305}}, 500), 64); // any order
  EXPECT_FALSE(fill_granularity({{8, 250}, {16, 260}}, 140));                        // even offset 8 missed
  EXPECT_FALSE(fill_granularity({{8, 35}, {16, 36}}, 140));                          // nothing missed
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

/// TLB curve: flat at 280 cycles up to `reach`, 380 beyond (nullopt reach: flat everywhere).
std::vector<Point> tlb_curve(double stride, double largest, std::optional<double> reach) {
  std::vector<Point> curve;
  for (double region = std::max(16 * kMiB, 8 * stride); region <= largest; region *= 2) {
    curve.emplace_back(region, reach && region > *reach ? 380.0 : 280.0);
  }
  return curve;
}

TEST(TlbReach, SmallestStridesStepIsTheReach) {
  const double largest = 64.0 * 1024 * kMiB;
  const TlbReach reach = tlb_reach({{32 * kMiB, with_noise(tlb_curve(32 * kMiB, largest, 64.0 * 1024 * kMiB), 0.02)},
                                    {2 * kMiB, with_noise(tlb_curve(2 * kMiB, largest, 4.0 * 1024 * kMiB), 0.02)}});
  EXPECT_FALSE(reach.lower_bound);
  EXPECT_EQ(reach.reach_bytes, 4.0 * 1024 * kMiB);
  EXPECT_NEAR(reach.miss_penalty_cycles, 100, 10);
  ASSERT_EQ(reach.steps.size(), 2u);
  EXPECT_FALSE(reach.steps[0]); // the 32 MiB curve's step lies beyond its largest region
  EXPECT_TRUE(reach.steps[1]);
  EXPECT_EQ(reach.entry_covers_at_least_bytes, 2 * kMiB); // only the 2 MiB stride stepped there
}

TEST(TlbReach, StridesSteppingTogetherBoundWhatOneEntryCovers) {
  // Entries of 32 MiB: 2 MiB and 32 MiB strides step at the same region, 512 MiB strides later.
  const double largest = 128.0 * 1024 * kMiB;
  const double reach_bytes = 64.0 * 1024 * kMiB;
  const TlbReach reach = tlb_reach({{2 * kMiB, with_noise(tlb_curve(2 * kMiB, largest, reach_bytes), 0.02)},
                                    {32 * kMiB, with_noise(tlb_curve(32 * kMiB, largest, reach_bytes), 0.02, 9)},
                                    {512 * kMiB, tlb_curve(512 * kMiB, largest, std::nullopt)}});
  EXPECT_FALSE(reach.lower_bound);
  EXPECT_EQ(reach.reach_bytes, reach_bytes);
  EXPECT_EQ(reach.entry_covers_at_least_bytes, 32 * kMiB);
  EXPECT_EQ(reach.entry_covers_less_than_bytes, 512 * kMiB); // the only larger stride tried
}

TEST(TlbReach, NeighbouringStridesPinWhatOneEntryCovers) {
  // 2048 entries of 32 MiB (64 GiB): strides up to 32 MiB step after 64 GiB; a 64 MiB stride
  // needs an entry per node and steps only after 2048 x 64 MiB = 128 GiB.
  const double largest = 132.0 * 1024 * kMiB;
  const double reach_bytes = 64.0 * 1024 * kMiB;
  const TlbReach reach = tlb_reach({{2 * kMiB, tlb_curve(2 * kMiB, largest, reach_bytes)},
                                    {32 * kMiB, tlb_curve(32 * kMiB, largest, reach_bytes)},
                                    {64 * kMiB, tlb_curve(64 * kMiB, largest, 2 * reach_bytes)},
                                    {128 * kMiB, tlb_curve(128 * kMiB, largest, std::nullopt)}});
  EXPECT_EQ(reach.entry_covers_at_least_bytes, 32 * kMiB);
  EXPECT_EQ(reach.entry_covers_less_than_bytes, 64 * kMiB);
}

TEST(TlbReach, NoStepAtTheSmallestStrideIsALowerBound) {
  const double largest = 96.0 * 1024 * kMiB;
  std::vector<Point> flat = with_noise(tlb_curve(2 * kMiB, 64.0 * 1024 * kMiB, std::nullopt), 0.02);
  flat.emplace_back(largest, 281); // the largest region need not be a power of two
  const TlbReach reach = tlb_reach({{2 * kMiB, flat}, {512 * kMiB, tlb_curve(512 * kMiB, largest, 8.0 * 1024 * kMiB)}});
  EXPECT_TRUE(reach.lower_bound);
  EXPECT_EQ(reach.reach_bytes, largest);
  EXPECT_EQ(reach.miss_penalty_cycles, 0);
  EXPECT_FALSE(reach.steps[0]);
  ASSERT_TRUE(reach.steps[1]);
  EXPECT_EQ(reach.steps[1]->last_flat_x, 8.0 * 1024 * kMiB);
  EXPECT_THROW(tlb_reach({}), std::invalid_argument);
  EXPECT_THROW(tlb_reach({{2 * kMiB, {}}}), std::invalid_argument);
}

TEST(PartitionSides, AnSmThatSeesMostClassesSwappedIsNearToTheOtherPartition) {
  const std::vector<int> home{0, 0, 1, 1, 0, 1, 0, 1, 1, 0};
  const std::vector<int> same_but_one{0, 0, 1, 1, 0, 1, 0, 1, 1, 1};    // 1 of 10 differs
  const std::vector<int> swapped_but_two{1, 1, 0, 0, 1, 0, 1, 0, 1, 0}; // 8 of 10 differ
  const PartitionSides sides = partition_sides(home, {home, same_but_one, swapped_but_two});
  EXPECT_EQ(sides.side, (std::vector<int>{0, 0, 1}));
  EXPECT_DOUBLE_EQ(sides.ambiguity, 0.2); // the swapped SM agrees with home on 2 of 10
  EXPECT_THROW(partition_sides(home, {{0, 1}}), std::invalid_argument);
}

} // namespace
} // namespace cachewise::probe
