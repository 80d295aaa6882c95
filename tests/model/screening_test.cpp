// Screening (SimulationOptions::simulated_sm_count) against exact simulation: the counts fixed
// by warp instructions and the time stay within stated bounds; cache hit rates and DRAM bytes
// are not bounded (its sample and warm-up are small).
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "cachewise/model.hpp"
#include "cachewise/model/families/device_pattern.hpp"

namespace cachewise {
namespace {

constexpr SimulationOptions kScreening{.work_budget = std::int64_t{1} << 13, .simulated_sm_count = 4};

/// Metrics fixed by the warp instructions alone (coalescing, banks), not by cache state.
bool cache_independent(const std::string& name) {
  return !name.starts_with("lts__") && !name.starts_with("dram__") && name.find("hit_rate") == std::string::npos;
}

struct Case {
  ProblemSpec problem;
  const char* config;
  double time_tolerance; ///< relative
};

TEST(Screening, InstructionCountsAndTimeWithinStatedBounds) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  // Shared-memory transposes are bound by their per-instruction costs: within 0.1 %. The
  // naive transpose and copy move with L2 state: within 3 %. Stencils reuse halo rows
  // through L2, which a sample of a few blocks sees only in part: within 8 % for stencil3d and
  // 10 % for stencil2d (measured 8.5 %: its block dispatch, the same in sample and full run,
  // overlaps its memory time rather than adding to it); the advisor refines its shortlist for
  // this reason. gemm's latency chain adds
  // to its shared-memory time and its exposed loaded chain to the memory time (docs/model.md);
  // a round waits for its slowest load, and the cold sample's rounds see DRAM where the full
  // run's hit L2; the SM side pays that chain loaded since gemm stages through shared memory,
  // DRAM rounds at 3x and L2 rounds at 2x: within 55 % (measured 50.9 %, as
  // the full run's L2 rounds cost less than the sample's DRAM ones).
  // The shortlist still holds gemm's best (ScreeningRanks below).
  const Case cases[] = {
      {{"transpose", 2048}, "smem=0,tile=32,block_x=32,block_y=8", 0.03},
      {{"transpose", 2048}, "smem=1,tile=32,block_x=32,block_y=8,pad=1", 0.001},
      {{"transpose", 2048}, "smem=1,tile=32,block_x=32,block_y=4,pad=0", 0.001},
      {{"stencil2d", 2048}, "radius=2,block_x=32,block_y=8,ept_y=2,smem=0", 0.10},
      {{"stencil3d", 128}, "block_x=32,block_y=4,block_z=4,mode=0,z_chunk=1", 0.08},
      {{"copy", 1 << 22}, "block=256,vector=4,ept=1", 0.03},
      {{"gemm", 512}, "bm=64,bn=64,bk=8,tm=4,tn=4,pad=1", 0.55},
  };
  for (const Case& c : cases) {
    const KernelPattern pattern = build_pattern(c.problem, Config::parse(c.config), profile.calibration);
    const Prediction screened = simulate(pattern, profile, kScreening);
    const Prediction exact = simulate(pattern, profile, SimulationOptions{.work_budget = 0});
    EXPECT_TRUE(screened.sampled) << c.config;
    EXPECT_FALSE(exact.sampled) << c.config;
    for (const auto& [name, value] : exact.metrics) {
      if (!cache_independent(name)) continue;
      // Boundary blocks (guards) are a larger share of a small sample: within 5 % (stencil3d: 3.3 %).
      EXPECT_NEAR(screened.metric(name), value, 0.05 * std::abs(value) + 1e-9) << c.config << ": " << name;
    }
    EXPECT_NEAR(screened.time_us, exact.time_us, c.time_tolerance * exact.time_us) << c.config;
  }
}

TEST(Screening, AsManySimulatedSmsAsTheDeviceHasIsNoScreening) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const KernelPattern pattern =
      build_pattern({"transpose", 256}, Config::parse("smem=1,tile=32,block_x=32,block_y=8,pad=1"));
  const Prediction all = simulate(pattern, profile, {.work_budget = 0, .simulated_sm_count = profile.device.sm_count});
  const Prediction exact = simulate(pattern, profile, {.work_budget = 0});
  EXPECT_FALSE(all.sampled);
  EXPECT_EQ(all.metrics, exact.metrics);
  EXPECT_EQ(all.time_us, exact.time_us);
}

TEST(Screening, NegativeSmCountIsAnInputError) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const KernelPattern pattern = build_pattern({"copy", 4096}, Config::parse("block=256,vector=1,ept=1"));
  EXPECT_THROW(simulate(pattern, profile, {.simulated_sm_count = -1}), InputError);
}

} // namespace
} // namespace cachewise
