// suggest() on the real families (build_pattern, check_fits_device) with injected predictors,
// plus one end-to-end case on the real simulator whose answer follows from bank arithmetic.
#include <atomic>
#include <mutex>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/advisor.hpp"

namespace cachewise::advisor {
namespace {

DeviceProfile example_profile() { return load_profile(CACHEWISE_EXAMPLE_PROFILE); }

/// Predicts time = threads per block (fewer threads: faster), and counts calls. Its
/// predictions claim to be sampled unless `exact`, so suggest() refines the best ones.
struct ThreadCountPredictor {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  bool exact = false;
  Prediction operator()(const KernelPattern& pattern, const DeviceProfile&, const SimulationOptions&) const {
    ++*calls;
    Prediction prediction;
    prediction.time_us = static_cast<double>(pattern.block.count());
    prediction.bottleneck = "latency";
    prediction.sampled = !exact;
    return prediction;
  }
};

TEST(Suggest, PinnedRuleBreakersAreCountedByReason) {
  // tile=32, 32x8 threads, smem=0: of pad in {0,1,2,4} only pad=0 is legal without shared memory.
  SuggestOptions options;
  options.fixed = Config::parse("smem=0,tile=32,block_x=32,block_y=8");
  options.predictor = ThreadCountPredictor{};
  const Suggestion s = suggest({"transpose", 1024}, example_profile(), options);
  EXPECT_EQ(s.enumerated, 4);
  EXPECT_EQ(s.feasible, 1);
  ASSERT_EQ(s.rejections.size(), 1U);
  EXPECT_EQ(s.rejections[0].stage, RejectionStage::family_rules);
  EXPECT_EQ(s.rejections[0].count, 3);
  EXPECT_NE(s.rejections[0].reason.find("pad"), std::string::npos);
  EXPECT_EQ(s.ranked.at(0).config.to_string(), "block_x=32,block_y=8,pad=0,smem=0,tile=32");
}

TEST(Suggest, RejectionReasonsGroupByRuleKeepingNamesWithDigits) {
  // stencil3d mode 1 needs block_z = 1: of block_z {1,2,4,8} x z_chunk {1,8,16,32,64}, the
  // 3 x 5 = 15 with block_z > 1 are rejected under one reason, whatever their values.
  SuggestOptions options;
  options.fixed = Config::parse("mode=1,block_x=32,block_y=8,vector=1");
  options.predictor = ThreadCountPredictor{};
  const Suggestion s = suggest({"stencil3d", 64}, example_profile(), options);
  EXPECT_EQ(s.feasible, 5);
  ASSERT_EQ(s.rejections.size(), 1U);
  EXPECT_EQ(s.rejections[0].count, 15);
  EXPECT_EQ(s.rejections[0].reason.rfind("stencil3d: block_z must be #", 0), 0U) << s.rejections[0].reason;
  EXPECT_EQ(s.rejections[0].reason.find_first_of("0123456789", 10), std::string::npos) << s.rejections[0].reason;
}

TEST(Suggest, DeviceLimitRejectsOversizedBlocks) {
  // tile=64, smem=0, pad=0: whole-warp (block_x, block_y) pairs are 4 + 5 + 6 + 6 = 21; 64 divides
  // by every block side, and only 64x32 = 2048 threads exceeds the 1024-thread limit.
  SuggestOptions options;
  options.fixed = Config::parse("smem=0,tile=64,pad=0");
  ThreadCountPredictor predictor;
  options.predictor = predictor;
  options.refined = 3;
  options.top = 2;
  const Suggestion s = suggest({"transpose", 1024}, example_profile(), options);
  EXPECT_EQ(s.enumerated, 21);
  EXPECT_EQ(s.feasible, 20);
  ASSERT_EQ(s.rejections.size(), 1U);
  EXPECT_EQ(s.rejections[0].stage, RejectionStage::device_limits);
  EXPECT_EQ(*predictor.calls, 20 + 3); // every feasible one screened, the best three refined
  // Fewest threads first: 32 threads as 8x4, 16x2 or 32x1; equal time and resources, so the
  // canonical config text decides.
  ASSERT_EQ(s.ranked.size(), 2U);
  EXPECT_EQ(s.ranked[0].threads_per_block, 32);
  EXPECT_EQ(s.ranked[1].threads_per_block, 32);
  EXPECT_EQ(s.worst->threads_per_block, 1024);

  // Exact screening predictions are final: nothing is simulated twice.
  ThreadCountPredictor exact_predictor;
  exact_predictor.exact = true;
  options.predictor = exact_predictor;
  suggest({"transpose", 1024}, example_profile(), options);
  EXPECT_EQ(*exact_predictor.calls, 20);
}

TEST(Suggest, RefinedPredictionsDecideTheTop) {
  // Screening favours few threads; refinement (another work budget) favours many. The best
  // four by screening are refined and must come out in the refinement's order.
  SuggestOptions options;
  options.fixed = Config::parse("smem=0,tile=64,pad=0");
  options.refined = 4;
  options.top = 4;
  options.predictor = [&](const KernelPattern& pattern, const DeviceProfile&, const SimulationOptions& simulation) {
    Prediction prediction;
    const auto threads = static_cast<double>(pattern.block.count());
    const bool refining = simulation.work_budget == options.refinement.work_budget;
    prediction.time_us = refining ? 10000.0 - threads : threads + static_cast<double>(pattern.block.x) / 100.0;
    prediction.sampled = !refining;
    return prediction;
  };
  const Suggestion s = suggest({"transpose", 1024}, example_profile(), options);
  // Screening order: 32 threads (x=8, 16, 32), then 64 threads with block_x=8 (8x8).
  ASSERT_EQ(s.ranked.size(), 4U);
  EXPECT_EQ(s.ranked[0].threads_per_block, 64);
  EXPECT_EQ(s.ranked[0].config.get("block_x"), 8);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(s.ranked[i].threads_per_block, 32);
}

TEST(Suggest, RefineMarginLeavesOutCandidatesScreenedFarBehindTheShownOnes) {
  // The 20 feasible configs of DeviceLimitRejectsOversizedBlocks, screened at their thread
  // counts: three of 32 threads, four of 64 (8x8, 16x4, 32x2, 64x1), then 128 and more. With
  // --top 2 the 2nd screened time is 32 us; of a shortlist of 19 (one left out), those
  // screened under margin x 32 us are refined.
  SuggestOptions options;
  options.fixed = Config::parse("smem=0,tile=64,pad=0");
  options.refined = 19;
  options.top = 2;
  const auto refined_with_margin = [&](double margin, int& calls) {
    ThreadCountPredictor predictor;
    options.predictor = predictor;
    options.refine_margin = margin;
    const Suggestion s = suggest({"transpose", 1024}, example_profile(), options);
    calls = *predictor.calls;
    EXPECT_EQ(s.ranked.at(0).threads_per_block, 32);
    return s;
  };
  int calls = 0;
  Suggestion s = refined_with_margin(1.5, calls); // under 48 us: the three of 32 threads
  EXPECT_EQ(s.refined, 3);
  EXPECT_EQ(calls, 20 + 3);
  ASSERT_TRUE(s.refine_cut_us.has_value());
  EXPECT_DOUBLE_EQ(*s.refine_cut_us, 48.0);
  EXPECT_DOUBLE_EQ(suggestion_to_json(s)["refine_cut_us"].get<double>(), 48.0);
  s = refined_with_margin(2.5, calls); // under 80 us: and the four of 64
  EXPECT_EQ(s.refined, 7);
  EXPECT_EQ(calls, 20 + 7);
  EXPECT_DOUBLE_EQ(*s.refine_cut_us, 80.0);
  s = refined_with_margin(0.0, calls); // no margin: the whole shortlist
  EXPECT_EQ(s.refined, 19);
  EXPECT_EQ(calls, 20 + 19);
  EXPECT_FALSE(s.refine_cut_us.has_value());
  EXPECT_FALSE(suggestion_to_json(s).contains("refine_cut_us"));
  options.refined = 20; // a shortlist of every candidate is refined whole, whatever the margin
  s = refined_with_margin(1.5, calls);
  EXPECT_EQ(s.refined, 20);
  EXPECT_EQ(calls, 20 + 20);
}

/// ThreadCountPredictor, except that blocks of `threads_too_long` threads are too long to trace
/// (TraceLimitError), when screened or only when refined.
struct TooLongPredictor {
  ThreadCountPredictor count;
  std::int64_t threads_too_long = 32;
  std::int64_t refinement_budget = -1; ///< too long only with this work budget; -1: always
  Prediction operator()(const KernelPattern& pattern, const DeviceProfile& profile,
                        const SimulationOptions& simulation) const {
    const Prediction prediction = count(pattern, profile, simulation);
    if (pattern.block.count() == threads_too_long &&
        (refinement_budget < 0 || simulation.work_budget == refinement_budget))
      throw TraceLimitError("k.cu:7: a block makes more than 1048576 warp memory accesses: too long to trace");
    return prediction;
  }
};

TEST(Suggest, CandidatesTooLongToTraceWhenScreenedAreRejectedAlone) {
  // The 20 feasible configs of DeviceLimitRejectsOversizedBlocks; the three of 32 threads are
  // too long to trace: 17 ranked, 64 threads the fewest left, and the best 3 refined.
  SuggestOptions options;
  options.fixed = Config::parse("smem=0,tile=64,pad=0");
  TooLongPredictor predictor;
  options.predictor = predictor;
  options.refined = 3;
  options.top = 2;
  const Suggestion s = suggest({"transpose", 1024}, example_profile(), options);
  EXPECT_EQ(s.enumerated, 21);
  EXPECT_EQ(s.feasible, 17);
  EXPECT_EQ(s.refined, 3);
  EXPECT_EQ(*predictor.count.calls, 20 + 3);
  ASSERT_EQ(s.rejections.size(), 2U);
  EXPECT_EQ(s.rejections[0].stage, RejectionStage::trace); // 3 of them, the most frequent
  EXPECT_EQ(s.rejections[0].count, 3);
  EXPECT_EQ(s.rejections[0].message, "k.cu:7: a block makes more than 1048576 warp memory accesses: too long to trace");
  EXPECT_EQ(s.rejections[0].reason, "k.cu:#: a block makes more than # warp memory accesses: too long to trace");
  EXPECT_EQ(s.rejections[1].stage, RejectionStage::device_limits);
  ASSERT_EQ(s.ranked.size(), 2U);
  EXPECT_EQ(s.ranked[0].threads_per_block, 64);
  EXPECT_EQ(suggestion_to_json(s)["rejections"][0]["stage"], "trace");
}

TEST(Suggest, CandidatesTooLongToTraceWhenRefinedGiveWayToTheNextBest) {
  // Screening passes all 20; refining the best 3 (the 32-thread blocks) fails for each, so the
  // next 3 by screening (64 threads) are refined in their place: 20 + 3 + 3 predictions.
  SuggestOptions options;
  options.fixed = Config::parse("smem=0,tile=64,pad=0");
  TooLongPredictor predictor;
  predictor.refinement_budget = options.refinement.work_budget;
  options.predictor = predictor;
  options.refined = 3;
  options.top = 2;
  std::mutex progress_mutex;
  std::pair<std::size_t, std::size_t> last_progress; // (done, total) of the most done
  options.on_simulated = [&](std::size_t done, std::size_t total) {
    const std::lock_guard lock(progress_mutex);
    if (done > last_progress.first) last_progress = {done, total};
  };
  const Suggestion s = suggest({"transpose", 1024}, example_profile(), options);
  EXPECT_EQ(s.feasible, 17);
  EXPECT_EQ(s.refined, 3);
  EXPECT_EQ(*predictor.count.calls, 20 + 3 + 3);
  EXPECT_EQ(last_progress, (std::pair<std::size_t, std::size_t>(26, 26))); // the progress total grew with the refills
  EXPECT_EQ(s.rejections.at(0).stage, RejectionStage::trace);
  EXPECT_EQ(s.rejections.at(0).count, 3);
  ASSERT_EQ(s.ranked.size(), 2U);
  EXPECT_EQ(s.ranked[0].threads_per_block, 64);
  EXPECT_EQ(s.ranked[1].threads_per_block, 64);
}

TEST(Suggest, EveryCandidateTooLongToTraceIsAProblemError) {
  // tile=64, block 32x1, smem=0, pad=0: one candidate, too long to trace.
  SuggestOptions options;
  options.fixed = Config::parse("smem=0,tile=64,pad=0,block_x=32,block_y=1");
  options.predictor = TooLongPredictor{};
  try {
    suggest({"transpose", 1024}, example_profile(), options);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_STREQ(
        error.what(),
        "transpose n=1024 f32: k.cu:7: a block makes more than 1048576 warp memory accesses: too long to trace");
  }
}

TEST(Suggest, ArraysLargerThanTheDeviceAreAProblemError) {
  DeviceProfile small = example_profile();
  small.device.global_memory_bytes = 1 << 20;
  SuggestOptions options;
  options.predictor = ThreadCountPredictor{};
  try {
    suggest({"transpose", 1024}, small, options);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    // in + out, 1024 x 1024 f32 each.
    EXPECT_STREQ(error.what(), "transpose n=1024 f32: arrays need 8388608 bytes, the device has 1048576");
  }
}

TEST(Suggest, BadProblemsAndPinsThrowInputError) {
  SuggestOptions options;
  options.predictor = ThreadCountPredictor{};
  const DeviceProfile profile = example_profile();
  EXPECT_THROW(suggest({"transpose", 0}, profile, options), InputError);
  EXPECT_THROW(suggest({"nope", 64}, profile, options), InputError);
  options.fixed = Config::parse("vector=4");
  EXPECT_THROW(suggest({"transpose", 64}, profile, options), InputError);
  options.fixed = Config::parse("stride=3");
  const Suggestion copy = suggest({"copy", 4096}, profile, options);
  for (const Candidate& c : copy.ranked) {
    EXPECT_EQ(c.config.get("stride"), 3);
    EXPECT_EQ(c.config.get("vector"), 1); // the copy rule for stride > 1
  }
  options.top = 0;
  EXPECT_THROW(suggest({"copy", 4096}, profile, options), InputError);
}

TEST(Suggest, PredictorFailureSurfacesFromTheWorkerThreads) {
  SuggestOptions options;
  options.threads = 2;
  options.predictor = [](const KernelPattern&, const DeviceProfile&, const SimulationOptions&) -> Prediction {
    throw InputError("predictor refused");
  };
  EXPECT_THROW(suggest({"copy", 4096}, example_profile(), options), InputError);
}

TEST(SuggestWithModel, PadOneRemovesTheColumnReadConflict) {
  // 32x32 f32 tile: the column read of buf[c+tx][r+ty] strides by (32 + pad) words, so lanes
  // land in banks (32 + pad) * lane mod 32: pad=0 -> one bank (32-way), pad=1 -> all 32 banks,
  // pad=2 -> 2-way, pad=4 -> 4-way. The staged, pad=1 config must win, and its reason must
  // name the 32-way conflict it removes against its worst neighbour.
  SuggestOptions options;
  options.fixed = Config::parse("tile=32,block_x=32,block_y=8");
  const Suggestion s = suggest({"transpose", 2048}, example_profile(), options);
  ASSERT_FALSE(s.ranked.empty());
  EXPECT_EQ(s.ranked[0].config.to_string(), "block_x=32,block_y=8,pad=1,smem=1,tile=32");
  const CounterSummary best = summarize(s.ranked[0].prediction);
  EXPECT_DOUBLE_EQ(best.shared_load_ways.value(), 1.0);
  EXPECT_NE(s.ranked[0].reason.find("32-way bank conflict"), std::string::npos) << s.ranked[0].reason;
  EXPECT_EQ(s.feasible, 5); // smem=0 with pad=0, smem=1 with four pads
}

} // namespace
} // namespace cachewise::advisor

namespace cachewise::advisor {
namespace {

TEST(Suggest, CandidatesWhoseBandReachesTheBestsAreTies) {
  // Predicted time = threads per block; the transpose band says measured / predicted lies in
  // [0.5, 1.1]. The best (32 threads) reaches 35.2 us; 64 threads reach down to 32 us (a tie),
  // 128 threads to 64 us (not one).
  DeviceProfile profile = example_profile();
  profile.calibration.time_error_bands["transpose"] = {0.5, 1.1, 10, "test"};
  SuggestOptions options;
  options.fixed = Config::parse("smem=0,tile=64,pad=0");
  options.predictor = ThreadCountPredictor{};
  options.top = 100;
  const Suggestion s = suggest({"transpose", 1024}, profile, options);
  EXPECT_EQ(s.calibration, "example-h200-run21");
  ASSERT_TRUE(s.time_error_band.has_value());
  const Candidate& best = s.ranked.front();
  ASSERT_EQ(best.threads_per_block, 32);
  EXPECT_DOUBLE_EQ(best.time_band->low_us, 16.0);
  EXPECT_DOUBLE_EQ(best.time_band->high_us, 35.2);
  EXPECT_FALSE(best.tie_with_best);
  for (const Candidate& candidate : s.ranked) {
    if (candidate.threads_per_block == 64) EXPECT_TRUE(candidate.tie_with_best) << candidate.config.to_string();
    if (candidate.threads_per_block >= 128) EXPECT_FALSE(candidate.tie_with_best) << candidate.config.to_string();
  }
  const nlohmann::json json = suggestion_to_json(s);
  EXPECT_EQ(json.at("calibration"), "example-h200-run21");
  EXPECT_DOUBLE_EQ(json.at("ranked")[0].at("time_band_us").at("high").get<double>(), 35.2);
}

TEST(Suggest, WithoutABandNothingIsATie) {
  DeviceProfile profile = example_profile();
  profile.calibration.time_error_bands.clear();
  SuggestOptions options;
  options.fixed = Config::parse("smem=0,tile=64,pad=0");
  options.predictor = ThreadCountPredictor{};
  options.top = 100;
  const Suggestion s = suggest({"transpose", 1024}, profile, options);
  for (const Candidate& candidate : s.ranked) {
    EXPECT_FALSE(candidate.time_band.has_value());
    EXPECT_FALSE(candidate.tie_with_best);
  }
}

} // namespace
} // namespace cachewise::advisor
