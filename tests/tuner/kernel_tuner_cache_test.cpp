// Reading Kernel Tuner cache files (written here by hand in Kernel Tuner's format), matching
// them to a parameter space, comparing the model's ranking with them, and resuming from them.
#include <cmath>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/tuner.hpp"
#include "cachewise/tuner/cache_comparison.hpp"
#include "fake_workload.hpp"

namespace cachewise::tuner {
namespace {

// As Kernel Tuner 1.x writes one: every entry names its parameters; a failure's "time" holds
// the error's name (Kernel Tuner 0.4.3 to 1.0) or an "__error__" field does (later), and before
// 0.4.3 a failure's time was 1e20.
constexpr const char* kCache = R"({
"device_name": "NVIDIA H200",
"kernel_name": "transpose_tiled",
"problem_size": [4096, 4096],
"tune_params_keys": ["TILE_DIM", "BLOCK_ROWS"],
"tune_params": {"TILE_DIM": [16, 32], "BLOCK_ROWS": [4, 8]},
"objective": "time",
"cache": {
"16,4": {"TILE_DIM": 16, "BLOCK_ROWS": 4, "time": 0.25, "times": [0.3, 0.25, 0.2], "compile_time": 900.0, "timestamp": "2024-01-01 00:00:00+00:00"},
"16,8": {"TILE_DIM": 16, "BLOCK_ROWS": 8, "time": "InvalidConfig", "times": []},
"32,4": {"TILE_DIM": 32, "BLOCK_ROWS": 4, "__error__": "CompilationFailedConfig", "compile_time": 12.0},
"32,8": {"TILE_DIM": 32, "BLOCK_ROWS": 8, "time": 1e20}
}
})";

TEST(KernelTunerCacheFile, ReadsMeasuredFailedAndSkippedEntries) {
  const KernelTunerCache cache = parse_kernel_tuner_cache(kCache, "test.json");
  EXPECT_TRUE(cache.complete);
  EXPECT_EQ(cache.device_name, "NVIDIA H200");
  EXPECT_EQ(cache.kernel_name, "transpose_tiled");
  EXPECT_EQ(cache.problem_size, "[4096,4096]");
  EXPECT_EQ(cache.parameters, (std::vector<std::string>{"TILE_DIM", "BLOCK_ROWS"}));
  ASSERT_EQ(cache.entries.size(), 4u);
  const KernelTunerEntry& measured = *cache.find("16,4");
  EXPECT_EQ(measured.value_texts, (std::vector<std::string>{"16", "4"}));
  EXPECT_EQ(measured.values[0], 16);
  EXPECT_EQ(measured.time_ms, 0.25);
  EXPECT_EQ(measured.times_ms, (std::vector<double>{0.3, 0.25, 0.2}));
  EXPECT_TRUE(measured.error.empty());
  EXPECT_EQ(cache.find("16,8")->error, "InvalidConfig");
  EXPECT_FALSE(cache.find("16,8")->time_ms);
  EXPECT_EQ(cache.find("32,4")->error, "CompilationFailedConfig");
  EXPECT_EQ(cache.find("32,8")->error, "time 1e20");
  EXPECT_EQ(nlohmann::json::parse(measured.json).at("timestamp"), "2024-01-01 00:00:00+00:00");
}

TEST(KernelTunerCacheFile, ReadsAFileStillBeingWritten) {
  // Kernel Tuner writes the header without the last "}\n}", then appends "\n<entry>," per
  // configuration; a run killed mid-write leaves half a line, which is dropped.
  const std::string open = R"({
"device_name": "NVIDIA H200",
"kernel_name": "k",
"problem_size": 100,
"tune_params_keys": ["block_size_x"],
"tune_params": {"block_size_x": [128, 256, 512]},
"objective": "time",
"cache": {
"128": {"block_size_x": 128, "time": 0.5, "times": [0.5]},
"256": {"block_size_x": 256, "time": 0.4, "times": [0.4]},)";
  const KernelTunerCache running = parse_kernel_tuner_cache(open, "open.json");
  EXPECT_FALSE(running.complete);
  EXPECT_EQ(running.entries.size(), 2u);
  EXPECT_EQ(running.problem_size, "100");
  const KernelTunerCache killed =
      parse_kernel_tuner_cache(open + "\n\"512\": {\"block_size_x\": 512, \"ti", "killed.json");
  EXPECT_FALSE(killed.complete);
  ASSERT_EQ(killed.entries.size(), 2u);
  EXPECT_EQ(killed.entries[1].time_ms, 0.4);
  // Nothing cached yet: the header alone.
  EXPECT_TRUE(parse_kernel_tuner_cache(open.substr(0, open.find("\n\"128\"")), "empty.json").entries.empty());
}

TEST(KernelTunerCacheFile, ValuesAsKernelTunerPrintsThemAndFromTheKey) {
  const KernelTunerCache cache = parse_kernel_tuner_cache(R"({"tune_params_keys": ["x", "flag", "name", "f"],
    "cache": {"4,True,alg_1,2.0": {"x": 4, "flag": true, "name": "alg_1", "f": 2.0, "time": 1.0},
              "8,False,alg_2,2.5": {"time": 2.0}}})",
                                                          "values.json");
  const KernelTunerEntry& fields = *cache.find("4,True,alg_1,2.0");
  EXPECT_EQ(fields.value_texts, (std::vector<std::string>{"4", "True", "alg_1", "2.0"}));
  EXPECT_EQ(fields.values[0], 4);
  EXPECT_FALSE(fields.values[1]); // a boolean is no integer
  EXPECT_FALSE(fields.values[2]);
  EXPECT_EQ(fields.values[3], 2); // an integral float is
  // No parameter fields: the key's parts, in tune_params_keys order.
  const KernelTunerEntry& key_only = *cache.find("8,False,alg_2,2.5");
  EXPECT_EQ(key_only.value_texts, (std::vector<std::string>{"8", "False", "alg_2", "2.5"}));
  EXPECT_EQ(key_only.values[0], 8);
  EXPECT_FALSE(key_only.values[3]);
}

TEST(KernelTunerCacheFile, BadInputNamesTheProblem) {
  const auto message = [](const std::string& text) {
    try {
      parse_kernel_tuner_cache(text, "bad.json");
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("{\"a\": [1, 2"),
            "bad.json: not JSON, nor a Kernel Tuner cache file cut short while being written");
  EXPECT_EQ(message("[1, 2]"), "bad.json: not a Kernel Tuner cache file (not a JSON object)");
  EXPECT_EQ(message(R"({"cache": {}})"), "bad.json: not a Kernel Tuner cache file (no \"tune_params_keys\" list)");
  EXPECT_EQ(message(R"({"tune_params_keys": ["x"]})"), "bad.json: not a Kernel Tuner cache file (no \"cache\" object)");
  EXPECT_EQ(message(R"({"tune_params_keys": ["x"], "cache": {"1": {"x": 1}}})"),
            "bad.json: cache entry \"1\" has no \"time\" and no error");
  EXPECT_EQ(message(R"({"tune_params_keys": ["x"], "cache": {"1": {"x": 1, "time": -0.5}}})"),
            "bad.json: cache entry \"1\": \"time\" must be a positive number of ms, got -0.5");
  EXPECT_EQ(message(R"({"tune_params_keys": ["x"], "cache": {"1": {"x": 1, "time": "fast"}}})"),
            "bad.json: cache entry \"1\": \"time\" is \"fast\", not a number or an error name");
  EXPECT_EQ(message(R"({"tune_params_keys": ["x", "y"], "cache": {"1": {"x": 1, "time": 1.0}}})"),
            "bad.json: cache entry \"1\" has no value for tune parameter \"y\"");
  EXPECT_EQ(message(R"({"tune_params_keys": ["x"], "cache": {"1": {"x": 1, "time": 1.0, "times": [1.0, null]}}})"),
            "bad.json: cache entry \"1\": \"times\" holds null, not a positive number of ms");
  EXPECT_THROW(load_kernel_tuner_cache("/nonexistent/cache.json"), InputError);
}

/// TILE_DIM in {16, 32, 64}, BLOCK_ROWS in {4, 8}, PAD in {0, 1}, TILE_DIM % BLOCK_ROWS == 0 is
/// always true here, so the constraint is TILE_DIM / BLOCK_ROWS <= 8 (drops 64,4).
SearchSpace transpose_space() {
  SearchSpace space;
  space.add_parameter("TILE_DIM", {16, 32, 64});
  space.add_parameter("BLOCK_ROWS", {4, 8});
  space.add_parameter("PAD", {0, 1});
  space.add_constraint(
      {"TILE_DIM", "BLOCK_ROWS"}, [](const Config& c) { return c.get("TILE_DIM") / c.get("BLOCK_ROWS") <= 8; },
      "TILE_DIM / BLOCK_ROWS <= 8");
  return space;
}

TEST(CacheMatch, ExpressibleConfigurationsAndWhyTheOthersAreNot) {
  // PAD is missing from the cache: refused, it takes two values in the space.
  const KernelTunerCache no_pad = parse_kernel_tuner_cache(kCache, "test.json");
  try {
    match_cache_to_space(no_pad, transpose_space());
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(),
                 "the spec's parameter PAD (0, 1) is not in the cache's tune_params_keys (TILE_DIM, BLOCK_ROWS)");
  }
  const KernelTunerCache cache = parse_kernel_tuner_cache(R"({
    "tune_params_keys": ["TILE_DIM", "BLOCK_ROWS", "PAD", "use_cmem", "read_only"],
    "cache": {
      "16,4,0,1,0": {"TILE_DIM": 16, "BLOCK_ROWS": 4, "PAD": 0, "use_cmem": 1, "read_only": 0, "time": 1.0},
      "32,8,1,1,0": {"TILE_DIM": 32, "BLOCK_ROWS": 8, "PAD": 1, "use_cmem": 1, "read_only": 0, "time": "RuntimeFailedConfig"},
      "16,4,0,1,1": {"TILE_DIM": 16, "BLOCK_ROWS": 4, "PAD": 0, "use_cmem": 1, "read_only": 1, "time": 1.0},
      "48,8,0,1,0": {"TILE_DIM": 48, "BLOCK_ROWS": 8, "PAD": 0, "use_cmem": 1, "read_only": 0, "time": 1.0},
      "64,4,0,1,0": {"TILE_DIM": 64, "BLOCK_ROWS": 4, "PAD": 0, "use_cmem": 1, "read_only": 0, "time": 1.0},
      "16,4,True,1,0": {"TILE_DIM": 16, "BLOCK_ROWS": 4, "PAD": true, "use_cmem": 1, "read_only": 0, "time": 1.0}
    }})",
                                                          "cache.json");
  // read_only takes two values in the cache and the space has no such parameter: nothing matches.
  const CacheMatch unfixed = match_cache_to_space(cache, transpose_space());
  EXPECT_TRUE(unfixed.matched.empty());
  ASSERT_EQ(unfixed.unmatched.size(), 6u);
  EXPECT_EQ(unfixed.unmatched.front().entry->key, "16,4,0,1,0");
  EXPECT_EQ(unfixed.unmatched.front().reason, "read_only=0: the spec has no parameter read_only");
  // Fixed by the spec (a define read_only=0): the entries with that value can match.
  const CacheMatch match = match_cache_to_space(cache, transpose_space(), {{"read_only", 0}});
  EXPECT_EQ(match.ignored_parameters, (std::vector<std::string>{"use_cmem=1"}));
  ASSERT_EQ(match.matched.size(), 2u); // entries by key: "16,4,0,1,0" before "32,8,1,1,0"
  EXPECT_EQ(match.matched[0].config, Config::parse("TILE_DIM=16,BLOCK_ROWS=4,PAD=0"));
  EXPECT_EQ(match.matched[1].config, Config::parse("TILE_DIM=32,BLOCK_ROWS=8,PAD=1"));
  std::map<std::string, std::string> reasons;
  for (const UnmatchedEntry& unmatched : match.unmatched) reasons[unmatched.entry->key] = unmatched.reason;
  EXPECT_EQ(reasons, (std::map<std::string, std::string>{
                         {"16,4,0,1,1", "read_only=1: the spec fixes read_only=0"},
                         {"48,8,0,1,0", "TILE_DIM=48 is not among the spec's values (16, 32, 64)"},
                         {"64,4,0,1,0", "breaks the spec's constraint TILE_DIM / BLOCK_ROWS <= 8"},
                         {"16,4,True,1,0", "PAD=True is not an integer"},
                     }));
  // A space parameter with one value needs no cache column: it is set.
  SearchSpace one_pad;
  one_pad.add_parameter("TILE_DIM", {16, 32});
  one_pad.add_parameter("BLOCK_ROWS", {4, 8});
  one_pad.add_parameter("PAD", {1});
  const CacheMatch padded = match_cache_to_space(no_pad, one_pad);
  ASSERT_EQ(padded.matched.size(), 4u);
  EXPECT_EQ(padded.matched[0].config, Config::parse("TILE_DIM=16,BLOCK_ROWS=4,PAD=1"));
}

/// Four configs of `a` with measured times, in Kernel Tuner's format.
KernelTunerCache four_measured(const std::string& time_of_a1) {
  return parse_kernel_tuner_cache(R"({"tune_params_keys": ["a"], "cache": {
      "1": {"a": 1, "time": )" + time_of_a1 +
                                      R"(},
      "2": {"a": 2, "time": 0.1},
      "3": {"a": 3, "time": 0.4},
      "4": {"a": 4, "time": 0.3}}})",
                                  "four.json");
}

SearchSpace a_space(std::vector<std::int64_t> values) {
  SearchSpace space;
  space.add_parameter("a", std::move(values));
  return space;
}

std::vector<PredictedTime> predicted_in_order(std::vector<std::int64_t> values) {
  std::vector<PredictedTime> ranked;
  for (std::size_t i = 0; i < values.size(); ++i)
    ranked.push_back({Config{{"a", values[i]}}, 1.0 + static_cast<double>(i)});
  return ranked;
}

TEST(CompareRanking, FourCandidatesDerivedByHand) {
  const KernelTunerCache cache = four_measured("0.2");
  const CacheMatch match = match_cache_to_space(cache, a_space({1, 2, 3, 4}));
  // The model ranks a = 1, 2, 3, 4 (1, 2, 3, 4 µs); measured 0.2, 0.1, 0.4, 0.3 ms.
  const RankingComparison comparison = compare_ranking(predicted_in_order({1, 2, 3, 4}), match);
  ASSERT_EQ(comparison.candidates.size(), 4u);
  EXPECT_EQ(comparison.measured, 4u);
  EXPECT_EQ(comparison.ranked_not_cached, 0u);
  EXPECT_EQ(comparison.candidates[comparison.best].config, Config({{"a", 2}}));
  EXPECT_EQ(comparison.candidates[comparison.best].predicted_rank, 2u);
  // Measured ranks: 0.2 -> 2, 0.1 -> 1, 0.4 -> 4, 0.3 -> 3.
  EXPECT_EQ(comparison.candidates[0].measured_rank, 2u);
  EXPECT_EQ(comparison.candidates[2].measured_rank, 4u);
  EXPECT_DOUBLE_EQ(*comparison.top1_over_best, 2.0);        // 0.2 / 0.1
  EXPECT_DOUBLE_EQ(comparison.best_of_top3_over_best, 1.0); // the best is second
  // d = rank differences (1-2, 2-1, 3-4, 4-3): sum d^2 = 4; 1 - 6 * 4 / (4 * 15) = 0.6.
  EXPECT_NEAR(*comparison.spearman, 0.6, 1e-12);
  EXPECT_EQ(comparison.evaluations_to_within, 2u);
}

TEST(CompareRanking, AFailedFirstPickAndCandidatesOutsideEitherSide) {
  const KernelTunerCache cache = four_measured("\"RuntimeFailedConfig\"");
  // The model ranks a = 1, 5, 3, 4 (not 2: as if it rejected it); the cache lacks a = 5.
  const CacheMatch match = match_cache_to_space(cache, a_space({1, 2, 3, 4, 5}));
  const RankingComparison comparison = compare_ranking(predicted_in_order({1, 5, 3, 4}), match);
  // Compared in model order: 1 (failed), 3 (0.4), 4 (0.3); a=2 is cached but not ranked.
  ASSERT_EQ(comparison.candidates.size(), 3u);
  EXPECT_EQ(comparison.candidates[0].error, "RuntimeFailedConfig");
  EXPECT_EQ(comparison.candidates[1].predicted_rank, 3u);
  EXPECT_EQ(comparison.ranked_not_cached, 1u);
  EXPECT_EQ(comparison.not_ranked, (std::vector<Config>{Config({{"a", 2}})}));
  EXPECT_EQ(comparison.measured, 2u);
  EXPECT_FALSE(comparison.top1_over_best);                  // the model's first failed
  EXPECT_DOUBLE_EQ(comparison.best_of_top3_over_best, 1.0); // 0.3 is among the first measured
  EXPECT_NEAR(*comparison.spearman, -1.0, 1e-12);           // 3 before 4 predicted, 4 faster
  EXPECT_EQ(comparison.evaluations_to_within, 3u);          // the failure counts: 1, 3, then 4
  const CacheMatch none = match_cache_to_space(cache, a_space({1}));
  EXPECT_THROW(compare_ranking(predicted_in_order({1}), none), InputError); // only a failure to compare
}

TEST(CompareRanking, SpearmanWithTies) {
  // y = 1, 1, 2, 3: ranks 1.5, 1.5, 3, 4; against 1, 2, 3, 4 (mean 2.5 both):
  // sum dx dy = 1.5 + 0.5 + 0.25 + 2.25 = 4.5, sum dx^2 = 5, sum dy^2 = 4.5 -> 4.5 / sqrt(22.5) = sqrt(0.9).
  EXPECT_NEAR(*spearman_correlation({1, 2, 3, 4}, {1, 1, 2, 3}), std::sqrt(0.9), 1e-12);
  EXPECT_FALSE(spearman_correlation({1}, {1}));
  EXPECT_FALSE(spearman_correlation({1, 2}, {3, 3}));
}

TEST(CachedRounds, MeasuredEntriesKeepTheirSamplesFailuresTheirError) {
  const KernelTunerCache cache = parse_kernel_tuner_cache(R"({"tune_params_keys": ["a", "b"], "cache": {
      "1,1": {"a": 1, "b": 1, "time": 4.0, "times": [4.0, 4.0, 4.0, 4.0, 4.0, 4.0]},
      "1,2": {"a": 1, "b": 2, "time": 3.0},
      "2,1": {"a": 2, "b": 1, "time": "CompilationFailedConfig"}}})",
                                                          "rounds.json");
  const std::vector<RoundRecord> rounds =
      cached_rounds(match_cache_to_space(cache, testing::fake_space()), "NVIDIA H200", {});
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_TRUE(rounds[0].ok);
  EXPECT_EQ(rounds[0].samples_ms.size(), 6u);
  EXPECT_TRUE(rounds[0].converged); // six equal samples: a 95% interval of width 0
  EXPECT_EQ(rounds[0].device.name, "NVIDIA H200");
  EXPECT_EQ(rounds[1].samples_ms, (std::vector<double>{3.0})); // no "times": the time itself
  EXPECT_FALSE(rounds[1].converged);                           // one sample has no interval
  EXPECT_FALSE(rounds[2].ok);
  EXPECT_EQ(rounds[2].failure, "Kernel Tuner: CompilationFailedConfig");
}

TEST(CachedRounds, AResumedRunMeasuresOnlyWhatTheCacheLacks) {
  // fake_time_ms: a=3,b=2 takes 1 ms, the best; the cache says a=1,b=1 took 0.5 ms (faster
  // than anything measured here) and a=2,b=1 failed: both are taken, not measured.
  const KernelTunerCache cache = parse_kernel_tuner_cache(R"({"tune_params_keys": ["a", "b"], "cache": {
      "1,1": {"a": 1, "b": 1, "time": 0.5, "times": [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]},
      "2,1": {"a": 2, "b": 1, "time": "RuntimeFailedConfig"}}})",
                                                          "resume.json");
  Options options;
  options.isolation = Isolation::in_process;
  options.measurement.min_repeats = 5;
  options.known_rounds = cached_rounds(match_cache_to_space(cache, testing::fake_space()), "", options.measurement);
  std::map<std::string, int> calls;
  Tuner tuner(testing::fake_problem(), testing::fake_space());
  tuner.set_measure([&](const Config& c, std::int64_t) {
    ++calls[c.to_string()];
    return testing::fake_time_ms(c);
  });
  tuner.set_options(options);
  const TuningResult result = tuner.tune();
  EXPECT_EQ(result.evaluations.size(), 11u);
  EXPECT_EQ(calls.size(), 9u); // 11 candidates, 2 from the cache
  EXPECT_FALSE(calls.contains("a=1,b=1"));
  EXPECT_FALSE(calls.contains("a=2,b=1"));
  ASSERT_NE(result.best_evaluation(), nullptr);
  EXPECT_EQ(result.best_evaluation()->config, Config::parse("a=1,b=1"));
  EXPECT_TRUE(result.best_evaluation()->from_journal);
  EXPECT_DOUBLE_EQ(result.best_evaluation()->time_ms.median, 0.5);

  // Written back: the cached entries as they were, the new ones beside them.
  const nlohmann::json written =
      kernel_tuner_cache(result, testing::fake_space(), {"", "fake", {1024}, "2026-12-02T00:00:00Z"}, &cache);
  ASSERT_EQ(written.at("cache").size(), 11u);
  EXPECT_EQ(written.at("cache").at("1,1").at("times").size(), 6u);
  EXPECT_FALSE(written.at("cache").at("1,1").contains("timestamp")); // the cache's own entry, unchanged
  EXPECT_EQ(written.at("cache").at("2,1").at("time"), "RuntimeFailedConfig");
  EXPECT_EQ(written.at("cache").at("3,2").at("time"), 1.0);
  EXPECT_EQ(written.at("cache").at("3,2").at("timestamp"), "2026-12-02T00:00:00Z");
}

TEST(CheckCacheContinues, TheSameDeviceKernelProblemAndParameters) {
  const KernelTunerCache cache = parse_kernel_tuner_cache(kCache, "test.json");
  SearchSpace space;
  space.add_parameter("TILE_DIM", {16, 32});
  space.add_parameter("BLOCK_ROWS", {4, 8});
  EXPECT_NO_THROW(check_cache_continues(cache, {"NVIDIA H200", "transpose_tiled", {4096, 4096}, ""}, space, "c.json"));
  const auto message = [&](const KernelTunerCacheInfo& info, const SearchSpace& tuned) {
    try {
      check_cache_continues(cache, info, tuned, "c.json");
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({"NVIDIA A100", "transpose_tiled", {4096, 4096}, ""}, space),
            "c.json: the cache holds another device (NVIDIA H200, not NVIDIA A100)");
  EXPECT_EQ(message({"NVIDIA H200", "copy", {4096, 4096}, ""}, space),
            "c.json: the cache holds another kernel (transpose_tiled, not copy)");
  EXPECT_EQ(message({"NVIDIA H200", "transpose_tiled", {1024, 4096}, ""}, space),
            "c.json: the cache holds another problem_size ([4096,4096], not [1024,4096])");
  SearchSpace reversed;
  reversed.add_parameter("BLOCK_ROWS", {4, 8});
  reversed.add_parameter("TILE_DIM", {16, 32});
  EXPECT_EQ(message({"NVIDIA H200", "transpose_tiled", {4096, 4096}, ""}, reversed),
            "c.json: the cache holds another tune_params_keys (TILE_DIM,BLOCK_ROWS, not BLOCK_ROWS,TILE_DIM)");
  // Kernel Tuner's problem_size 100 is this run's [100].
  const KernelTunerCache scalar =
      parse_kernel_tuner_cache(R"({"device_name": "d", "kernel_name": "k", "problem_size": 100,
      "tune_params_keys": ["a"], "cache": {}})",
                               "s.json");
  EXPECT_NO_THROW(check_cache_continues(scalar, {"d", "k", {100}, ""}, a_space({1}), "s.json"));
}

} // namespace
} // namespace cachewise::tuner
