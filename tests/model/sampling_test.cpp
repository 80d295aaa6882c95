// Steady-state sampling against full simulation, and the time estimate's ordering of
// configurations whose difference is known.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "cachewise/model.hpp"
#include "cachewise/model/families/device_pattern.hpp"
#include "cachewise/model/simulation/kernel_trace.hpp"

namespace cachewise {
namespace {

Prediction predict(const ProblemSpec& problem, const std::string& config, std::int64_t work_budget) {
  SimulationOptions options;
  options.work_budget = work_budget;
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  return simulate(build_pattern(problem, Config::parse(config), profile.calibration), profile, options);
}

void expect_close(const Prediction& sampled, const Prediction& full) {
  for (const auto& [name, value] : full.metrics) {
    const double estimate = sampled.metric(name);
    if (name.ends_with(".pct")) {
      EXPECT_NEAR(estimate, value, 1.0) << name; // within 1 percentage point
    } else {
      EXPECT_NEAR(estimate, value, 0.01 * std::abs(value) + 1e-9) << name; // within 1 %
    }
  }
  EXPECT_NEAR(sampled.time_us, full.time_us, 0.02 * full.time_us);
}

TEST(Sampling, TransposeSampleStaysWithinOnePercentOfFullSimulation) {
  for (const char* config : {"smem=0,tile=32,block_x=32,block_y=8", "smem=1,tile=32,block_x=32,block_y=8,pad=1",
                             "smem=1,tile=32,block_x=32,block_y=4,pad=0"}) {
    const Prediction sampled = predict({"transpose", 2048}, config, 1 << 16);
    ASSERT_TRUE(sampled.sampled) << config;
    EXPECT_LT(sampled.simulated_fraction, 0.7) << config;
    expect_close(sampled, predict({"transpose", 2048}, config, 0));
  }
}

TEST(Sampling, StencilAndCopySamplesStayWithinOnePercent) {
  // Halo rows are shared by vertically neighbouring blocks: the sample must span many block
  // rows, which the default budget's whole waves do (a single partial wave does not).
  const Prediction stencil =
      predict({"stencil2d", 2048}, "radius=2,block_x=32,block_y=8,ept_y=2,smem=0", SimulationOptions{}.work_budget);
  ASSERT_TRUE(stencil.sampled);
  expect_close(stencil, predict({"stencil2d", 2048}, "radius=2,block_x=32,block_y=8,ept_y=2,smem=0", 0));
  const Prediction copy = predict({"copy", 1 << 22}, "block=256,vector=4,ept=1", SimulationOptions{}.work_budget);
  ASSERT_TRUE(copy.sampled);
  expect_close(copy, predict({"copy", 1 << 22}, "block=256,vector=4,ept=1", 0));
}

TEST(Sampling, Stencil3dSampleFindsTheLayerBelowInL2) {
  // A z chunk's halo planes are the chunk below's last planes, one grid layer (grid.x x
  // grid.y blocks) back, further than the warm-up before the sample reaches: the sample runs
  // its blocks' layer below first. Without it the sample read more from DRAM than the full
  // simulation (H200 profile, n=192: 5.3% more at z_chunk=8, 2.0% at z_chunk=1). With it the
  // sample reads 1.0% less at z_chunk=8: 1.5% allowed (with unwritten border points the merge reads of the
  // rows' part-written border sectors, 8% of the bytes, padded the denominator under 1%).
  for (const char* config :
       {"mode=1,block_x=64,block_y=4,vector=2,z_chunk=8", "mode=1,block_x=16,block_y=2,z_chunk=1"}) {
    const Prediction sampled = predict({"stencil3d", 192}, config, SimulationOptions{}.work_budget);
    ASSERT_TRUE(sampled.sampled) << config;
    const Prediction full = predict({"stencil3d", 192}, config, 0);
    EXPECT_NEAR(sampled.metric("dram__bytes_read.sum"), full.metric("dram__bytes_read.sum"),
                0.015 * full.metric("dram__bytes_read.sum"))
        << config;
    EXPECT_NEAR(sampled.time_us, full.time_us, 0.02 * full.time_us) << config;
    // Those blocks ran long before the sample, on whatever SM: their lines are in L2 only.
    EXPECT_NEAR(sampled.metric("l1tex__t_sector_hit_rate.pct"), full.metric("l1tex__t_sector_hit_rate.pct"), 1.0)
        << config;
  }
}

TEST(Sampling, GemmPhaseLoopSampleStaysWithinOnePercent) {
  // 512 k-steps cut to the first few: per-step traffic is the same, so counts scale.
  const Prediction sampled = predict({"gemm", 512}, "bm=64,bn=64,bk=8,tm=4,tn=4,pad=1", 1 << 16);
  ASSERT_TRUE(sampled.sampled);
  expect_close(sampled, predict({"gemm", 512}, "bm=64,bn=64,bk=8,tm=4,tn=4,pad=1", 0));
}

/// A whole-warp access of 4-byte lanes from `first`.
TraceStep warp_access(TraceOp op, std::uint64_t first) {
  TraceStep step;
  step.op = op;
  step.active_mask = 0xffffffffu;
  for (std::uint64_t lane = 0; lane < 32; ++lane) step.address[lane] = first + 4 * lane;
  return step;
}

// 4096 one-warp blocks each read the whole 64 KiB table (512 lines), then their own line of
// `rows`, and store their line of `out`. In full, DRAM reads the table once and every row once:
// 65536 + 524288 = 589824 B. With the default budget (a block's work is 514 instructions + 514
// lines, so 132 blocks, one per SM, from block 1980) a warm-up of 66 blocks brings the table into
// L2, its counts discarded, and the sample's blocks find it there: scaled, they read their rows
// alone, 524288 B. The floor restores the table: useful bytes 65536 + 524288 + 524288 less the
// 524288 B written to DRAM.
TEST(Sampling, SampledDramReadsNeverFallBelowTheCompulsoryBytes) {
  constexpr std::uint64_t kTable = std::uint64_t{1} << 30;
  constexpr std::uint64_t kRows = kTable + (1 << 20);
  constexpr std::uint64_t kOut = kTable + (2 << 20);
  TracedKernel kernel;
  kernel.name = "shared_table";
  kernel.grid = {4096, 1, 1};
  kernel.block = {32, 1, 1};
  kernel.buffers = {{"table", kTable, 65536}, {"rows", kRows, 4096 * 128}, {"out", kOut, 4096 * 128}};
  kernel.useful_bytes = 65536 + 2 * 4096 * 128;
  kernel.trace_block = [](const std::array<std::int64_t, 3>& index) {
    const auto block = static_cast<std::uint64_t>(index[0]);
    WarpTrace warp;
    for (std::uint64_t line = 0; line < 512; ++line)
      warp.steps.push_back(warp_access(TraceOp::load, kTable + 128 * line));
    warp.steps.push_back(warp_access(TraceOp::load, kRows + 128 * block));
    warp.steps.push_back(warp_access(TraceOp::store, kOut + 128 * block));
    warp.warp_instructions = 514;
    return BlockTrace{index, {warp}};
  };
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const Prediction sampled = simulate_traced(kernel, profile);
  ASSERT_TRUE(sampled.sampled);
  EXPECT_DOUBLE_EQ(sampled.metric("dram__bytes_write.sum"), 524288);
  EXPECT_DOUBLE_EQ(sampled.metric("dram__bytes_read.sum"), 589824);
  // Without useful bytes there is no floor: the scaled sample's rows alone.
  kernel.useful_bytes = 0;
  EXPECT_DOUBLE_EQ(simulate_traced(kernel, profile).metric("dram__bytes_read.sum"), 524288);
  SimulationOptions every_block;
  every_block.work_budget = 0;
  const Prediction full = simulate_traced(kernel, profile, every_block);
  ASSERT_FALSE(full.sampled);
  EXPECT_DOUBLE_EQ(full.metric("dram__bytes_read.sum"), 589824);
}

TEST(TimeEstimate, TransposeExpertConfigBeatsNaiveAndConflictedOnes) {
  const ProblemSpec problem{"transpose", 4096};
  const SimulationOptions defaults;
  const double expert = predict(problem, "smem=1,tile=32,block_x=32,block_y=8,pad=1", defaults.work_budget).time_us;
  const double naive = predict(problem, "smem=0,tile=32,block_x=32,block_y=8", defaults.work_budget).time_us;
  const double conflicted = predict(problem, "smem=1,tile=32,block_x=32,block_y=8,pad=0", defaults.work_budget).time_us;
  const double tiny_tiles = predict(problem, "smem=1,tile=8,block_x=8,block_y=8,pad=1", defaults.work_budget).time_us;
  EXPECT_LT(expert * 1.5, naive);      // 32 sectors per store request: 8x the L2 write traffic
  EXPECT_LT(expert * 2.0, conflicted); // 32-way bank conflicts on every column read
  EXPECT_LT(expert, tiny_tiles);       // 32 B row pieces, 2-warp blocks
}

TEST(TimeEstimate, TooFewBlocksAreLatencyBound) {
  // 64 blocks on 132 SMs: half the machine idles and each block's loads are one round trip.
  // On both sides the chain that no other resident block covers outweighs the rest: the issue
  // slots and dispatch on the SM side, the streaming levels on the memory side.
  const Prediction small = predict({"copy", 1 << 14}, "block=256,vector=1,ept=1", 0);
  const auto& t = small.time_terms_us;
  EXPECT_GT(t.at("latency"), t.at("sm") - t.at("latency"));
  EXPECT_GT(t.at("exposed_latency"), t.at("memory") - t.at("exposed_latency"));
  EXPECT_EQ(small.bottleneck, "latency");
  EXPECT_EQ(small.waves, 1);
}

TEST(TimeEstimate, ALaterWaveHidesItsChainBehindTheResidentBlocksWork) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const double launch_us = 2.0;
  // copy, 256-thread blocks of 16 vectors per thread (no barrier, DRAM-bound): one and a half
  // waves cost one wave and half a wave's traffic, 1.5x one wave, not what two waves do.
  const char* copy_config = "block=256,vector=4,ept=16";
  const std::int64_t copy_wave_elements = static_cast<std::int64_t>(profile.device.sm_count) *
                                          predict({"copy", 1 << 24}, copy_config, 0).blocks_per_sm * 256 * 64;
  const Prediction copy_one = predict({"copy", copy_wave_elements}, copy_config, 0);
  const Prediction copy_one_and_half = predict({"copy", 3 * copy_wave_elements / 2}, copy_config, 0);
  const Prediction copy_two = predict({"copy", 2 * copy_wave_elements}, copy_config, 0);
  EXPECT_EQ(copy_one_and_half.waves, 2);
  EXPECT_NEAR(copy_two.time_us - launch_us, 2.0 * (copy_one.time_us - launch_us), 0.01 * copy_two.time_us);
  EXPECT_NEAR(copy_one_and_half.time_us - launch_us, 1.5 * (copy_one.time_us - launch_us), 0.02 * copy_two.time_us);
  // gemm, one 32x32 tile per block along a 32-wide C (every block waits at its barriers for its
  // tiles; SM-bound): staged blocks too. The first wave starts together, so its blocks' chain
  // (under load) and work add: wave = chain + work. Later blocks start as others retire, so
  // while one waits on its chain the SM's other resident blocks issue: an SM's share of a later
  // wave costs the larger of its work and one block's chain plus that block's part of the work
  // (work / resident blocks). Half a wave puts ceil(half / SMs) blocks on the busiest SM.
  const char* gemm_config = "bm=32,bn=32,bk=32,tm=2,tn=2,pad=1";
  const Prediction gemm_probe = predict({"gemm", 4096, 32, 32}, gemm_config, 0);
  const std::int64_t sm_count = profile.device.sm_count;
  const std::int64_t gemm_wave_blocks = sm_count * gemm_probe.blocks_per_sm;
  const Prediction gemm_one = predict({"gemm", gemm_wave_blocks * 32, 32, 32}, gemm_config, 0);
  const Prediction gemm_one_and_half = predict({"gemm", 3 * gemm_wave_blocks / 2 * 32, 32, 32}, gemm_config, 0);
  const Prediction gemm_two = predict({"gemm", 2 * gemm_wave_blocks * 32, 32, 32}, gemm_config, 0);
  EXPECT_EQ(gemm_one_and_half.waves, 2);
  const double wave_us = gemm_one.time_us - launch_us;
  const double chain_us = gemm_one.time_terms_us.at("latency"); // staged: the loaded chain
  const double work_us = wave_us - chain_us;
  const double resident = static_cast<double>(gemm_probe.blocks_per_sm);
  const double half_blocks_per_sm = static_cast<double>((gemm_wave_blocks / 2 + sm_count - 1) / sm_count);
  const double busiest_share = half_blocks_per_sm / resident;
  EXPECT_LT(busiest_share, 0.9);
  EXPECT_NEAR(gemm_two.time_us - gemm_one.time_us, std::max(work_us, chain_us + work_us / resident), 0.02 * wave_us);
  const double resident_half = std::max(1.0, static_cast<double>(gemm_wave_blocks / 2) / static_cast<double>(sm_count));
  EXPECT_NEAR(gemm_one_and_half.time_us - gemm_one.time_us,
              std::max(busiest_share * work_us, chain_us + busiest_share * work_us / resident_half), 0.02 * wave_us);
  EXPECT_LT(gemm_two.time_us - gemm_one.time_us, wave_us - 0.2 * chain_us); // the later wave's chain is hidden
}

TEST(TimeEstimate, IssueSlotsAddWhileTheSharedPipeAndMemoryOverlap) {
  // One wave (256 blocks of 4 warps, 2 per SM), so the reported terms are that wave's. An SM's
  // schedulers issue the FMAs (compute) and every other instruction (issue) one slot each: those
  // add; its shared-memory pipe serves the wavefronts beside them and its block scheduler
  // dispatches the 2 blocks (150 cycles each) meanwhile (soft maximum, exponent 4); a block's
  // latency chain and its barrier drains (50 cycles each: 32 k-tiles of a load phase and an
  // inner-product phase, then the epilogue, 64 barriers) stall those same warps and add, the
  // chain loaded since gemm's blocks wait for their tile loads at a barrier. DRAM, L2 and L1 traffic stream beside
  // the SM (a soft maximum close to the largest, exponent 16), plus the loaded chain that the
  // 256 / 132 blocks resident per SM leave exposed; the soft maximum (exponent 4) of that
  // memory time and the SM time, plus 2 us launch. Loaded: rounds waiting for DRAM 3x, rounds
  // served by L2 (the tiles other blocks fetched already) 2x, so for gemm in between.
  const Prediction p = predict({"gemm", 1024}, "bm=128,bn=32,bk=32,tm=8,tn=4,pad=1", 0);
  ASSERT_EQ(p.waves, 1);
  const auto& t = p.time_terms_us;
  const double drains_us = 64 * 50.0 / 1980;
  const double loaded_us = t.at("latency") - drains_us; // staged: the SM waits for the loaded chain
  EXPECT_NEAR(t.at("exposed_latency"), loaded_us / (256.0 / 132.0), 1e-9 * loaded_us);
  EXPECT_NEAR(t.at("blocks"), 2 * 150.0 / 1980, 1e-12);
  const double slots_us = t.at("compute") + t.at("issue");
  const double sm_us =
      t.at("latency") +
      std::pow(std::pow(slots_us, 4) + std::pow(t.at("shared"), 4) + std::pow(t.at("blocks"), 4), 0.25);
  const double memory_us =
      std::pow(std::pow(t.at("dram"), 16) + std::pow(t.at("l2"), 16) + std::pow(t.at("l1"), 16), 1.0 / 16) +
      loaded_us / (256.0 / 132.0);
  const double expected_us = 2.0 + std::pow(std::pow(memory_us, 4) + std::pow(sm_us, 4), 0.25);
  EXPECT_NEAR(p.time_us, expected_us, 1e-9 * expected_us);
  // The two sides are reported as combined, and the bottleneck is the largest part of the larger one.
  EXPECT_NEAR(t.at("memory"), memory_us, 1e-9 * memory_us);
  EXPECT_NEAR(t.at("sm"), sm_us, 1e-9 * sm_us);
  ASSERT_GT(sm_us, memory_us);
  const std::vector<std::pair<std::string, double>> parts = {
      {"latency", t.at("latency")},
      {"blocks", t.at("blocks")},
      {t.at("compute") > t.at("issue") ? "compute" : "issue", slots_us},
      {"shared", t.at("shared")}};
  EXPECT_EQ(p.bottleneck, std::ranges::max(parts, {}, &std::pair<std::string, double>::second).first);
  EXPECT_GT(p.time_us - 2.0, sm_us);
  EXPECT_GT(sm_us, slots_us + loaded_us); // the shared pipe still adds a little
}

TEST(TimeEstimate, MemoryLevelsOverlapAlmostFully) {
  // DRAM, L2 and L1 stream as stages of one pipeline: a kernel whose DRAM and L2 times are close
  // takes about the larger one, not their sum (H200: stencil3d 256^3 in 128x2 vector-2 blocks,
  // predicted DRAM 34 us and L2 41 us, measured 42.5 us in all). The memory side of one wave of
  // 8 blocks per SM is the soft maximum with exponent 16 (two equal terms: 2^(1/16) = 1.044x
  // one) plus the loaded chain that 8 resident blocks leave exposed.
  const Prediction p = predict({"stencil3d", 256}, "mode=1,block_x=128,block_y=2,vector=2,z_chunk=64", 0);
  ASSERT_EQ(p.waves, 1);
  ASSERT_EQ(p.grid_blocks, 1 * 128 * 4);
  const auto& t = p.time_terms_us;
  const double levels_us =
      std::pow(std::pow(t.at("dram"), 16) + std::pow(t.at("l2"), 16) + std::pow(t.at("l1"), 16), 1.0 / 16);
  const double largest_us = std::max({t.at("dram"), t.at("l2"), t.at("l1")});
  EXPECT_LE(levels_us, 1.044 * largest_us);
  EXPECT_GT(levels_us, largest_us);
  // Not staged: the SM side waits for the idle chain, the memory side exposes the loaded one,
  // loaded at 3x for rounds that wait for DRAM and 2x for the rest (mostly DRAM here).
  const double loaded_us = t.at("exposed_latency") * (512.0 / 132.0);
  EXPECT_GT(loaded_us, 2.0 * t.at("latency"));
  EXPECT_LE(loaded_us, 3.0 * t.at("latency") * (1 + 1e-12));
  const double memory_us = levels_us + t.at("exposed_latency");
  const double sm_us = t.at("latency") + std::pow(std::pow(t.at("compute") + t.at("issue"), 4) +
                                                      std::pow(t.at("shared"), 4) + std::pow(t.at("blocks"), 4),
                                                  0.25);
  const double expected_us = 2.0 + std::pow(std::pow(memory_us, 4) + std::pow(sm_us, 4), 0.25);
  EXPECT_NEAR(p.time_us, expected_us, 1e-9 * expected_us);
  // The memory side is the larger and its streaming part outweighs the exposed latency: the
  // bottleneck is the largest level.
  ASSERT_GT(memory_us, sm_us);
  ASSERT_GT(levels_us, t.at("exposed_latency"));
  EXPECT_EQ(p.bottleneck, t.at("l2") > t.at("dram") ? "l2" : "dram");
}

TEST(TimeEstimate, OverheadInstructionsTakeIssueSlotsAndCountAsExecuted) {
  // A pattern's declared overhead (addresses, loop control) adds to its memory instructions in
  // the issue term, at 4 warp instructions per SM and cycle, and to smsp__inst_executed.sum
  // beside one FMA per 64 flops. Copy of 132 x 8 blocks of 256 threads, vector 4: one full wave
  // (8 blocks on every SM), 8448 warps of one load and one store.
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  SimulationOptions exact;
  exact.work_budget = 0;
  KernelPattern pattern = build_pattern({"copy", 132 * 8 * 256 * 4}, Config::parse("block=256,vector=4,ept=1"));
  ASSERT_EQ(blocks_per_sm(pattern, profile), 8);
  pattern.flops = 64.0 * 1000;
  pattern.overhead_instructions = 0;
  const Prediction bare = simulate(pattern, profile, exact);
  EXPECT_DOUBLE_EQ(bare.metric("smsp__inst_executed.sum"), 2.0 * 8448 + 1000);
  pattern.overhead_instructions = 3.0e6;
  const Prediction loaded = simulate(pattern, profile, exact);
  EXPECT_DOUBLE_EQ(loaded.metric("smsp__inst_executed.sum"), 2.0 * 8448 + 1000 + 3.0e6);
  const int observed_mhz = std::max(profile.device.sm_clock_mhz_after, profile.device.sm_clock_mhz_before);
  const double clock_mhz = observed_mhz > 0 ? observed_mhz : 1500.0; // the model's fallback
  const double slot_us = 1.0 / (4.0 * profile.device.sm_count * clock_mhz);
  EXPECT_NEAR(loaded.time_terms_us.at("issue") - bare.time_terms_us.at("issue"), 3.0e6 * slot_us, 1e-9);
  EXPECT_GT(loaded.time_us, bare.time_us);
}

TEST(TimeEstimate, GemmTileLoadsCostTheirMeasuredInstructions) {
  // The compiled gemm's overhead per warp (H200, smsp__inst_executed.sum): per k-step 78.9, per
  // tile element a thread loads 55.1, per inner-product step 1.1 for a 2x2 thread tile.
  // n=512, 64x32x32 tiles, 2x2 threads: 512 threads (16 warps) per block, 128 blocks, 16
  // k-steps, each thread loading (64x32 + 32x32) / 512 = 6 tile elements per k-step.
  // The example profile carries the H200 calibration (docs/calibration.md).
  const Calibration fit = load_profile(CACHEWISE_EXAMPLE_PROFILE).calibration;
  ASSERT_EQ(fit.gemm_overhead.per_tile_element_instructions.value, 55.1);
  const KernelPattern gemm = build_pattern({"gemm", 512}, Config::parse("bm=64,bn=32,bk=32,tm=2,tn=2,pad=1"), fit);
  const double per_warp = 16 * (32 * 1.1 + 6 * 55.1 + 78.9);
  EXPECT_NEAR(gemm.overhead_instructions, 128 * 16 * per_warp, 1e-6 * gemm.overhead_instructions);
  // Larger block tiles load fewer elements per FMA: 64x128 with 8x2 threads issues fewer
  // instructions than 128x32 with 4x4 at n=1024 (H200: 113.7 M against 135.3 M).
  const Prediction wide = predict({"gemm", 1024}, "bm=64,bn=128,bk=32,tm=8,tn=2,pad=0", 0);
  const Prediction tall = predict({"gemm", 1024}, "bm=128,bn=32,bk=32,tm=4,tn=4,pad=1", 0);
  EXPECT_NEAR(wide.metric("smsp__inst_executed.sum"), 113.7e6, 0.03 * 113.7e6);
  EXPECT_NEAR(tall.metric("smsp__inst_executed.sum"), 135.3e6, 0.03 * 135.3e6);
}

TEST(TimeEstimate, StoreBurstsSlowMixedDramTrafficByTheProfilesFactor) {
  // Measured slowdowns 1.02 at a burst of 2, 1.08 at 4, 1.10 at 8: linear in log2(burst)
  // between them, 1 at 1, 1.10 past 8, weighted by how evenly DRAM reads and writes mix.
  const DeviceProfile plain = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  DeviceProfile slowed = plain;
  const Provenance by_test{"test", 1, 0.0, Confidence::high};
  slowed.dram.store_burst_slowdown = {{2, {1.02, by_test}}, {4, {1.08, by_test}}, {8, {1.10, by_test}}};
  SimulationOptions exact;
  exact.work_budget = 0;
  KernelPattern copy = build_pattern({"copy", 1 << 22}, Config::parse("block=256,vector=4,ept=4"));
  ASSERT_EQ(copy.store_burst, 4);
  const Prediction reference = simulate(copy, plain, exact);
  const double read_bytes = reference.metric("dram__bytes_read.sum");
  const double write_bytes = reference.metric("dram__bytes_write.sum");
  const double mixed = 2.0 * std::min(read_bytes, write_bytes) / (read_bytes + write_bytes);
  EXPECT_GT(mixed, 0.99); // a copy reads and writes the same bytes
  const auto dram_ratio = [&](const KernelPattern& pattern) {
    return simulate(pattern, slowed, exact).time_terms_us.at("dram") /
           simulate(pattern, plain, exact).time_terms_us.at("dram");
  };
  EXPECT_NEAR(dram_ratio(copy), 1.0 + 0.08 * mixed, 1e-9);
  copy.store_burst = 3;
  EXPECT_NEAR(dram_ratio(copy), 1.0 + (0.02 + 0.06 * std::log2(1.5)) * mixed, 1e-9);
  copy.store_burst = 16;
  EXPECT_NEAR(dram_ratio(copy), 1.0 + 0.10 * mixed, 1e-9);
  copy.store_burst = 1;
  EXPECT_NEAR(dram_ratio(copy), 1.0, 1e-12);
  // Reads alone: nothing to mix with, whatever the burst.
  KernelPattern read_only = copy;
  read_only.store_burst = 4;
  ASSERT_TRUE(read_only.phases[0].accesses.back().is_store);
  read_only.phases[0].accesses.pop_back();
  EXPECT_NEAR(dram_ratio(read_only), 1.0, 1e-12);
}

TEST(TimeEstimate, BlocksThatWalkManyRoundsSlowMixedDramTrafficByTheProfilesFactor) {
  // copy, 8 scalar loads per thread in batches of 4: every warp walks 2 rounds. Measured
  // slowdowns 1.04 at 4 rounds and 1.08 at 16: at 2, 1 + 0.04 x log2(2) / log2(4) = 1.02.
  const DeviceProfile plain = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  DeviceProfile slowed = plain;
  const Provenance by_test{"test", 1, 0.0, Confidence::high};
  slowed.dram.block_walk_slowdown = {{4, {1.04, by_test}}, {16, {1.08, by_test}}};
  SimulationOptions exact;
  exact.work_budget = 0;
  const auto dram_us = [&](const char* config, const DeviceProfile& profile) {
    const Prediction p = simulate(build_pattern({"copy", 1 << 20}, Config::parse(config)), profile, exact);
    const double read = p.metric("dram__bytes_read.sum");
    const double write = p.metric("dram__bytes_write.sum");
    return std::make_pair(p.time_terms_us.at("dram"), 2.0 * std::min(read, write) / (read + write));
  };
  const auto [two_rounds_us, mixed] = dram_us("block=256,vector=1,ept=8", slowed);
  EXPECT_NEAR(two_rounds_us / dram_us("block=256,vector=1,ept=8", plain).first, 1.0 + 0.02 * mixed, 1e-9);
  // One round (ept 4, one batch): nothing to walk.
  EXPECT_NEAR(dram_us("block=256,vector=1,ept=4", slowed).first / dram_us("block=256,vector=1,ept=4", plain).first, 1.0,
              1e-12);
}

TEST(TimeEstimate, L2WritesCostTheProbesWriteRateInLookupsPerSectorWritten) {
  // The probe re-writes an L2-resident range: every store to a far-homed line is looked up in
  // the near partition and again at home, 1 + (P - 1) / P lookups per sector written (H200 ncu:
  // 162.2 M for 108.1 M, 1.500); its re-reads hit near copies, 1 lookup per sector. The l2 term
  // charges the simulated lookups at those rates: writes at 7000 x 1.5 GB/s of lookups with the
  // example profile's two partitions (its warp stores write whole lines, so the sparse-line
  // slowdown adds nothing).
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  ASSERT_EQ(profile.l2.partitions, 2);
  ASSERT_TRUE(profile.l2.write_bandwidth_gb_per_s && profile.l2.read_bandwidth_gb_per_s);
  SimulationOptions exact;
  exact.work_budget = 0;
  // Stores only: copy n=2^18 (1 MiB, 8192 lines) without its loads, 256 blocks: one wave.
  KernelPattern stores = build_pattern({"copy", 1 << 18}, Config::parse("block=256,vector=4,ept=1"));
  ASSERT_FALSE(stores.phases[0].accesses.front().is_store);
  stores.phases[0].accesses.erase(stores.phases[0].accesses.begin());
  const Prediction p = simulate(stores, profile, exact);
  ASSERT_EQ(p.waves, 1);
  const double write_lookups = p.metric("lts__t_sectors_op_write.sum");
  const double sectors_written = p.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum");
  EXPECT_EQ(sectors_written, (1 << 18) * 4 / 32);
  EXPECT_NEAR(write_lookups / sectors_written, 1.5, 0.03); // half the lines are homed far
  const double read_lookups = p.metric("lts__t_sectors_op_read.sum");
  const double expected_us = read_lookups * 32 / (9800 * 1e3) + write_lookups * 32 / (7000 * 1.5 * 1e3);
  EXPECT_NEAR(p.time_terms_us.at("l2"), expected_us, 1e-9 * expected_us);
}

TEST(TimeEstimate, StoresOfOneSectorPerLineCostTheProbesSparseLineSlowdown) {
  // Per line a store writes, a + b x its sectors there (whole-line sector-times): 4 sectors cost
  // 4, one costs the measured slowdown s. A copy of 16-byte vectors writes whole lines; a
  // transpose without shared memory (32x8 threads) writes 4 bytes into one sector of each of
  // 32 lines per warp store. With s = 2.0 the copy's l2 term does not move and every write
  // lookup of the transpose costs double.
  DeviceProfile plain = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  plain.l2.sparse_line_write_slowdown.reset();
  ASSERT_EQ(plain.l2.line_bytes.value / plain.l2.sector_bytes.value, 4);
  DeviceProfile slowed = plain;
  slowed.l2.sparse_line_write_slowdown = Measured{2.0, {"test", 1, 0.0, Confidence::high}};
  SimulationOptions exact;
  exact.work_budget = 0;
  const auto l2_us = [&](const KernelPattern& pattern, const DeviceProfile& profile) {
    return simulate(pattern, profile, exact).time_terms_us.at("l2");
  };
  const KernelPattern copy = build_pattern({"copy", 1 << 18}, Config::parse("block=256,vector=4,ept=1"));
  EXPECT_NEAR(l2_us(copy, slowed), l2_us(copy, plain), 1e-12 * l2_us(copy, plain));
  // n=256, 32x32 tiles of 32x8 threads: 64 blocks, one wave.
  const KernelPattern naive = build_pattern({"transpose", 256}, Config::parse("smem=0,tile=32,block_x=32,block_y=8"));
  const Prediction p = simulate(naive, plain, exact);
  ASSERT_EQ(p.waves, 1);
  EXPECT_EQ(p.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), 256.0 * 256); // a sector per element
  const double write_us = p.metric("lts__t_sectors_op_write.sum") * 32 / (7000 * 1.5 * 1e3);
  EXPECT_NEAR(l2_us(naive, slowed) - l2_us(naive, plain), write_us, 1e-9 * write_us);
}

TEST(TimeEstimate, EachRoundOfLoadsWaitsForItsSlowestLoadAndOneBlockPerSmExposesItAll) {
  // copy n=2^14, 256-thread blocks, 8 scalar loads per thread in batches of 4: 8 blocks, each
  // thread's loads are cold lines, so both rounds wait for DRAM: chain = 2 x DRAM latency.
  // Fewer blocks than SMs: nothing hides the loaded chain behind the traffic. Both rounds wait
  // for DRAM, at 1 + (3 - 1) u DRAM latencies, u the DRAM term's share of the time (8 blocks'
  // 128 KiB keep DRAM nearly idle).
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const Prediction p = predict({"copy", 1 << 14}, "block=256,vector=1,ept=8", 0);
  ASSERT_EQ(p.waves, 1);
  const int observed_mhz = std::max(profile.device.sm_clock_mhz_after, profile.device.sm_clock_mhz_before);
  const double clock_mhz = observed_mhz > 0 ? observed_mhz : 1500.0; // the model's fallback
  const auto& t = p.time_terms_us;
  EXPECT_NEAR(t.at("latency"), 2.0 * profile.dram.latency_cycles.value / clock_mhz, 1e-9);
  const double dram_load = t.at("dram") / (p.time_us - t.at("launch"));
  EXPECT_LT(dram_load, 0.1);
  const double loaded_factor = 1.0 + 2.0 * dram_load;
  EXPECT_NEAR(t.at("exposed_latency"), loaded_factor * t.at("latency"), 1e-6 * t.at("latency"));
  // No shared memory: the SM side is the chain + soft maximum (exponent 4) of the issue slots
  // and the block dispatch.
  EXPECT_EQ(t.at("shared"), 0);
  const double sm_us =
      t.at("latency") + std::pow(std::pow(t.at("compute") + t.at("issue"), 4) + std::pow(t.at("blocks"), 4), 0.25);
  const double memory_us =
      std::pow(std::pow(t.at("dram"), 16) + std::pow(t.at("l2"), 16) + std::pow(t.at("l1"), 16), 1.0 / 16) +
      loaded_factor * t.at("latency");
  EXPECT_NEAR(p.time_us, 2.0 + std::pow(std::pow(memory_us, 4) + std::pow(sm_us, 4), 0.25), 1e-6 * p.time_us);
}

} // namespace
} // namespace cachewise
