// The generalized header (size buckets over several keys) and Kernel Tuner's cache file,
// each parsed back against hand-derived content.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

#include "cachewise/tuner.hpp"
#include "cachewise/tuner/kernel_tuner_cache.hpp"

namespace cachewise::tuner {
namespace {

HeaderInfo info() { return {"Fake GPU", "profiles/h200.json", "model", "advisor tune --spec t.json"}; }

HeaderBucket bucket(std::int64_t width, std::int64_t height, const char* config, double time_ms, bool measured) {
  return {{{"width", width}, {"height", height}}, {}, Config::parse(config), measured, time_ms, "note"};
}

TEST(BucketHeader, MacrosAndConstexprValuesPerBucket) {
  const std::string header = render_bucket_header(
      "transpose_tiled",
      {bucket(8192, 8192, "TILE_DIM=64,PAD=1", 0.3, false), bucket(1024, 1024, "TILE_DIM=32,PAD=1", 0.0075, false)},
      info());
  // Sorted by sizes; one macro per bucket and key, named by the bucket's sizes.
  EXPECT_NE(header.find("#define CACHEWISE_TUNED_TRANSPOSE_TILED_FROM_MEASUREMENT 0\n"
                        "#define CACHEWISE_TUNED_TRANSPOSE_TILED_WIDTH1024_HEIGHT1024_PAD 1\n"
                        "#define CACHEWISE_TUNED_TRANSPOSE_TILED_WIDTH1024_HEIGHT1024_TILE_DIM 32\n"
                        "#define CACHEWISE_TUNED_TRANSPOSE_TILED_WIDTH8192_HEIGHT8192_PAD 1\n"
                        "#define CACHEWISE_TUNED_TRANSPOSE_TILED_WIDTH8192_HEIGHT8192_TILE_DIM 64\n"),
            std::string::npos)
      << header;
  EXPECT_NE(
      header.find(
          "// width = 1024, height = 1024: predicted 0.0075 ms; note\n"
          "inline constexpr Config width1024_height1024{/*width*/ 1024, /*height*/ 1024, /*PAD*/ 1, /*TILE_DIM*/ 32, "
          "/*time_ms*/ 0.0075};\n"),
      std::string::npos)
      << header;
  EXPECT_NE(header.find("constexpr const Config& config_for(std::int64_t width, std::int64_t height) {"),
            std::string::npos);
  EXPECT_NE(
      header.find("const double distance = size_ratio(width, config->width) * size_ratio(height, config->height);"),
      std::string::npos);
  EXPECT_NE(header.find("STATIC RECOMMENDATION, NOT MEASURED"), std::string::npos);
  EXPECT_NE(header.find("namespace cachewise_tuned::transpose_tiled {"), std::string::npos);
}

TEST(BucketHeader, RejectsWhatCannotBeOneHeader) {
  EXPECT_THROW(render_bucket_header("t", {}, info()), InputError);
  EXPECT_THROW(render_bucket_header("t", {bucket(1, 1, "A=1", 1, true), bucket(1, 1, "A=2", 1, true)}, info()),
               InputError);
  EXPECT_THROW(render_bucket_header("t", {bucket(1, 1, "A=1", 1, true), bucket(2, 2, "A=2", 1, false)}, info()),
               InputError);
  EXPECT_THROW(render_bucket_header("t", {bucket(1, 1, "width=1", 1, true)}, info()),
               InputError); // a size key as a parameter
  EXPECT_THROW(render_bucket_header("not an identifier", {bucket(1, 1, "A=1", 1, true)}, info()), InputError);
  HeaderBucket other = bucket(2, 2, "A=1", 1, true);
  other.sizes = {{"n", 2}};
  EXPECT_THROW(render_bucket_header("t", {bucket(1, 1, "A=1", 1, true), other}, info()), InputError);
}

TEST(KernelTunerCache, KeysInParameterOrderAndFailuresAsKernelTunerWritesThem) {
  SearchSpace space;
  space.add_parameter("TILE_DIM", {16, 32});
  space.add_parameter("BLOCK_ROWS", {4, 8});
  space.add_parameter("PAD", {0, 1});
  TuningResult result;
  Evaluation ok;
  ok.config = Config::parse("TILE_DIM=16,BLOCK_ROWS=4,PAD=0");
  ok.ok = true;
  ok.samples_ms = {0.5, 0.25, 0.75};
  ok.time_ms.median = 0.5;
  Evaluation compile;
  compile.config = Config::parse("TILE_DIM=32,BLOCK_ROWS=8,PAD=1");
  compile.failure = "threw: does not compile: transpose.cu(3): error: nope";
  Evaluation runtime;
  runtime.config = Config::parse("TILE_DIM=32,BLOCK_ROWS=4,PAD=1");
  runtime.failure = "killed by signal 11 (Segmentation fault)";
  result.evaluations = {ok, compile, runtime};
  const nlohmann::json cache =
      kernel_tuner_cache(result, space, {"NVIDIA H200", "transpose_tiled", {1024, 512}, "2026-12-01T20:00:00Z"});

  EXPECT_EQ(cache.at("schema_version"), "1.0.0");
  EXPECT_EQ(cache.at("device_name"), "NVIDIA H200");
  EXPECT_EQ(cache.at("kernel_name"), "transpose_tiled");
  EXPECT_EQ(cache.at("problem_size"), nlohmann::json::array({1024, 512}));
  EXPECT_EQ(cache.at("tune_params_keys"), nlohmann::json::array({"TILE_DIM", "BLOCK_ROWS", "PAD"}));
  EXPECT_EQ(cache.at("tune_params").at("BLOCK_ROWS"), nlohmann::json::array({4, 8}));
  EXPECT_EQ(cache.at("objective"), "time");
  ASSERT_EQ(cache.at("cache").size(), 3u);
  const nlohmann::json& line = cache.at("cache").at("16,4,0"); // TILE_DIM, BLOCK_ROWS, PAD
  EXPECT_EQ(line.at("TILE_DIM"), 16);
  EXPECT_EQ(line.at("BLOCK_ROWS"), 4);
  EXPECT_EQ(line.at("PAD"), 0);
  EXPECT_EQ(line.at("time"), 0.5);
  EXPECT_EQ(line.at("times"), nlohmann::json::array({0.5, 0.25, 0.75}));
  EXPECT_EQ(line.at("benchmark_time"), 1.5);
  EXPECT_EQ(line.at("compile_time"), 0.0);
  EXPECT_EQ(line.at("timestamp"), "2026-12-01T20:00:00Z");
  EXPECT_EQ(cache.at("cache").at("32,8,1").at("time"), "CompilationFailedConfig");
  EXPECT_EQ(cache.at("cache").at("32,4,1").at("time"), "RuntimeFailedConfig");
}

} // namespace
} // namespace cachewise::tuner
