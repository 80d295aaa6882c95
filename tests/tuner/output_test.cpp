#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/tuner.hpp"
#include "fake_workload.hpp"

namespace cachewise::tuner {
namespace {

TunedEntry entry(std::int64_t n, const char* config, double time_ms, bool measured) {
  ProblemSpec problem = testing::fake_problem();
  problem.n = n;
  return {problem, Config::parse(config), measured, time_ms, "note for n=" + std::to_string(n)};
}

HeaderInfo info() { return {"GPU \"X\"", "profiles/x.json", "model-ranked (batch 3)", "advisor tune --pattern fake"}; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RenderHeader, StaticRecommendationSaysSoAndBucketsByLogDistance) {
  const std::string header =
      render_header({entry(4096, "a=1,b=2", 0.5, false), entry(1024, "a=3,b=2", 0.125, false)}, info());
  EXPECT_TRUE(contains(header, "#define CACHEWISE_TUNED_FAKE_F32_FROM_MEASUREMENT 0\n")) << header;
  EXPECT_TRUE(contains(header, "STATIC RECOMMENDATION, NOT MEASURED")) << header;
  EXPECT_TRUE(contains(header, "inline constexpr bool from_measurement = false;")) << header;
  EXPECT_TRUE(contains(header, "namespace cachewise_tuned::fake_f32 {")) << header;
  EXPECT_TRUE(contains(header, "inline constexpr const char* device_name = \"GPU \\\"X\\\"\";")) << header;
  EXPECT_TRUE(contains(header, "  std::int64_t a;\n  std::int64_t b;\n")) << header;
  // Entries sorted by n; the boundary between 1024 and 4096 is their geometric mean 2048.
  EXPECT_TRUE(contains(header,
                       "// n = 1024: predicted 0.125 ms; note for n=1024\n"
                       "inline constexpr Config n1024{/*n*/ 1024, /*a*/ 3, /*b*/ 2, /*time_ms*/ 0.125};\n"))
      << header;
  EXPECT_TRUE(contains(header, "  if (n < 2048) return n1024;\n  return n4096;\n")) << header;
  EXPECT_LT(header.find("n1024{"), header.find("n4096{"));
}

TEST(RenderHeader, MeasuredHeaderSetsTheMacro) {
  const std::string header = render_header(
      {entry(1000, "a=3,b=2", 0.25, true), entry(3000, "a=3,b=1", 1, true), entry(9000, "a=2,b=2", 4, true)}, info());
  EXPECT_TRUE(contains(header, "#define CACHEWISE_TUNED_FAKE_F32_FROM_MEASUREMENT 1\n")) << header;
  EXPECT_FALSE(contains(header, "STATIC"));
  // sqrt(1000*3000) = 1732.05 -> 1733; sqrt(3000*9000) = 5196.15 -> 5197.
  EXPECT_TRUE(contains(header, "  if (n < 1733) return n1000;\n  if (n < 5197) return n3000;\n  return n9000;\n"))
      << header;
}

TEST(RenderHeader, RejectsWhatCannotBeOneHeader) {
  EXPECT_THROW(render_header({}, info()), InputError);
  EXPECT_THROW(render_header({entry(1024, "a=1,b=2", 1, true), entry(1024, "a=1,b=2", 1, true)}, info()), InputError);
  EXPECT_THROW(render_header({entry(1024, "a=1,b=2", 1, true), entry(2048, "a=1", 1, true)}, info()), InputError);
  EXPECT_THROW(render_header({entry(1024, "a=1,b=2", 1, true), entry(2048, "a=1,b=2", 1, false)}, info()), InputError);
  TunedEntry other_family = entry(2048, "a=1,b=2", 1, true);
  other_family.problem.family = "copy";
  EXPECT_THROW(render_header({entry(1024, "a=1,b=2", 1, true), other_family}, info()), InputError);
  EXPECT_THROW(render_header({entry(1024, "time_ms=3", 1, true)}, info()), InputError);
}

TuningResult two_candidate_result(bool second_ok) {
  TuningResult result;
  result.problem = testing::fake_problem();
  result.strategy = "exhaustive";
  result.space_size = 2;
  result.stop_reason = "space exhausted (2 candidates)";
  Evaluation failed;
  failed.config = Config::parse("a=1,b=1");
  failed.failure = "exited with code 4";
  Evaluation ok;
  ok.config = Config::parse("a=3,b=2");
  ok.ok = second_ok;
  ok.samples_ms = {1.0, 1.0, 1.0, 1.0, 1.0};
  ok.time_ms = estimate_median(ok.samples_ms); // 5 samples: unbounded interval
  result.evaluations = {failed, ok};
  if (second_ok) result.best = 1;
  return result;
}

TEST(TunedEntry, TakesTheBestAndDescribesTheRun) {
  const TunedEntry tuned = tuned_entry(two_candidate_result(true));
  EXPECT_TRUE(tuned.measured);
  EXPECT_EQ(tuned.config, Config::parse("a=3,b=2"));
  EXPECT_DOUBLE_EQ(tuned.time_ms, 1.0);
  EXPECT_EQ(tuned.note,
            "median of 5 samples, CI [-inf, inf] ms; 2 of 2 candidates evaluated (exhaustive, space "
            "exhausted (2 candidates)), 1 failed");
  EXPECT_THROW(tuned_entry(two_candidate_result(false)), InputError);
}

TEST(ResultsJson, NamesTheBestAndWritesUnboundedIntervalsAsNull) {
  const nlohmann::json json = results_to_json(two_candidate_result(true));
  EXPECT_EQ(json["best"]["config"], "a=3,b=2");
  EXPECT_EQ(json["evaluations"][0]["failure"], "exited with code 4");
  EXPECT_TRUE(json["evaluations"][1]["ci_low_ms"].is_null());
  EXPECT_EQ(json["evaluations"][1]["samples"], 5);
  EXPECT_TRUE(results_to_json(two_candidate_result(false))["best"].is_null());
}

} // namespace
} // namespace cachewise::tuner
