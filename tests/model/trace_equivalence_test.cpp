// One engine: every built-in family's pattern, replayed as a trace of its own addresses
// (trace_from_pattern), gives simulate_traced the counts simulate gives the pattern.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "cachewise/model/simulation/kernel_trace.hpp"
#include "cachewise/model.hpp"
#include "trace_from_pattern.hpp"

namespace cachewise {
namespace {

struct Case {
  ProblemSpec problem;
  std::string config;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {{"transpose", 256}, "smem=0,tile=32,block_x=32,block_y=8"},
      {{"transpose", 256}, "smem=1,tile=32,block_x=32,block_y=8,pad=1"},
      {{"transpose", 256}, "smem=1,tile=32,block_x=32,block_y=8,pad=0"},
      {{"transpose", 256, 0, 0, DataType::f64}, "smem=1,tile=64,block_x=32,block_y=8,pad=1"},
      {{"copy", 1 << 16}, "block=256,vector=4,ept=4"},
      {{"copy", 1 << 16, 0, 0, DataType::f16}, "block=128,vector=2,ept=2"},
      {{"stencil2d", 128}, "radius=1,block_x=32,block_y=8,ept_y=2,smem=1"},
      {{"stencil2d", 128}, "radius=2,block_x=32,block_y=8,ept_y=2,smem=0"},
      {{"stencil3d", 32}, "mode=1,block_x=32,block_y=4,z_chunk=8"},
      {{"stencil3d", 32}, "mode=1,block_x=16,block_y=4,vector=2,z_chunk=8"},
      {{"stencil3d", 32}, "mode=0,block_x=8,block_y=8,block_z=4"},
      {{"gemm", 128}, "bm=64,bn=64,bk=16,tm=4,tn=4,pad=1"},
      {{"gemm", 128, 0, 0, DataType::f64}, "bm=32,bn=32,bk=8,tm=2,tn=2,pad=0"},
  };
  return all;
}

/// Sampled, a grid needs more blocks than one per SM (132 on the H200); and sampling cuts a
/// pattern's long phase loops to their first trips, which a trace (no loops) cannot: gemm's k
/// loop has two trips here, the fewest a cut leaves.
const std::vector<Case>& sampled_cases() {
  static const std::vector<Case> all = {
      {{"transpose", 1024}, "smem=0,tile=32,block_x=32,block_y=8"},
      {{"transpose", 1024}, "smem=1,tile=32,block_x=32,block_y=8,pad=1"},
      {{"transpose", 1024, 0, 0, DataType::f64}, "smem=1,tile=32,block_x=32,block_y=8,pad=0"},
      {{"copy", 1 << 20}, "block=256,vector=4,ept=4"},
      {{"copy", 1 << 20, 0, 0, DataType::f16}, "block=128,vector=2,ept=2"},
      {{"stencil2d", 512}, "radius=1,block_x=32,block_y=8,ept_y=2,smem=1"},
      {{"stencil2d", 512}, "radius=2,block_x=32,block_y=8,ept_y=2,smem=0"},
      {{"stencil3d", 64}, "mode=1,block_x=32,block_y=4,z_chunk=8"},
      {{"stencil3d", 64}, "mode=0,block_x=8,block_y=8,block_z=4"},
      {{"gemm", 512, 512, 32}, "bm=32,bn=32,bk=16,tm=4,tn=4,pad=1"},
      {{"gemm", 512, 512, 16, DataType::f64}, "bm=32,bn=32,bk=8,tm=2,tn=2,pad=0"},
  };
  return all;
}

std::string name_of(const Case& c) {
  return c.problem.family + " n=" + std::to_string(c.problem.n) + " " + to_string(c.problem.dtype) + " " + c.config;
}

void expect_same_counts(const Prediction& traced, const Prediction& pattern, const std::string& what) {
  ASSERT_EQ(traced.metrics.size(), pattern.metrics.size()) << what;
  for (const auto& [name, value] : pattern.metrics) {
    EXPECT_NEAR(traced.metric(name), value, 1e-9 * std::abs(value) + 1e-9) << what << ": " << name;
  }
  EXPECT_EQ(traced.blocks_per_sm, pattern.blocks_per_sm) << what;
  EXPECT_EQ(traced.waves, pattern.waves) << what;
  EXPECT_EQ(traced.sampled, pattern.sampled) << what;
  EXPECT_NEAR(traced.simulated_fraction, pattern.simulated_fraction, 1e-12) << what;
  EXPECT_NEAR(traced.spread_write_fraction, pattern.spread_write_fraction, 1e-12) << what;
}

void expect_one_engine(const std::vector<Case>& all, const DeviceProfile& profile, const SimulationOptions& options,
                       const std::string& mode) {
  for (const Case& c : all) {
    const KernelPattern pattern = build_pattern(c.problem, Config::parse(c.config));
    const TracedKernel traced = testing::traced_from_pattern(pattern);
    TracedFacts facts;
    const Prediction from_trace = simulate_traced(traced, profile, options, &facts);
    const Prediction from_pattern = simulate(pattern, profile, options);
    const std::string what = mode + ", " + profile.device.name + ": " + name_of(c);
    expect_same_counts(from_trace, from_pattern, what);
    // The same time model: where the store bursts agree (the pattern's accesses alternate
    // loads and stores where its compiled kernel batches them, so its trace shows shorter
    // bursts), so do the times.
    if (facts.store_burst == static_cast<double>(pattern.store_burst)) {
      EXPECT_NEAR(from_trace.time_us, from_pattern.time_us, 1e-9 * from_pattern.time_us) << what;
    }
    // The trace's waits come every loads_in_flight issued loads: full rounds of that size, and
    // shorter ones where a phase ends between waits.
    EXPECT_LE(facts.loads_in_flight, static_cast<double>(pattern.loads_in_flight) + 1e-9) << what;
    EXPECT_GT(facts.loads_in_flight, 0.0) << what;
    // The flops and overhead the trace's warps carry are the pattern's, spread over its warps.
    EXPECT_NEAR(facts.flops, pattern.flops, 1e-9 * pattern.flops + 1e-9) << what;
    EXPECT_NEAR(facts.overhead_instructions, pattern.overhead_instructions, 1e-6 * pattern.overhead_instructions + 1e-6)
        << what;
  }
}

DeviceProfile h200() { return load_profile(bundled_profile_path("NVIDIA H200")); }

TEST(TraceEquivalence, FullSimulationCountsEqualThePatterns) {
  SimulationOptions exact;
  exact.work_budget = 0;
  expect_one_engine(cases(), load_profile(CACHEWISE_EXAMPLE_PROFILE), exact, "full");
  expect_one_engine(cases(), h200(), exact, "full");
}

TEST(TraceEquivalence, SampledCountsEqualThePatterns) {
  // A budget small enough that these grids are sampled (part of a wave, from the middle, after a
  // warm-up), large enough that no gemm k loop is cut (a trace has no loops to cut).
  SimulationOptions sampled;
  sampled.work_budget = 1 << 12;
  const DeviceProfile profile = h200();
  expect_one_engine(sampled_cases(), profile, sampled, "sampled");
  for (const Case& c : sampled_cases()) {
    const Prediction prediction = simulate(build_pattern(c.problem, Config::parse(c.config)), profile, sampled);
    EXPECT_LT(prediction.simulated_fraction, 1.0) << name_of(c);
  }
}

TEST(TraceEquivalence, ScreenedCountsEqualThePatterns) {
  SimulationOptions screening;
  screening.work_budget = 1 << 13;
  screening.simulated_sm_count = 4;
  expect_one_engine(sampled_cases(), h200(), screening, "screening");
}

TEST(TraceEquivalence, CappedCountsEqualThePatterns) {
  // No budget, at most 200 blocks rounded up to a whole wave: the sample is the grid's first
  // wave, without a warm-up.
  SimulationOptions capped;
  capped.work_budget = 0;
  capped.max_simulated_blocks = 200;
  expect_one_engine(sampled_cases(), h200(), capped, "capped");
}

} // namespace
} // namespace cachewise
