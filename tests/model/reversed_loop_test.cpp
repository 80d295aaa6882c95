// Loops that odd blocks take backwards (Loop::reversed_where_odd): the order the simulator
// walks them in, their checks and JSON, and stencil3d's odd chunks walking down.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"
#include "../../model/src/pattern_builders.hpp"

namespace cachewise {
namespace {

using pattern_builders::affine;
using pattern_builders::loop;
using V = IndexVar;

DeviceProfile example_profile() { return load_profile(CACHEWISE_EXAMPLE_PROFILE); }

SimulationOptions exact() {
  SimulationOptions options;
  options.work_budget = 0;
  return options;
}

/// Two one-thread blocks (block_z = 0, 1), each on its own SM, walk lines 0..4 of x, then load
/// line 0 again. An L1 of a single 4-way LRU set keeps the last 4 lines: walking up, line 0 is
/// gone by then; walking down it was the last one loaded.
KernelPattern walk_then_line_zero(std::optional<IndexVar> reversed_where_odd) {
  constexpr std::int64_t kLineFloats = 128 / 4;
  KernelPattern pattern;
  pattern.name = "walk";
  pattern.grid = {1, 1, 2};
  pattern.block = {1, 1, 1};
  pattern.arrays = {{"x", MemorySpace::global, 4, {kLineFloats * 5}}};
  Loop lines = loop("i", 5);
  lines.reversed_where_odd = reversed_where_odd;
  pattern.phases.push_back({{lines}, {{"x", false, {affine(0, {}, {{"i", kLineFloats}})}}}});
  pattern.phases.push_back({{}, {{"x", false, {affine(0)}}}});
  return pattern;
}

DeviceProfile one_set_l1() {
  DeviceProfile profile = example_profile();
  profile.l1.capacity_bytes.value = 4 * 128;
  profile.l1.capacity_max_carveout_bytes.reset();
  profile.l1.ways->value = 4;
  profile.l1.replacement.policy = ReplacementPolicy::lru;
  return profile;
}

TEST(ReversedLoops, OddBlocksWalkTheLoopBackwards) {
  // 12 one-sector loads; only block 1's last load hits, and only when it walked down.
  const auto hit_rate = [](std::optional<IndexVar> reversed) {
    return simulate(walk_then_line_zero(reversed), one_set_l1(), exact()).metric("l1tex__t_sector_hit_rate.pct");
  };
  EXPECT_EQ(hit_rate(std::nullopt), 0.0);
  EXPECT_DOUBLE_EQ(hit_rate(V::block_z), 100.0 / 12.0);
  // Both blocks have block_x = 0: neither is odd along x.
  EXPECT_EQ(hit_rate(V::block_x), 0.0);
}

TEST(ReversedLoops, OnlyABlockIndexOfAPhasesOwnLoopMayReverseIt) {
  KernelPattern by_thread = walk_then_line_zero(V::thread_x);
  try {
    simulate(by_thread, example_profile(), exact());
    FAIL() << "a loop reversed by thread_x was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()), "pattern.phases[0].loops[0].reversed_where_odd: expected block_x, block_y or block_z");
  }
  KernelPattern outer = walk_then_line_zero(std::nullopt);
  outer.phase_loops.push_back({loop("t", 2), 1, 1});
  outer.phase_loops[0].loop.reversed_where_odd = V::block_z;
  EXPECT_THROW(simulate(outer, example_profile(), exact()), InputError);
}

TEST(ReversedLoops, JsonNamesTheBlockIndexAndRejectsOtherNames) {
  const KernelPattern pattern = walk_then_line_zero(V::block_z);
  const nlohmann::json document = pattern_to_json(pattern);
  EXPECT_EQ(document["phases"][0]["loops"][0]["reversed_where_odd"], "block_z");
  EXPECT_EQ(pattern_from_json(document), pattern);
  nlohmann::json typo = document;
  typo["phases"][0]["loops"][0]["reversed_where_odd"] = "block_w";
  try {
    pattern_from_json(typo);
    FAIL() << "accepted block_w";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()), "pattern.phases[0].loops[0].reversed_where_odd: expected block_x, block_y or block_z, got 'block_w'");
  }
}

/// The same kernel with every chunk walking up: no loop reversed, no odd-chunk offsets.
KernelPattern walking_up(KernelPattern pattern) {
  for (Phase& phase : pattern.phases) {
    for (Loop& each : phase.loops) each.reversed_where_odd.reset();
    for (Access& access : phase.accesses) {
      for (AffineIndex& index : access.index) index.quotient_terms.clear();
    }
  }
  return pattern;
}

TEST(ReversedLoops, Stencil3dOddChunksWalkingDownReadEveryPlaneOnce) {
  // n=256 f32, 128x2-thread vector-2 blocks in 32-plane chunks: one wave, 8 chunks, 7
  // boundaries. Walking up, a chunk reads the two planes at its bottom boundary at its start
  // and the chunk below reads them at its end, 32 planes of the whole grid's traffic (128 MiB)
  // later, past the 60 MiB L2: both come from DRAM twice (14 planes; one allowed for blocks that
  // do not start together). With the odd chunks walking down, the two chunks at a boundary read
  // its planes in the same iteration: every plane once.
  const double plane_bytes = 256.0 * 256 * 4;
  const double input_bytes = 256 * plane_bytes;
  const KernelPattern down = build_pattern({"stencil3d", 256}, Config::parse("mode=1,block_x=128,block_y=2,vector=2,z_chunk=32"));
  ASSERT_EQ(down.grid.count(), 1024); // within one wave of 132 SMs x 8 blocks
  const auto dram_read = [&](const KernelPattern& pattern) {
    return simulate(pattern, example_profile(), exact()).metric("dram__bytes_read.sum");
  };
  // Rows 0 and n-1 of planes 0 and k-1 (4 KiB) no thread loads.
  const double down_bytes = dram_read(down);
  EXPECT_LE(down_bytes, input_bytes);
  EXPECT_GE(down_bytes, input_bytes - 4 * 256 * 4);
  const double up = dram_read(walking_up(down));
  EXPECT_GE(up, input_bytes + 13 * plane_bytes);
  EXPECT_LE(up, input_bytes + 14 * plane_bytes);
}

} // namespace
} // namespace cachewise
