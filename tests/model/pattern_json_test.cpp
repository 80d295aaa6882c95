// Custom patterns from JSON: the example files, round trips, and errors naming JSON paths.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"

namespace cachewise {
namespace {

using nlohmann::json;

std::filesystem::path example_pattern(const std::string& name) {
  return std::filesystem::path(CACHEWISE_EXAMPLE_PROFILE).parent_path().parent_path() / "patterns" / name;
}

SimulationOptions exact() {
  SimulationOptions options;
  options.work_budget = 0;
  return options;
}

void expect_rejected(const json& document, const std::string& message) {
  try {
    pattern_from_json(document);
    FAIL() << "accepted, expected: " << message;
  } catch (const InputError& error) {
    EXPECT_EQ(error.what(), message);
  }
}

json minimal() {
  return json::parse(R"({
    "name": "copy1d",
    "grid": {"x": 2},
    "block": {"x": 64},
    "arrays": [{"name": "a", "extents": [128]}, {"name": "b", "extents": [128]}],
    "phases": [{"accesses": [
      {"array": "a", "op": "load", "index": [{"block_x": 64, "thread_x": 1}]},
      {"array": "b", "op": "store", "index": [{"block_x": 64, "thread_x": 1}]}]}]
  })");
}

TEST(PatternJson, HandWrittenTransposeEqualsTheBuiltInFamily) {
  const KernelPattern built =
      build_pattern({"transpose", 256}, Config::parse("smem=1,tile=32,block_x=32,block_y=8,pad=1"));
  EXPECT_EQ(load_pattern(example_pattern("transpose-smem-256.json")), built);
}

TEST(PatternJson, EveryFamilyRoundTrips) {
  const std::vector<std::pair<ProblemSpec, std::string>> cases = {
      {{"transpose", 100, 60}, "smem=1,tile=32,block_x=32,block_y=8,pad=1"},
      {{"copy", 4096, 0, 0, DataType::f16}, "block=128,vector=8,ept=2"},
      {{"stencil2d", 128}, "radius=2,block_x=32,block_y=4,ept_y=2,smem=1"},
      {{"stencil3d", 64}, "mode=1,block_x=32,block_y=4,z_chunk=8"},
      {{"stencil3d", 64}, "mode=1,block_x=16,block_y=4,vector=2,z_chunk=8"},
      {{"gemm", 128}, "bm=64,bn=64,bk=8,tm=4,tn=4,pad=1"}};
  for (const auto& [problem, config] : cases) {
    const KernelPattern pattern = build_pattern(problem, Config::parse(config));
    EXPECT_EQ(pattern_from_json(pattern_to_json(pattern)), pattern) << problem.family;
  }
}

TEST(PatternJson, RowSumReadsOneLinePerLane) {
  // Thread i walks row i: the 32 lanes of a warp read 32 rows 4 KiB apart -> 32 sectors per
  // request; 1024 rows x 1024 columns / 32 lanes = 32768 load requests.
  const Prediction p =
      simulate(load_pattern(example_pattern("row-sum.json")), load_profile(CACHEWISE_EXAMPLE_PROFILE), exact());
  EXPECT_EQ(p.metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 32768.0);
  EXPECT_EQ(p.metric("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"), 32.0);
  // Each line is then reused by the next 31 columns from L1 (one block per SM, 32 KiB rows in flight).
  EXPECT_GT(p.metric("l1tex__t_sector_hit_rate.pct"), 80.0);
}

TEST(PatternJson, StridedGatherUsesQuotientsForColumnMajorReads) {
  // in[i % 1024][i / 1024]: neighbouring lanes read neighbouring rows -> one sector each.
  const Prediction p =
      simulate(load_pattern(example_pattern("strided-gather.json")), load_profile(CACHEWISE_EXAMPLE_PROFILE), exact());
  EXPECT_EQ(p.metric("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"), 32.0);
  EXPECT_EQ(p.metric("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio"), 4.0);
}

TEST(PatternJson, MinimalPatternDefaultsApply) {
  const KernelPattern pattern = pattern_from_json(minimal());
  EXPECT_EQ(pattern.grid.y, 1);
  EXPECT_EQ(pattern.arrays[0].element_bytes, 4);
  EXPECT_EQ(pattern.arrays[0].space, MemorySpace::global);
  EXPECT_TRUE(pattern.phases[0].accesses[0].predicated);
}

TEST(PatternJson, LoadsInFlightShortenTheLatencyChain) {
  // Each of the 2 blocks' warps issues 16 independent loads of one DRAM-cold line each. Four in
  // flight: 4 rounds of the load latency; sixteen in flight: 1 round. Nothing else changes.
  json document = minimal();
  document["phases"][0]["loops"] = {{{"name", "i"}, {"begin", 0}, {"end", 16}, {"step", 1}}};
  document["arrays"][0]["extents"] = {16 * 128};
  document["phases"][0]["accesses"][0]["index"][0]["i"] = 128;
  EXPECT_EQ(pattern_from_json(document).loads_in_flight, 4);
  const Prediction four = simulate(pattern_from_json(document), load_profile(CACHEWISE_EXAMPLE_PROFILE), exact());
  document["loads_in_flight"] = 16;
  const Prediction sixteen = simulate(pattern_from_json(document), load_profile(CACHEWISE_EXAMPLE_PROFILE), exact());
  EXPECT_EQ(four.metric("dram__bytes_read.sum"), sixteen.metric("dram__bytes_read.sum"));
  EXPECT_LT(sixteen.time_us, four.time_us);
  document["loads_in_flight"] = 0;
  expect_rejected(document, "pattern.loads_in_flight: expected an integer in [1, 256], got 0");
}

TEST(PatternJson, StoreBurstDefaultsToOneAndIsBounded) {
  json document = minimal();
  EXPECT_EQ(pattern_from_json(document).store_burst, 1);
  document["store_burst"] = 8;
  EXPECT_EQ(pattern_from_json(pattern_to_json(pattern_from_json(document))).store_burst, 8);
  document["store_burst"] = 257;
  expect_rejected(document, "pattern.store_burst: expected an integer in [1, 256], got 257");
}

TEST(PatternJson, OverheadInstructionsDefaultToNoneRoundTripAndAreNonNegative) {
  json document = minimal();
  EXPECT_EQ(pattern_from_json(document).overhead_instructions, 0.0);
  document["overhead_instructions"] = 2.5e6;
  EXPECT_EQ(pattern_from_json(pattern_to_json(pattern_from_json(document))).overhead_instructions, 2.5e6);
  document["overhead_instructions"] = -1;
  expect_rejected(document, "pattern.overhead_instructions: expected a number >= 0");
}

TEST(PatternJson, UnknownArrayNamesThePath) {
  json document = minimal();
  document["phases"][0]["accesses"][1]["array"] = "nope";
  expect_rejected(document, "pattern.phases[0].accesses[1].array: unknown array 'nope'");
}

TEST(PatternJson, WrongIndexRankNamesThePath) {
  json document = minimal();
  document["arrays"][0]["extents"] = {16, 8};
  expect_rejected(document, "pattern.phases[0].accesses[0].index: expected 2 indices (one per extent of 'a'), got 1");
}

TEST(PatternJson, LoopVariableOutOfScopeNamesThePath) {
  json document = minimal();
  document["phases"][0]["accesses"][0]["index"][0]["k"] = 2;
  expect_rejected(document, "pattern.phases[0].accesses[0].index[0].k: unknown loop variable 'k' (in scope: none)");
}

TEST(PatternJson, WrongTypesNameThePath) {
  json document = minimal();
  document["arrays"][1]["extents"][0] = "many";
  expect_rejected(document, "pattern.arrays[1].extents[0]: expected an integer, got \"many\"");
  document = minimal();
  document["phases"][0]["accesses"][0]["op"] = "read";
  expect_rejected(document, "pattern.phases[0].accesses[0].op: expected \"load\" or \"store\", got \"read\"");
  document = minimal();
  document["block"].erase("x");
  expect_rejected(document, "pattern.block.x: missing");
}

TEST(PatternJson, UnknownKeyIsRejected) {
  json document = minimal();
  document["arrays"][0]["extent"] = {4};
  expect_rejected(document, "pattern.arrays[0].extent: unknown key (valid: name, space, element_bytes, extents)");
}

TEST(PatternJson, VectorWiderThanSixteenBytesIsRejected) {
  json document = minimal();
  document["phases"][0]["accesses"][0]["vector"] = 8;
  expect_rejected(document, "pattern.phases[0].accesses[0].vector: a thread accesses at most 16 bytes at once, got 32");
}

TEST(PatternJson, MissingFileAndMalformedJsonAreInputErrors) {
  EXPECT_THROW(load_pattern("/nonexistent/pattern.json"), InputError);
}

} // namespace
} // namespace cachewise
