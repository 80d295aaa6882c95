// How far-partition stores are counted by the lts__ counters (measured on the H200: stores
// spread over both partitions show 1.5x the stored sectors in lts__t_sectors_op_write).
#include <gtest/gtest.h>

#include "cachewise/model.hpp"
#include "../../model/src/pattern/pattern_builders.hpp"

namespace cachewise {
namespace {

using pattern_builders::affine;
using V = IndexVar;

/// Blocks 0 and 1 (on SMs 0 and 1, whose near partitions differ) each store the same
/// `lines` whole 128 B lines.
KernelPattern two_sms_store_the_same_lines(std::int64_t lines) {
  KernelPattern pattern;
  pattern.name = "shared_stores";
  pattern.grid = {2, 1, 1};
  pattern.block = {32, 1, 1};
  pattern.arrays = {{"y", MemorySpace::global, 4, {lines * 32}}};
  pattern.phases.push_back({{{"i", 0, lines, 1}}, {{"y", true, {affine(0, {{V::thread_x, 1}}, {{"i", 32}})}}}});
  return pattern;
}

SimulationOptions exact() {
  SimulationOptions options;
  options.work_budget = 0;
  return options;
}

TEST(L2StoreAccounting, FarHomeStoresAreCountedInBothPartitions) {
  // Every line is near-home for exactly one of the two SMs: per line 4 sectors are stored
  // twice (8), and the far store of the two is counted again (4) -> 12 lookups, all hits.
  const std::int64_t lines = 64;
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  ASSERT_EQ(profile.l2.partitions, 2);
  const Prediction p = simulate(two_sms_store_the_same_lines(lines), profile, exact());
  EXPECT_EQ(p.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), lines * 4 * 2.0);
  EXPECT_EQ(p.metric("lts__t_sectors_op_write.sum"), lines * 4 * 3.0);
  EXPECT_EQ(p.metric("lts__t_sector_hit_rate.pct"), 100.0);

  // One partition: nothing is far, one lookup per stored sector.
  DeviceProfile single = profile;
  single.l2.partitions = 1;
  const Prediction q = simulate(two_sms_store_the_same_lines(lines), single, exact());
  EXPECT_EQ(q.metric("lts__t_sectors_op_write.sum"), lines * 4 * 2.0);
}

TEST(L2StoreAccounting, StreamingCopyHitRateIsOneHalf) {
  // A copy reads every sector once from DRAM and writes every sector once. Over both
  // partitions half of each side is far-home and counted twice: reads miss in both
  // lookups, writes hit in both -> hit rate 1.5W / (1.5R + 1.5W) = 50% (measured 50-52%).
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const KernelPattern copy =
      build_pattern({"copy", std::int64_t{1} << 22}, Config::parse("block=256,vector=4,ept=4,stride=1"));
  const Prediction p = simulate(copy, profile, exact());
  EXPECT_NEAR(p.metric("lts__t_sector_hit_rate.pct"), 50.0, 1.0);
  const double stored = p.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum");
  EXPECT_NEAR(p.metric("lts__t_sectors_op_write.sum") / stored, 1.5, 0.05);
}

} // namespace
} // namespace cachewise
