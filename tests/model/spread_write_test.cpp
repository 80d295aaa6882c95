// Stores whose rows the neighbouring blocks do not continue (a transpose's output) cost DRAM
// time by the run a warp writes per row: the profile's dram.spread_write_slowdown.
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"

namespace cachewise {
namespace {

using nlohmann::json;

const Provenance kByTest{"test", 1, 0.0, Confidence::high};

DeviceProfile profile_with(std::map<std::int64_t, Measured> slowdown) {
  DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  profile.dram.spread_write_slowdown = std::move(slowdown);
  return profile;
}

/// The probe's tiled copy: a tile x tile f32 tile per 32x8-thread block, each warp walking rows
/// ty, ty + 8, ... and a row's tile / 32 lines in consecutive instructions. `write_row` and
/// `write_column` place the block's output tile (expressions of block_x, block_y, in tiles).
KernelPattern tile_copy(std::int64_t n, std::int64_t tile, const json& write_row, const json& write_column,
                        std::int64_t out_rows, std::int64_t out_columns) {
  auto at = [](json tile_index, std::int64_t tile_size, const char* thread, const char* loop) {
    json expr = {{thread, 1}, {loop, 1}};
    for (auto& [key, value] : tile_index.items()) {
      if (key == "quotients") {
        for (json quotient : value) {
          quotient["coefficient"] = quotient.value("coefficient", 1) * tile_size;
          expr["quotients"].push_back(quotient);
        }
      } else {
        expr[key] = value.get<std::int64_t>() * tile_size;
      }
    }
    return expr;
  };
  const json pattern = {
      {"name", "tile copy"},
      {"grid", {{"x", n / tile}, {"y", n / tile}}},
      {"block", {{"x", 32}, {"y", 8}}},
      {"arrays", {{{"name", "in"}, {"extents", {n, n}}}, {{"name", "out"}, {"extents", {out_rows, out_columns}}}}},
      {"phases",
       {{{"loops", {{{"name", "r"}, {"end", tile}, {"step", 8}}, {{"name", "c"}, {"end", tile}, {"step", 32}}}},
         {"accesses",
          {{{"array", "in"},
            {"op", "load"},
            {"index", {at({{"block_y", 1}}, tile, "thread_y", "r"), at({{"block_x", 1}}, tile, "thread_x", "c")}}},
           {{"array", "out"},
            {"op", "store"},
            {"index", {at(write_row, tile, "thread_y", "r"), at(write_column, tile, "thread_x", "c")}}}}}}}},
      {"loads_in_flight", 4},
      {"store_burst", 4}};
  return pattern_from_json(pattern);
}

KernelPattern same_tile(std::int64_t n, std::int64_t tile) {
  return tile_copy(n, tile, {{"block_y", 1}}, {{"block_x", 1}}, n, n);
}

KernelPattern mirrored_tile(std::int64_t n, std::int64_t tile) {
  return tile_copy(n, tile, {{"block_x", 1}}, {{"block_y", 1}}, n, n);
}

/// Blocks dealt in groups of `group` consecutive x write neighbouring tiles of one row band:
/// out tile (x / group, y * group + x % group), so a group's runs line up into one of `group`
/// tiles' width while the next group writes other rows.
KernelPattern grouped_tiles(std::int64_t n, std::int64_t tile, std::int64_t group) {
  const json row = {{"quotients", {{{"block_x", 1}, {"divisor", group}}}}};
  const json column = {{"block_y", group}, {"quotients", {{{"block_x", 1}, {"divisor", 1}, {"modulus", group}}}}};
  return tile_copy(n, tile, row, column, n / group, n * group);
}

double dram_ratio(const KernelPattern& pattern, const DeviceProfile& slowed) {
  SimulationOptions exact;
  exact.work_budget = 0;
  const DeviceProfile plain = profile_with({});
  return simulate(pattern, slowed, exact).time_terms_us.at("dram") /
         simulate(pattern, plain, exact).time_terms_us.at("dram");
}

TEST(SpreadWrites, ATransposesRowsCostTheSlowdownOfTheRunAWarpWritesPerRow) {
  const DeviceProfile slowed = profile_with({{128, {1.10, kByTest}}, {256, {1.05, kByTest}}, {512, {1.02, kByTest}}});
  // Block x + 1 writes the next 128 B of the same rows: compact, whatever the run.
  EXPECT_NEAR(dram_ratio(same_tile(512, 32), slowed), 1.0, 1e-12);
  // Mirrored: a warp writes 1, 2, 4 lines of a row and no neighbour continues them (16 tiles
  // per row: the next tile of a row band is 16 blocks on, beyond the 8 looked at).
  EXPECT_NEAR(dram_ratio(mirrored_tile(512, 32), slowed), 1.10, 1e-9);
  EXPECT_NEAR(dram_ratio(mirrored_tile(1024, 64), slowed), 1.05, 1e-9);
  EXPECT_NEAR(dram_ratio(mirrored_tile(2048, 128), slowed), 1.02, 1e-9);
  // 3 lines (384 B): linear in log2 between 256 and 512 B.
  EXPECT_NEAR(dram_ratio(mirrored_tile(1536, 96), slowed), 1.05 - 0.03 * std::log2(1.5), 1e-9);
  // With 4 tiles per row a row band's tiles are written by blocks 4 apart: within 8 blocks a
  // warp's 4 lines grow to 12 in the first and last tile (spread) and to 16 in the middle two
  // (compact): half of the runs are spread.
  EXPECT_NEAR(dram_ratio(mirrored_tile(512, 128), slowed), 1.01, 1e-9);
  // Beyond the longest measured run its value holds; below the shortest, the shortest's.
  const DeviceProfile short_runs = profile_with({{256, {1.05, kByTest}}});
  EXPECT_NEAR(dram_ratio(mirrored_tile(2048, 128), short_runs), 1.05, 1e-9);
  EXPECT_NEAR(dram_ratio(mirrored_tile(512, 32), short_runs), 1.05, 1e-9);
  // Without the field nothing changes.
  EXPECT_NEAR(dram_ratio(mirrored_tile(512, 32), profile_with({})), 1.0, 1e-12);
  // The prediction says what it found: every line spread, in 4-line (512 B) runs, and the factor.
  SimulationOptions exact;
  exact.work_budget = 0;
  const Prediction wide = simulate(mirrored_tile(2048, 128), slowed, exact);
  EXPECT_DOUBLE_EQ(wide.spread_write_fraction, 1.0);
  EXPECT_DOUBLE_EQ(wide.spread_write_run_bytes, 512.0);
  EXPECT_NEAR(wide.spread_write_factor, 1.02, 1e-12);
  const Prediction same = simulate(same_tile(512, 32), slowed, exact);
  EXPECT_DOUBLE_EQ(same.spread_write_fraction, 0.0);
  EXPECT_DOUBLE_EQ(same.spread_write_factor, 1.0);
}

TEST(SpreadWrites, NeighboursMustContinueARunToFourTimesItsLengthForItToBeCompact) {
  const DeviceProfile slowed = profile_with({{128, {1.10, kByTest}}, {256, {1.05, kByTest}}});
  // Pairs of blocks line their 128 B runs up into 256 B: still spread, at the warp's 128 B.
  EXPECT_NEAR(dram_ratio(grouped_tiles(512, 32, 2), slowed), 1.10, 1e-9);
  // Four blocks make 512 B of each row: compact.
  EXPECT_NEAR(dram_ratio(grouped_tiles(512, 32, 4), slowed), 1.0, 1e-12);
}

TEST(SpreadWrites, TheLibrarysTransposesAreSpreadAndItsCopiesAndStencilsCompact) {
  const DeviceProfile slowed = profile_with({{128, {1.10, kByTest}}, {256, {1.05, kByTest}}});
  const auto family_ratio = [&](const ProblemSpec& problem, const char* config) {
    return dram_ratio(build_pattern(problem, Config::parse(config)), slowed);
  };
  // 32x8 threads on 64-tiles: a warp stores a row's two lines back to back.
  EXPECT_NEAR(family_ratio({"transpose", 1024}, "smem=1,tile=64,block_x=32,block_y=8,pad=1"), 1.05, 1e-9);
  // 64x2 threads: two warps store a line each (their block's 256 B is not 4x a warp's 128 B).
  EXPECT_NEAR(family_ratio({"transpose", 1024}, "smem=1,tile=64,block_x=64,block_y=2,pad=1"), 1.10, 1e-9);
  EXPECT_NEAR(family_ratio({"transpose", 1024}, "smem=1,tile=32,block_x=32,block_y=2,pad=1"), 1.10, 1e-9);
  EXPECT_NEAR(family_ratio({"copy", 1 << 20}, "block=256,vector=4,ept=1"), 1.0, 1e-12);
  EXPECT_NEAR(family_ratio({"stencil2d", 1024}, "radius=1,block_x=32,block_y=8,ept_y=1,smem=0"), 1.0, 1e-12);
  EXPECT_NEAR(family_ratio({"stencil3d", 128}, "mode=1,block_x=64,block_y=4,vector=2,z_chunk=8"), 1.0, 1e-12);
}

/// A block per row of an n x n f32 matrix times a vector: 128 threads read the row, lane 0 of
/// warp 0 stores y[row] (the other lanes' index leaves y: predicated off). Block b writes
/// byte 4b of y, so 32 consecutive blocks share each 128 B line of it.
KernelPattern block_per_row_matvec(std::int64_t n) {
  const std::string size = std::to_string(n);
  return pattern_from_json(json::parse(R"({"name": "matvec, a block per row", "grid": {"x": )" + size +
                                       R"(}, "block": {"x": 128},
    "arrays": [{"name": "a", "extents": [)" +
                                       size + ", " + size + R"(]}, {"name": "x", "extents": [)" + size +
                                       R"(]}, {"name": "y", "extents": [)" + size + R"(]}],
    "phases": [
      {"loops": [{"name": "i", "end": )" +
                                       std::to_string(n / 128) + R"(}],
       "accesses": [{"array": "a", "op": "load", "index": [{"block_x": 1}, {"thread_x": 1, "i": 128}]},
                    {"array": "x", "op": "load", "index": [{"thread_x": 1, "i": 128}]}]},
      {"accesses": [{"array": "y", "op": "store", "index": [{"block_x": 1, "thread_x": )" +
                                       size + R"(}]}]}]})"));
}

/// Each 32x8-thread block reads 32 rows of `width` f32 and writes one whole 128 B line in each
/// of 32 rows of a 1024-column output (4 KiB apart, and the next 128 B of each row is written
/// by nobody): every stored line a spread run of 128 B, 4 KiB per block.
KernelPattern band_to_spread_lines(std::int64_t blocks, std::int64_t width) {
  const std::string rows = std::to_string(32 * blocks);
  return pattern_from_json(json::parse(R"({"name": "row band to spread lines", "grid": {"x": )" +
                                       std::to_string(blocks) + R"(}, "block": {"x": 32, "y": 8},
    "arrays": [{"name": "in", "extents": [)" +
                                       rows + ", " + std::to_string(width) + R"(]},
               {"name": "out", "extents": [)" +
                                       rows + R"(, 1024]}],
    "phases": [
      {"loops": [{"name": "r", "end": 32, "step": 8}, {"name": "c", "end": )" +
                                       std::to_string(width) +
                                       R"(, "step": 32}],
       "accesses": [{"array": "in", "op": "load", "index": [{"block_x": 32, "thread_y": 1, "r": 1}, {"thread_x": 1, "c": 1}]}]},
      {"loops": [{"name": "k", "end": 32, "step": 8}],
       "accesses": [{"array": "out", "op": "store", "index": [{"block_x": 32, "thread_x": 1}, {"thread_y": 1, "k": 1}]}]}]})"));
}

TEST(SpreadWrites, AOneDimensionalOutputThatConsecutiveBlocksShareIsNotSpread) {
  // Block b writes 4 B at 4b: a line's 32 writers are neighbours, its next line 32 blocks on.
  // Without the sharing guard every line counted as a spread 128 B run (x1.10 on DRAM time).
  const DeviceProfile slowed = profile_with({{128, {1.10, kByTest}}, {256, {1.05, kByTest}}});
  SimulationOptions exact;
  exact.work_budget = 0;
  const Prediction p = simulate(block_per_row_matvec(512), slowed, exact);
  EXPECT_DOUBLE_EQ(p.metric("dram__bytes_write.sum"), 512.0 * 4);
  EXPECT_DOUBLE_EQ(p.spread_write_fraction, 0.0);
  EXPECT_DOUBLE_EQ(p.spread_write_factor, 1.0);
  EXPECT_NEAR(dram_ratio(block_per_row_matvec(512), slowed), 1.0, 1e-12);
}

TEST(SpreadWrites, StoresUnderAQuarterOfTheDramBytesLeaveItsTimeAlone) {
  // Every stored line is a spread 128 B run. Reading 32 x 32 f32 per block (4 KiB, as much as
  // it writes) the kernel has a tile copy's shape and is slowed x1.10; reading 32 x 1024 (128
  // KiB per 4 KiB written) it is outside the shape the rule was measured on (a mirrored copy,
  // half of its DRAM bytes writes), and its DRAM time is left alone.
  const DeviceProfile slowed = profile_with({{128, {1.10, kByTest}}});
  SimulationOptions exact;
  exact.work_budget = 0;
  const Prediction square = simulate(band_to_spread_lines(64, 32), slowed, exact);
  EXPECT_DOUBLE_EQ(square.metric("dram__bytes_write.sum"), 64.0 * 4096);
  EXPECT_DOUBLE_EQ(square.spread_write_fraction, 1.0);
  EXPECT_NEAR(square.spread_write_factor, 1.10, 1e-9);
  EXPECT_NEAR(dram_ratio(band_to_spread_lines(64, 32), slowed), 1.10, 1e-9);
  const Prediction wide = simulate(band_to_spread_lines(64, 1024), slowed, exact);
  EXPECT_DOUBLE_EQ(wide.spread_write_fraction, 1.0);
  EXPECT_LT(wide.metric("dram__bytes_write.sum"), 0.25 * wide.metric("dram__bytes_read.sum"));
  EXPECT_DOUBLE_EQ(wide.spread_write_factor, 1.0);
  EXPECT_NEAR(dram_ratio(band_to_spread_lines(64, 1024), slowed), 1.0, 1e-12);
}

} // namespace
} // namespace cachewise
