// The time model's mechanisms beyond traffic (docs/model.md: "Issue slots of partial warps",
// "Atomics", "Block dispatch", "L1 wavefronts", "Constant memory", loaded latency), on hand-written traces whose terms
// follow from the example profile: 132 SMs at 1980 MHz, 2 us launch overhead, 4 warp instructions a cycle per SM, 256
// FP32 flops a cycle per SM, one cycle per atomic on an address, 150 cycles to dispatch a block, 50 per barrier, soft
// maximum exponent 4; 32 blocks, 2048 threads and 65536 registers per SM.
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "cachewise/model/simulation/kernel_trace.hpp"
#include "cachewise/model.hpp"

namespace cachewise {
namespace {

constexpr std::uint64_t kBase = std::uint64_t{1} << 30;
constexpr double kClockMhz = 1980.0;

DeviceProfile profile() { return load_profile(CACHEWISE_EXAMPLE_PROFILE); }

SimulationOptions exact() {
  SimulationOptions options;
  options.work_budget = 0;
  return options;
}

/// A warp access: lane i at first + i * stride bytes.
TraceStep access(TraceSpace space, TraceOp op, std::uint64_t first, std::uint64_t stride,
                 std::uint32_t mask = 0xffffffffu) {
  TraceStep step;
  step.space = space;
  step.op = op;
  step.bytes_per_lane = 4;
  step.active_mask = mask;
  for (std::uint64_t lane = 0; lane < 32; ++lane) step.address[lane] = first + lane * stride;
  return step;
}

/// Blocks of one warp running `steps` (each block the same), `instructions` executed by the
/// warp and `flops` of its active lanes; one 1 MiB buffer.
TracedKernel one_warp_blocks(std::vector<TraceStep> steps, std::int64_t blocks, double instructions = 0,
                             double flops = 0) {
  TracedKernel kernel;
  kernel.name = "hand";
  kernel.grid = {blocks, 1, 1};
  kernel.block = {32, 1, 1};
  kernel.buffers = {{"data", kBase, 1 << 20}};
  kernel.trace_block = [steps, instructions, flops](const std::array<std::int64_t, 3>& index) {
    return BlockTrace{index, {WarpTrace{steps, instructions, flops}}};
  };
  return kernel;
}

TEST(IssueSlots, APartialWarpTakesAWholeIssueSlot) {
  // 100 warp instructions, 50 of them FMAs. All 32 lanes active: 50 x 64 = 3200 flops. One lane
  // active (a divergent tail): 50 x 2 = 100 flops, yet the same 100 instructions issue. Issue
  // and FMA slots add: 100 / 4 = 25 cycles on the block's SM either way; the FMA part is
  // 3200 / 256 = 12.5 cycles for the full warp and 100 / 256 = 0.39 cycles for the single lane.
  const Prediction full = simulate_traced(one_warp_blocks({}, 1, 100, 3200), profile(), exact());
  const Prediction one_lane = simulate_traced(one_warp_blocks({}, 1, 100, 100), profile(), exact());
  for (const Prediction* p : {&full, &one_lane}) {
    EXPECT_NEAR(p->time_terms_us.at("compute") + p->time_terms_us.at("issue"), 25.0 / kClockMhz, 1e-12);
    EXPECT_DOUBLE_EQ(p->metric("smsp__inst_executed.sum"), 100);
  }
  EXPECT_NEAR(full.time_terms_us.at("compute"), 12.5 / kClockMhz, 1e-12);
  EXPECT_NEAR(one_lane.time_terms_us.at("compute"), 100.0 / 256 / kClockMhz, 1e-12);
  EXPECT_NEAR(one_lane.time_us, full.time_us, 1e-12);
}

TEST(Atomics, LanesOnOneSharedWordSerialise) {
  // 32 lanes on shared word 0: a store is one wavefront (the word written once), an atomic's
  // read-modify-writes go one lane per wavefront: 32, of which 31 conflicts.
  const Prediction stored =
      simulate_traced(one_warp_blocks({access(TraceSpace::shared, TraceOp::store, 0, 0)}, 1), profile(), exact());
  EXPECT_EQ(stored.metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), 1);
  const Prediction atomic =
      simulate_traced(one_warp_blocks({access(TraceSpace::shared, TraceOp::atomic, 0, 0)}, 1), profile(), exact());
  EXPECT_EQ(atomic.metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), 32);
  EXPECT_EQ(atomic.metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"), 31);
  // Lanes on 32 distinct words in 32 banks (stride 4 B): no serialisation, one wavefront.
  const Prediction spread =
      simulate_traced(one_warp_blocks({access(TraceSpace::shared, TraceOp::atomic, 0, 4)}, 1), profile(), exact());
  EXPECT_EQ(spread.metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), 1);
  // Lanes 0-15 on word 0 and 16-31 on word 1 (banks 0 and 1): 16 lanes per bank, 16 wavefronts.
  TraceStep halves = access(TraceSpace::shared, TraceOp::atomic, 0, 0);
  for (std::size_t lane = 16; lane < 32; ++lane) halves.address[lane] = 4;
  const Prediction two_words = simulate_traced(one_warp_blocks({halves}, 1), profile(), exact());
  EXPECT_EQ(two_words.metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), 16);
}

TEST(Atomics, GlobalAtomicsOnOneAddressSerialiseAtItsL2Slice) {
  // 4224 one-warp blocks, every lane adding to the same word: 32 x 4224 = 135168 operations on
  // one address, 1 cycle each at its L2 slice (the calibration's same_address_atomic_cycles,
  // set here): 135168 / 1980 = 68.27 us, far above the traffic (one line). The time is the
  // memory side (2 + that, the other levels' 16th powers negligible beside it).
  DeviceProfile device = profile();
  device.calibration.same_address_atomic_cycles = {1.0, "test"};
  TracedFacts facts;
  const Prediction hot = simulate_traced(one_warp_blocks({access(TraceSpace::global, TraceOp::atomic, kBase, 0)}, 4224),
                                         device, exact(), &facts);
  EXPECT_DOUBLE_EQ(facts.hottest_address_atomics, 32.0 * 4224);
  EXPECT_NEAR(hot.time_terms_us.at("atomics"), 32.0 * 4224 / kClockMhz, 1e-9);
  EXPECT_EQ(hot.bottleneck, "atomics");
  EXPECT_NEAR(hot.time_us, 2.0 + 32.0 * 4224 / kClockMhz, 0.01 * hot.time_us);
  // Each lane on its own word (the same 32 words in every block): 4224 operations on the
  // hottest, 2.13 us, 32x less.
  const Prediction spread = simulate_traced(
      one_warp_blocks({access(TraceSpace::global, TraceOp::atomic, kBase, 4)}, 4224), device, exact(), &facts);
  EXPECT_DOUBLE_EQ(facts.hottest_address_atomics, 4224);
  EXPECT_NEAR(spread.time_terms_us.at("atomics"), 4224 / kClockMhz, 1e-9);
  // With the default value (0) atomics cost nothing beyond their traffic.
  device.calibration.same_address_atomic_cycles = default_calibration().same_address_atomic_cycles;
  EXPECT_NEAR(
      simulate_traced(one_warp_blocks({access(TraceSpace::global, TraceOp::atomic, kBase, 0)}, 4224), device, exact())
          .time_terms_us.at("atomics"),
      0.0, 1e-12);
}

/// The block-cost experiment's shape (measurements/block-costs): 132 x 16384 threads of
/// `steps` dependent FMAs each, no memory access, cut into blocks of `threads`; each warp
/// issues `steps` FMAs (64 flops each), and with `barrier` waits at one __syncthreads (then for
/// its loads, none: a step that opens the interval after the barrier).
TEST(L1Wavefronts, ALoadCostsEachLineItTouchesAStoreItsSectors) {
  // 132 blocks of one warp (one a SM, one wave), each making 10 warp accesses. L1 serves the
  // example profile's 30000 GB/s = 3e7 B/us over the chip, a line 128 B. Lanes 4 B apart: one
  // line a request, 132 x 10 x 128 B. Lanes 128 B apart: 32 lines a load request, each
  // wanting one 32-byte sector, yet each a whole line's wavefront: 132 x 10 x 32 x 128 B, 32x
  // the coalesced load (by sectors it would be 8x). Stores 128 B apart move their 32 sectors:
  // 132 x 10 x 32 x 32 B.
  const auto l1_us = [](TraceOp op, std::uint64_t stride) {
    std::vector<TraceStep> steps;
    for (std::uint64_t i = 0; i < 10; ++i)
      steps.push_back(access(TraceSpace::global, op, kBase + i * 4096 * 8, stride));
    return simulate_traced(one_warp_blocks(steps, 132), profile(), exact()).time_terms_us.at("l1");
  };
  constexpr double kL1BytesPerUs = 30000.0 * 1e3;
  EXPECT_NEAR(l1_us(TraceOp::load, 4), 132.0 * 10 * 128 / kL1BytesPerUs, 1e-12);
  EXPECT_NEAR(l1_us(TraceOp::load, 128), 132.0 * 10 * 32 * 128 / kL1BytesPerUs, 1e-12);
  EXPECT_NEAR(l1_us(TraceOp::store, 128), 132.0 * 10 * 32 * 32 / kL1BytesPerUs, 1e-12);
}

TEST(ConstantCache, EachRequestTakesTheCacheItsCycles) {
  // 132 blocks of one warp (one a SM, one wave) making 32000 constant-cache requests each (1000
  // reads, each lane on its own address) and nothing else; at 2 cycles a request the SM side is
  // 64000 cycles, 32.32 us, and the constant cache the bottleneck. Without the calibration value
  // (the example profile's) the requests cost nothing.
  TracedKernel kernel = one_warp_blocks({}, 132);
  kernel.trace_block = [](const std::array<std::int64_t, 3>& index) {
    WarpTrace warp;
    warp.constant_requests = 32000;
    return BlockTrace{index, {warp}};
  };
  DeviceProfile charged = profile();
  charged.calibration.constant_request_cycles.value = 2.0;
  const Prediction p = simulate_traced(kernel, charged, exact());
  EXPECT_NEAR(p.time_terms_us.at("constant"), 64000.0 / kClockMhz, 1e-9);
  EXPECT_NEAR(p.time_us, 2 + 64000.0 / kClockMhz, 1e-9);
  EXPECT_EQ(p.bottleneck, "constant");
  EXPECT_EQ(simulate_traced(kernel, profile(), exact()).time_terms_us.at("constant"), 0.0);
}

TEST(LoadedLatency, ADramRoundWaitsLongerOnlyAsDramIsBusy) {
  // 132 blocks of one warp, one a SM (one wave), each reading 16 lines of its own that no one
  // read before, one at a time (a wait after each): 16 rounds that go to DRAM, 16 x 650 =
  // 10400 cycles of idle chain, 5.25 us. Its DRAM bytes (132 x 16 x 128 B) keep DRAM busy a
  // small fraction u of the time, so a round waits 1 + (3 - 1) u DRAM latencies, not the 3 of a
  // busy DRAM: with one block a SM the whole loaded chain is exposed on the memory side.
  TracedKernel kernel;
  kernel.name = "chase";
  kernel.grid = {132, 1, 1};
  kernel.block = {32, 1, 1};
  kernel.buffers = {{"data", kBase, 1 << 20}};
  kernel.trace_block = [](const std::array<std::int64_t, 3>& index) {
    std::vector<TraceStep> steps;
    for (std::int64_t i = 0; i < 16; ++i) {
      steps.push_back(access(TraceSpace::global, TraceOp::load, kBase + (index[0] * 16 + i) * 128, 4));
      TraceStep wait;
      wait.kind = TraceStep::Kind::wait_loads;
      steps.push_back(wait);
    }
    return BlockTrace{index, {WarpTrace{steps, 32, 0}}};
  };
  const Prediction p = simulate_traced(kernel, profile(), exact());
  const auto& t = p.time_terms_us;
  ASSERT_EQ(p.waves, 1);
  EXPECT_NEAR(t.at("latency"), 16 * 650.0 / kClockMhz, 1e-9);
  const double dram_load = t.at("dram") / (p.time_us - t.at("launch"));
  EXPECT_GT(dram_load, 0.0);
  EXPECT_LT(dram_load, 0.05);
  EXPECT_NEAR(t.at("exposed_latency"), (1 + 2 * dram_load) * t.at("latency"), 1e-6);
  EXPECT_EQ(p.bottleneck, "latency");
}

TracedKernel fma_blocks(std::int64_t threads, double steps, int barriers = 0) {
  TracedKernel kernel;
  kernel.name = "fma";
  kernel.grid = {132 * 16384 / threads, 1, 1};
  kernel.block = {threads, 1, 1};
  kernel.buffers = {{"data", kBase, 1 << 20}};
  std::vector<TraceStep> steps_of_warp;
  for (int i = 0; i < barriers; ++i) {
    TraceStep sync;
    sync.kind = TraceStep::Kind::barrier;
    steps_of_warp.push_back(sync);
    TraceStep wait;
    wait.kind = TraceStep::Kind::wait_loads;
    steps_of_warp.push_back(wait);
  }
  kernel.trace_block = [threads, steps, steps_of_warp](const std::array<std::int64_t, 3>& index) {
    return BlockTrace{index, std::vector<WarpTrace>(threads / 32, WarpTrace{steps_of_warp, steps, steps * 64})};
  };
  return kernel;
}

/// Soft maximum with the example profile's exponent 4.
double soft_max(double a, double b) { return std::pow(std::pow(a, 4) + std::pow(b, 4), 0.25); }

TEST(BlockDispatch, DispatchOverlapsTheResidentBlocksWork) {
  // An SM dispatches its next block while the resident ones compute: per wave the SM side is the
  // soft maximum of dispatch and work, not their sum (H200: 512 FMA steps run 48.2-49.3 us in
  // blocks of 32 to 1024 threads; 64 steps fall from 47.2 to 13.4 us as blocks grow).
  // 32-thread blocks: 32 per SM (the block limit), 67584 blocks in 16 waves of 4224; per wave and
  // SM 32 warps x steps / 4 cycles of FMAs and 32 x 150 = 4800 cycles of dispatch.
  // 1024-thread blocks: 2 per SM (threads), 2112 blocks in 8 waves of 264; per wave and SM 64
  // warps x steps / 4 cycles of FMAs and 2 x 150 = 300 cycles of dispatch.
  const Prediction small_512 = simulate_traced(fma_blocks(32, 512), profile(), exact());
  const Prediction large_512 = simulate_traced(fma_blocks(1024, 512), profile(), exact());
  const Prediction small_64 = simulate_traced(fma_blocks(32, 64), profile(), exact());
  const Prediction large_64 = simulate_traced(fma_blocks(1024, 64), profile(), exact());
  ASSERT_EQ(small_512.waves, 16);
  ASSERT_EQ(large_512.waves, 8);
  EXPECT_NEAR(small_512.time_terms_us.at("blocks"), 16 * 4800.0 / kClockMhz, 1e-9);
  EXPECT_NEAR(small_512.time_terms_us.at("compute"), 16 * 4096.0 / kClockMhz, 1e-9);
  // 512 steps, 32 threads: 4096 cycles of FMAs beside 4800 of dispatch: 5338.6 cycles a wave,
  // 45.14 us (the sum would be 73.89 us, the larger alone 40.79 us).
  EXPECT_NEAR(small_512.time_us, 2 + 16 * soft_max(4096, 4800) / kClockMhz, 1e-9);
  // 512 steps, 1024 threads: 8192 cycles of FMAs hide the 300 of dispatch: 35.10 us (sum 36.31).
  EXPECT_NEAR(large_512.time_us, 2 + 8 * soft_max(8192, 300) / kClockMhz, 1e-9);
  // 64 steps: dispatch-bound in 32-thread blocks (512 cycles of FMAs beside 4800 of dispatch:
  // 40.79 us), work-bound in 1024-thread ones (1024 beside 300: 6.14 us).
  EXPECT_NEAR(small_64.time_us, 2 + 16 * soft_max(512, 4800) / kClockMhz, 1e-9);
  EXPECT_NEAR(large_64.time_us, 2 + 8 * soft_max(1024, 300) / kClockMhz, 1e-9);
  EXPECT_EQ(small_64.bottleneck, "blocks");
  EXPECT_EQ(large_512.bottleneck, "compute");
}

TEST(BlockDispatch, ABarrierDrainIsHiddenByTheOtherResidentBlocksAfterTheFirstWave) {
  // One __syncthreads per block (a 50-cycle drain). The first wave's 32 blocks a SM start
  // together: one block's drain, then the wave's work (5338.6 cycles, above). Later blocks start
  // as others retire, so while one drains the other 31 issue: a later wave costs the larger of
  // its work and one block's drain plus its own 1/32 of the work, max(5338.6, 50 + 166.8):
  // 16 waves, 50 + 16 x 5338.6 cycles, 45.17 us (a drain in every wave would be 45.55 us).
  const Prediction p = simulate_traced(fma_blocks(32, 512, 1), profile(), exact());
  ASSERT_EQ(p.waves, 16);
  EXPECT_NEAR(p.time_terms_us.at("latency"), 16 * 50.0 / kClockMhz, 1e-9);
  EXPECT_NEAR(p.time_us, 2 + (50 + 16 * soft_max(4096, 4800)) / kClockMhz, 1e-9);
}

TEST(BlockDispatch, AChainLongerThanTheOtherBlocksWorkBoundsTheLaterWaves) {
  // 1024-thread blocks, 2 a SM, 8 waves; 8 FMA steps and 8 barriers a block. A wave's work per SM:
  // 2 x 32 warps x 8 steps / 4 = 128 cycles of FMAs beside 2 x 150 of dispatch, soft(128, 300) =
  // 302.4 cycles; one block's chain: 8 drains x 50 = 400 cycles. First wave: 400 + 302.4. A later
  // block holds its slot for its chain and its half of the work, and two slots serve a wave:
  // max(302.4, 400 + 151.2) = 551.2 cycles. 2 + (702.4 + 7 x 551.2) / 1980 = 4.30 us.
  const Prediction p = simulate_traced(fma_blocks(1024, 8, 8), profile(), exact());
  ASSERT_EQ(p.waves, 8);
  ASSERT_EQ(p.blocks_per_sm, 2);
  const double work_cycles = soft_max(128, 300);
  EXPECT_NEAR(p.time_terms_us.at("latency"), 8 * 400.0 / kClockMhz, 1e-9);
  EXPECT_NEAR(p.time_us, 2 + (400 + work_cycles + 7 * (400 + work_cycles / 2)) / kClockMhz, 1e-9);
}

} // namespace
} // namespace cachewise
