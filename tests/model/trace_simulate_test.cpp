// simulate_traced on small hand-written traces whose counts follow from the hardware rules
// (docs/model.md): coalescing, banks, load rounds, barriers, local interleaving, bad input.
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "cachewise/model/simulation/kernel_trace.hpp"
#include "cachewise/model.hpp"

namespace cachewise {
namespace {

constexpr std::uint64_t kBase = std::uint64_t{1} << 30;

DeviceProfile profile() { return load_profile(CACHEWISE_EXAMPLE_PROFILE); }

SimulationOptions exact() {
  SimulationOptions options;
  options.work_budget = 0;
  return options;
}

/// A warp access: lane i at first + i * stride bytes.
TraceStep access(TraceSpace space, TraceOp op, std::uint64_t first, std::uint64_t stride, std::uint8_t bytes = 4,
                 std::uint32_t mask = 0xffffffffu) {
  TraceStep step;
  step.space = space;
  step.op = op;
  step.bytes_per_lane = bytes;
  step.active_mask = mask;
  step.instruction = 7;
  for (std::uint64_t lane = 0; lane < 32; ++lane) step.address[lane] = first + lane * stride;
  return step;
}

TraceStep load(std::uint64_t first) { return access(TraceSpace::global, TraceOp::load, first, 4); }
TraceStep store(std::uint64_t first) { return access(TraceSpace::global, TraceOp::store, first, 4); }
TraceStep wait() { return {.kind = TraceStep::Kind::wait_loads}; }
TraceStep barrier() { return {.kind = TraceStep::Kind::barrier}; }

/// One block of `warps.size()` full warps, every block the same trace; one 1 MiB buffer.
TracedKernel kernel_of(std::vector<std::vector<TraceStep>> warps, Dim3 grid = {}) {
  TracedKernel kernel;
  kernel.name = "hand";
  kernel.grid = grid;
  kernel.block = {static_cast<std::int64_t>(32 * warps.size()), 1, 1};
  kernel.buffers = {{"data", kBase, 1 << 20}};
  kernel.trace_block = [warps](const std::array<std::int64_t, 3>& index) {
    BlockTrace trace;
    trace.block_index = index;
    for (const std::vector<TraceStep>& steps : warps)
      trace.warps.push_back({steps, static_cast<double>(steps.size()), 0.0});
    return trace;
  };
  return kernel;
}

TEST(TraceSimulate, ThirtyTwoConsecutiveWordsAreOneRequestOfFourSectors) {
  const Prediction p = simulate_traced(kernel_of({{load(kBase)}}), profile(), exact());
  EXPECT_EQ(p.metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 1);
  EXPECT_EQ(p.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 4); // 128 B: one line, 4 sectors of 32 B
  EXPECT_EQ(p.metric("dram__bytes_read.sum"), 128);                         // cold: the whole line from DRAM
  // Strided by 8 bytes, the same 32 words spread over two lines: 2 x 4 sectors, still one request.
  const Prediction strided =
      simulate_traced(kernel_of({{access(TraceSpace::global, TraceOp::load, kBase, 8)}}), profile(), exact());
  EXPECT_EQ(strided.metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 1);
  EXPECT_EQ(strided.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 8);
  // Half the lanes: 64 B, 2 sectors.
  const Prediction half = simulate_traced(
      kernel_of({{access(TraceSpace::global, TraceOp::load, kBase, 4, 4, 0x0000ffffu)}}), profile(), exact());
  EXPECT_EQ(half.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 2);
}

TEST(TraceSimulate, StrideOfThirtyTwoWordsInSharedIsAThirtyTwoWayConflict) {
  // Lane i at byte 128 i: word 32 i, bank (32 i) mod 32 = 0 for every lane, 32 distinct words.
  const Prediction conflicted =
      simulate_traced(kernel_of({{access(TraceSpace::shared, TraceOp::store, 0, 128)}}), profile(), exact());
  EXPECT_EQ(conflicted.metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), 32);
  EXPECT_EQ(conflicted.metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"), 31);
  // Stride 33 words: banks (33 i) mod 32 = i, all distinct: one wavefront.
  const Prediction padded =
      simulate_traced(kernel_of({{access(TraceSpace::shared, TraceOp::load, 0, 132)}}), profile(), exact());
  EXPECT_EQ(padded.metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"), 1);
  EXPECT_EQ(padded.metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), 0);
}

TEST(TraceSimulate, AWaitAfterFourLoadsClosesOneRoundOfFour) {
  const DeviceProfile device = profile();
  const double dram_cycles = device.dram.latency_cycles.value; // 650: each load a cold line
  const double clock_mhz = device.device.sm_clock_mhz_after;   // 1980
  TracedFacts facts;
  const Prediction one_round =
      simulate_traced(kernel_of({{load(kBase), load(kBase + 128), load(kBase + 256), load(kBase + 384), wait()}}),
                      device, exact(), &facts);
  EXPECT_DOUBLE_EQ(facts.loads_in_flight, 4.0);
  // The chain of the single block: one round, waiting for its slowest load (DRAM).
  EXPECT_NEAR(one_round.time_terms_us.at("latency"), dram_cycles / clock_mhz, 1e-12);
  const Prediction two_rounds = simulate_traced(
      kernel_of({{load(kBase), load(kBase + 128), wait(), load(kBase + 256), load(kBase + 384), wait()}}), device,
      exact(), &facts);
  EXPECT_DOUBLE_EQ(facts.loads_in_flight, 2.0);
  EXPECT_NEAR(two_rounds.time_terms_us.at("latency"), 2 * dram_cycles / clock_mhz, 1e-12);
}

TEST(TraceSimulate, ABarrierAlignsTheWarpsOfABlock) {
  // Warp 0 stores line X as its third step; warp 1 loads X right after the barrier, as its
  // second. Aligned, the load comes after the store and finds X in L2 (the example profile's L2
  // allocates on store): DRAM reads only lines Y, Z and W. Issued by step index alone, warp 1
  // would load X first and read it from DRAM too (512 B).
  const std::uint64_t x = kBase, y = kBase + 1024, z = kBase + 2048, w = kBase + 4096;
  const Prediction p = simulate_traced(
      kernel_of({{load(y), load(z), store(x), barrier()}, {load(w), barrier(), load(x)}}), profile(), exact());
  EXPECT_EQ(p.metric("dram__bytes_read.sum"), 3 * 128);
  EXPECT_EQ(p.metric("dram__bytes_write.sum"), 128); // X, written back at the end
  EXPECT_EQ(p.metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 4);
}

TEST(TraceSimulate, AnAccessNoLaneIssuesStillTakesItsSlot) {
  // Warp 0's first access has no active lane, as a pattern's guarded-off warp; it keeps its
  // place, so warp 0 loads X in the second slot, after warp 1 stored all of X in the first: an
  // L2 hit, no DRAM read (were the idle access dropped, the load would go first and miss).
  const std::uint64_t x = kBase;
  const Prediction p = simulate_traced(
      kernel_of({{access(TraceSpace::global, TraceOp::load, x, 4, 4, 0), load(x)}, {store(x)}}), profile(), exact());
  EXPECT_EQ(p.metric("dram__bytes_read.sum"), 0);
  EXPECT_EQ(p.metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 1); // the idle one issues nothing
}

TEST(TraceSimulate, ManyLaneShapesAreCountedRight) {
  // Two waves of one-warp blocks (132 SMs x 32 blocks each). The first wave's 16 loads per
  // block each have a lane stride of their own, 128 B or more: 67584 shapes (past the 65536 the
  // runner keeps, so it forgets them before the second wave), every lane its own line: 32
  // sectors a request. The second wave's loads are its first 1..16 lanes at a 4-byte stride
  // from a line start: ceil(lanes / 8) sectors.
  constexpr std::int64_t kWave = 132 * 32;
  TracedKernel kernel = kernel_of({{}}, {2 * kWave, 1, 1});
  kernel.buffers = {{"data", kBase, std::int64_t{1} << 29}};
  kernel.trace_block = [](const std::array<std::int64_t, 3>& index) {
    const auto b = static_cast<std::uint64_t>(index[0]);
    WarpTrace warp;
    for (std::uint64_t j = 0; j < 16; ++j) {
      if (b < kWave) {
        warp.steps.push_back(access(TraceSpace::global, TraceOp::load, kBase, 128 * (1 + b * 16 + j)));
      } else {
        warp.steps.push_back(access(TraceSpace::global, TraceOp::load, kBase + 128 * j, 4, 4, (2u << j) - 1u));
      }
    }
    return BlockTrace{index, {warp}};
  };
  const Prediction p = simulate_traced(kernel, profile(), exact());
  EXPECT_EQ(p.metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 2 * kWave * 16);
  // Second wave: lanes 1..8 take one sector, 9..16 two: 8 x 1 + 8 x 2 per block.
  EXPECT_EQ(p.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), kWave * 16 * 32 + kWave * (8 * 1 + 8 * 2));
}

TEST(TraceSimulate, LocalWordsInterleaveAcrossThreads) {
  // 32 threads in all: frame word k of thread t at window + 128 k + 4 t. A 4-byte local load at
  // offset 0 by the whole warp is one line; an 8-byte one covers words 0 and 1: two lines.
  TracedKernel word = kernel_of({{access(TraceSpace::local, TraceOp::load, 0, 0)}});
  word.local_bytes_per_thread = 16;
  const Prediction one_line = simulate_traced(word, profile(), exact());
  EXPECT_EQ(one_line.metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 1);
  EXPECT_EQ(one_line.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 4);
  TracedKernel pair = kernel_of({{access(TraceSpace::local, TraceOp::store, 0, 0, 8)}});
  pair.local_bytes_per_thread = 16;
  const Prediction two_lines = simulate_traced(pair, profile(), exact());
  EXPECT_EQ(two_lines.metric("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"), 1);
  EXPECT_EQ(two_lines.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), 8);
  // Beyond the 16-byte frame: an error naming the frame.
  TracedKernel beyond = kernel_of({{access(TraceSpace::local, TraceOp::load, 16, 0)}});
  beyond.local_bytes_per_thread = 16;
  try {
    simulate_traced(beyond, profile(), exact());
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("outside the 16-byte local frame"), std::string::npos) << error.what();
  }
}

TEST(TraceSimulate, AGlobalAccessOutsideEveryBufferIsAnInputErrorNamingIt) {
  try {
    simulate_traced(kernel_of({{load(kBase), load(kBase + (1 << 20) - 64)}}), profile(), exact());
    FAIL() << "no error";
  } catch (const InputError& error) {
    const std::string what = error.what();
    // Lanes 16.. of the second load run past the buffer's last byte.
    EXPECT_NE(what.find("global load (instruction 7)"), std::string::npos) << what;
    EXPECT_NE(what.find("lane 16 at 0x40100000"), std::string::npos) << what;
    EXPECT_NE(what.find("outside every buffer (data at 0x40000000, 1048576 bytes)"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

// TracedKernel::simulate_out_of_bounds_reads: loads outside the 1 MiB buffer are simulated at their
// addresses. Lanes 16.. of a load at its last 64 bytes run 64 bytes past it (2 + 2 sectors of two
// lines), and a load 128 bytes before it is one whole line: 2 requests, 8 sectors. Stores outside
// stay errors, and so does a load at the local window, past the buffer's 1 MiB guard gap.
TEST(TraceSimulate, LoadsOutsideEveryBufferAreSimulatedOnRequest) {
  TracedKernel kernel = kernel_of({{load(kBase + (1 << 20) - 64), load(kBase - 128)}});
  kernel.simulate_out_of_bounds_reads = true;
  const Prediction prediction = simulate_traced(kernel, profile(), exact());
  EXPECT_EQ(prediction.metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 2);
  EXPECT_EQ(prediction.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 8);
  for (const TraceStep& step : {store(kBase + (1 << 20)), load(kBase + (2 << 20) - 4)}) {
    TracedKernel refused = kernel_of({{step}});
    refused.simulate_out_of_bounds_reads = true;
    try {
      simulate_traced(refused, profile(), exact());
      FAIL() << "no error";
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find("outside every buffer"), std::string::npos) << error.what();
    }
  }
}

TEST(TraceSimulate, TheTimeModelsInputsComeFromTheTrace) {
  // One block of one warp without memory accesses: 10^6 flops and 100 other instructions.
  TracedKernel kernel = kernel_of({{}});
  kernel.trace_block = [](const std::array<std::int64_t, 3>& index) {
    return BlockTrace{index, {WarpTrace{{}, 1e6 / 64 + 100, 1e6}}};
  };
  TracedFacts facts;
  const Prediction p = simulate_traced(kernel, profile(), exact(), &facts);
  EXPECT_DOUBLE_EQ(facts.flops, 1e6);
  EXPECT_DOUBLE_EQ(facts.overhead_instructions, 100);
  EXPECT_DOUBLE_EQ(p.metric("smsp__inst_executed.sum"), 1e6 / 64 + 100);
  // The block runs on one SM at 1980 MHz: 256 flops a cycle, 4 instructions a cycle, 150 cycles
  // to start a block (no barrier).
  EXPECT_NEAR(p.time_terms_us.at("compute"), 1e6 / 256 / 1980, 1e-12);
  EXPECT_NEAR(p.time_terms_us.at("issue"), 100.0 / 4 / 1980, 1e-12);
  EXPECT_NEAR(p.time_terms_us.at("blocks"), 150.0 / 1980, 1e-12);
}

TEST(TraceSimulate, OccupancyAndLimitsComeFromTheKernelsResources) {
  TracedKernel kernel = kernel_of(std::vector<std::vector<TraceStep>>(8, {load(kBase)}));
  kernel.registers_per_thread = 40; // 1280 per warp, 10240 per 256-thread block: 6 of 65536
  EXPECT_EQ(blocks_per_sm(kernel, profile()), 6);
  kernel.shared_bytes_per_block = 48 * 1024; // 233472 / (49152 + 1024 reserved) = 4.65
  EXPECT_EQ(blocks_per_sm(kernel, profile()), 4);
  kernel.block = {2048, 1, 1};
  EXPECT_THROW(
      {
        try {
          check_fits_device(kernel, profile());
        } catch (const InputError& error) {
          EXPECT_EQ(std::string(error.what()), "kernel 'hand' needs 2048 threads per block; the device allows 1024");
          throw;
        }
      },
      InputError);
  kernel.block = {256, 1, 1};
  kernel.registers_per_thread = 0;
  EXPECT_THROW(simulate_traced(kernel, profile()), InputError);
  // The launch alone can be checked before anything is compiled: no trace needed for that.
  TracedKernel shape;
  shape.name = "shape";
  shape.block = {256, 1, 1};
  EXPECT_NO_THROW(check_fits_device(shape, profile()));
  EXPECT_THROW(simulate_traced(shape, profile()), InputError);
}

// A step that stands for w executions (a summarised loop's representative trip) counts w
// times: one load weighted 4 moves what loads of 4 new lines move (4 requests, 16 sectors, 512
// DRAM bytes), one store weighted 4 makes DRAM write 4 lines (each execution dirties its own
// line's 4 sectors: 128 B at the flush and 3 x 128 B for the others); weights below 1 or not
// finite are refused.
TEST(TraceSimulate, AWeightedStepCountsForEachExecutionItStandsFor) {
  TraceStep weighted_load = load(kBase);
  weighted_load.weight = 4.0F;
  const Prediction loads = simulate_traced(kernel_of({{weighted_load, wait()}}), profile(), exact());
  EXPECT_EQ(loads.metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 4);
  EXPECT_EQ(loads.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 16);
  EXPECT_EQ(loads.metric("dram__bytes_read.sum"), 512);
  TraceStep weighted_store = store(kBase);
  weighted_store.weight = 4.0F;
  const Prediction stores = simulate_traced(kernel_of({{weighted_store}}), profile(), exact());
  EXPECT_EQ(stores.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), 16);
  EXPECT_EQ(stores.metric("dram__bytes_write.sum"), 512);
  for (const float weight : {0.5F, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    TraceStep step = load(kBase);
    step.weight = weight;
    EXPECT_THROW(simulate_traced(kernel_of({{step}}), profile(), exact()), InputError);
  }
}

TEST(TraceSimulate, AMalformedTraceIsAnInputError) {
  TracedKernel kernel = kernel_of({{load(kBase)}});
  kernel.block = {64, 1, 1}; // two warps, but the trace has one
  EXPECT_THROW(simulate_traced(kernel, profile(), exact()), InputError);
  TracedKernel odd = kernel_of({{access(TraceSpace::global, TraceOp::load, kBase, 4, 3)}});
  EXPECT_THROW(simulate_traced(odd, profile(), exact()), InputError);
  SimulationOptions negative;
  negative.work_budget = -1;
  EXPECT_THROW(simulate_traced(kernel_of({{load(kBase)}}), profile(), negative), InputError);
}

TEST(TraceSimulate, OnlyTheSampledBlocksAreExtracted) {
  // 64 x 64 blocks of one warp each, sampled: the scratch block, the warm-up and the sample
  // are extracted, a small part of the grid.
  int extracted = 0;
  TracedKernel kernel = kernel_of({{load(kBase)}}, {64, 64, 1});
  const auto trace = kernel.trace_block;
  kernel.trace_block = [&](const std::array<std::int64_t, 3>& index) {
    ++extracted;
    return trace(index);
  };
  SimulationOptions options;
  options.work_budget = 1 << 10;
  const Prediction p = simulate_traced(kernel, profile(), options);
  EXPECT_TRUE(p.sampled);
  EXPECT_LT(extracted, 64 * 64 / 4);
  // Every block's one load counts, scaled to the grid.
  EXPECT_DOUBLE_EQ(p.metric("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 64 * 64);
}

} // namespace
} // namespace cachewise
