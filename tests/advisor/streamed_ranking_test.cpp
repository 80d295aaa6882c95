// CandidateRanking fed in batches against rank_pool over the same candidates: the same ranks,
// worst, counts and reasons, while holding a bounded number of candidates whole.
#include <limits>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/advisor.hpp"
#include "cachewise/model.hpp"
#include "cachewise/model/families/device_pattern.hpp"

namespace cachewise::advisor {
namespace {

const DeviceProfile& example_profile() {
  static const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  return profile;
}

/// One real prediction (transpose n=1024, tile 32, block 32x8), its time replaced per config:
/// the reasons then read real counters.
const Prediction& base_prediction() {
  static const Prediction prediction =
      simulate(build_pattern({"transpose", 1024}, Config::parse("tile=32,block_x=32,block_y=8,pad=0,smem=1"),
                             example_profile().calibration),
               example_profile());
  return prediction;
}

/// Config a=0..a_count-1, b=0..b_count-1; screened time 1 + ((a * 7919 + b * 104729) % 1000) / 100 us,
/// refined time that + (a % 7) / 10 us, both sampled. a=3 is too long to trace when refined.
PredictableCandidate candidate(std::int64_t a, std::int64_t b) {
  PredictableCandidate made;
  made.candidate.config = Config{{"a", a}, {"b", b}};
  made.candidate.threads_per_block = 256;
  made.candidate.blocks_per_sm = 4;
  const double screened_us = 1.0 + static_cast<double>((a * 7919 + b * 104729) % 1000) / 100.0;
  made.predict = [screened_us, a](const SimulationOptions& simulation) {
    Prediction prediction = base_prediction();
    prediction.sampled = true;
    const bool refining = simulation.work_budget != SuggestOptions{}.screening.work_budget;
    if (refining && a == 3)
      throw TraceLimitError("k.cu:7: a block makes more than 1048576 warp memory accesses: too long to trace");
    prediction.time_us = screened_us + (refining ? static_cast<double>(a % 7) / 10.0 : 0.0);
    return prediction;
  };
  return made;
}

CandidatePool pool_of(std::int64_t a_count, std::int64_t b_count) {
  CandidatePool pool;
  pool.problem.family = "k";
  pool.subject = "k in k.cu";
  pool.space_size = static_cast<std::uint64_t>(a_count * b_count);
  for (std::int64_t a = 0; a < a_count; ++a) {
    for (std::int64_t b = 0; b < b_count; ++b) pool.admitted.push_back(candidate(a, b));
  }
  return pool;
}

/// The same candidates in batches of `batch`, rebuilt from their config when needed.
Suggestion streamed(std::int64_t a_count, std::int64_t b_count, std::size_t batch, const SuggestOptions& options,
                    std::size_t& peak_held) {
  const auto count = static_cast<std::size_t>(a_count * b_count);
  CandidateRanking ranking(example_profile(), options, count);
  std::vector<PredictableCandidate> pending;
  for (std::int64_t a = 0; a < a_count; ++a) {
    for (std::int64_t b = 0; b < b_count; ++b) {
      pending.push_back(candidate(a, b));
      if (pending.size() == batch) ranking.screen(std::move(pending)), pending.clear();
    }
  }
  ranking.screen(std::move(pending));
  peak_held = ranking.peak_held();
  EXPECT_EQ(ranking.screened(), count);
  ProblemSpec problem;
  problem.family = "k";
  return ranking.finish(problem, "k in k.cu", count, RejectionTally{}, static_cast<std::int64_t>(count),
                        [](const Config& config) { return candidate(config.get("a"), config.get("b")); });
}

void expect_same(Suggestion streamed, Suggestion whole) {
  streamed.elapsed = whole.elapsed = {};
  EXPECT_EQ(suggestion_to_json(streamed).dump(), suggestion_to_json(whole).dump());
}

// 250 x 200 = 50,000 candidates in batches of 256, the best max(8, 5) = 8 refined: the ranking
// keeps 2 x 8 = 16 whole, and compacts back to 16 once more than 32 are held, so at most
// 32 + 256 = 288 are held at once (rank_pool holds all 50,000). The ranks, the worst, the
// rejections and the reasons (the best's against its slowest one-parameter neighbour, rebuilt
// from its config) equal rank_pool's.
TEST(StreamedRanking, FiftyThousandCandidatesHeldBoundedRankedAsAllAtOnce) {
  SuggestOptions options;
  options.refined = 8;
  options.top = 5;
  std::size_t peak_held = 0;
  const Suggestion in_batches = streamed(250, 200, 256, options, peak_held);
  EXPECT_LE(peak_held, 288U);
  const Suggestion all_at_once = rank_pool(pool_of(250, 200), example_profile(), options);
  EXPECT_EQ(in_batches.refined, 8);
  ASSERT_EQ(in_batches.ranked.size(), 5U);
  expect_same(in_batches, all_at_once);
}

// Refined sets spanning every candidate (the default calibration refines all): each batch is
// refined as it arrives and only the best `top` stay whole; a=3's 40 are rejected when refined,
// the example the first of them by screening: b=36, (3 * 7919 + 36 * 104729) % 1000 = 1.
TEST(StreamedRanking, EveryCandidateRefinedAsItsBatchArrives) {
  SuggestOptions options;
  options.top = 3;
  options.refined = 1000000;
  std::size_t peak_held = 0;
  const Suggestion in_batches = streamed(50, 40, 64, options, peak_held);
  EXPECT_LE(peak_held, 2U * 3U + 64U);
  const Suggestion all_at_once = rank_pool(pool_of(50, 40), example_profile(), options);
  EXPECT_EQ(in_batches.feasible, 2000 - 40);
  EXPECT_EQ(in_batches.refined, 2000 - 40);
  ASSERT_EQ(in_batches.rejections.size(), 1U);
  EXPECT_EQ(in_batches.rejections[0].count, 40);
  EXPECT_EQ(in_batches.rejections[0].example, "a=3,b=36");
  expect_same(in_batches, all_at_once);
}

// The tuner asks for every candidate (top: SIZE_MAX) without refinement: all stay whole (the
// kept count saturates instead of overflowing), ranked as all at once.
TEST(StreamedRanking, EveryCandidateAskedForStaysWhole) {
  SuggestOptions options;
  options.top = std::numeric_limits<std::size_t>::max();
  options.refined = 0;
  std::size_t peak_held = 0;
  const Suggestion in_batches = streamed(20, 15, 64, options, peak_held);
  EXPECT_EQ(peak_held, 300U);
  EXPECT_EQ(in_batches.ranked.size(), 300U);
  EXPECT_EQ(in_batches.refined, 0);
  expect_same(in_batches, rank_pool(pool_of(20, 15), example_profile(), options));
}

// The tally's first message and config per reason is the earliest's: merging keeps this one's.
TEST(StreamedRanking, MergedTallyKeepsTheEarlierExample) {
  RejectionTally earlier, later;
  earlier.add(RejectionStage::trace, Config{{"a", 1}}, "block 1 too long");
  later.add(RejectionStage::trace, Config{{"a", 2}}, "block 2 too long");
  later.add(RejectionStage::occupancy, Config{{"a", 3}}, "no block can be resident on an SM");
  earlier.merge(later);
  const std::vector<RejectionCount> counts = earlier.sorted();
  ASSERT_EQ(counts.size(), 2U);
  EXPECT_EQ(counts[0].stage, RejectionStage::trace);
  EXPECT_EQ(counts[0].count, 2);
  EXPECT_EQ(counts[0].example, "a=1");
  EXPECT_EQ(counts[0].message, "block 1 too long");
  EXPECT_EQ(counts[1].count, 1);
  EXPECT_EQ(earlier.total(), 3);
}

} // namespace
} // namespace cachewise::advisor
