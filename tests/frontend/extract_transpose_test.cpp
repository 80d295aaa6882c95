// The macro-tiled transpose (examples/kernels/transpose.cu) at n = 4096: per-lane addresses, coalescing
// and bank conflicts of each access derived by hand from the CUDA source.
#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

constexpr std::int64_t kN = 4096;

struct TransposeRun {
  PtxModule module;
  std::vector<TraceBuffer> buffers = place_buffers({{"odata", kN* kN * 4}, {"idata", kN* kN * 4}});
  BlockTrace block;
  ExtractedFacts facts;
};

TransposeRun run_transpose(const std::string& ptx, int tile, int rows, std::array<std::int64_t, 3> block_index) {
  TransposeRun run{load_test_ptx(ptx)};
  LaunchArgs args;
  args.grid = {kN / tile, kN / tile, 1};
  args.block = {tile, rows, 1};
  args.params = {run.buffers[0].base_address, run.buffers[1].base_address, kN, kN};
  args.buffers = run.buffers;
  const Extractor extractor(run.module, entry_containing(run.module, "transpose_tiled"), args);
  run.block = extractor.trace_block(block_index);
  run.facts = extractor.facts();
  return run;
}

// TILE_DIM 32, BLOCK_ROWS 8: warp w is the thread row threadIdx.y = w, lane = threadIdx.x.
TEST(ExtractTranspose, Tile32Rows8AddressesPerWarp) {
  const std::int64_t bx = 3, by = 5;
  const TransposeRun run = run_transpose("transpose_t32_b8_p1", 32, 8, {bx, by, 0});
  ASSERT_EQ(run.block.warps.size(), 8u);
  const std::uint64_t odata = run.buffers[0].base_address, idata = run.buffers[1].base_address;
  for (int w = 0; w < 8; ++w) {
    const WarpTrace& warp = run.block.warps[w];
    std::set<std::map<int, std::uint64_t>> loads, stores, shared_stores, shared_loads;
    for (int j = 0; j < 32; j += 8) {
      std::map<int, std::uint64_t> load, store, shared_store, shared_load;
      for (int lane = 0; lane < 32; ++lane) {
        load[lane] = idata + static_cast<std::uint64_t>(((by * 32 + w + j) * kN + bx * 32 + lane) * 4);
        store[lane] = odata + static_cast<std::uint64_t>(((bx * 32 + w + j) * kN + by * 32 + lane) * 4);
        shared_store[lane] =
            static_cast<std::uint64_t>(((w + j) * 33 + lane) * 4);               // tile[ty + j][tx], rows of 33 floats
        shared_load[lane] = static_cast<std::uint64_t>((lane * 33 + w + j) * 4); // tile[tx][ty + j]
      }
      loads.insert(load);
      stores.insert(store);
      shared_stores.insert(shared_store);
      shared_loads.insert(shared_load);
    }
    EXPECT_EQ(address_sets(accesses(warp, TraceSpace::global, TraceOp::load)), loads) << "warp " << w;
    EXPECT_EQ(address_sets(accesses(warp, TraceSpace::global, TraceOp::store)), stores) << "warp " << w;
    EXPECT_EQ(address_sets(accesses(warp, TraceSpace::shared, TraceOp::store)), shared_stores) << "warp " << w;
    EXPECT_EQ(address_sets(accesses(warp, TraceSpace::shared, TraceOp::load)), shared_loads) << "warp " << w;
    EXPECT_EQ(count_kind(warp, TraceStep::Kind::barrier), 1);
    EXPECT_EQ(warp.flops, 0.0);
  }
}

// Every access of a row of 32 floats starting at a multiple of 128 B: one line, four sectors.
// Shared: rows of 33 floats spread a column over all 32 banks; rows of 32 put it in one bank.
TEST(ExtractTranspose, Tile32CoalescingAndBankConflictsWithAndWithoutPad) {
  for (const int pad : {0, 1}) {
    const TransposeRun run = run_transpose(pad ? "transpose_t32_b8_p1" : "transpose_t32_b8_p0", 32, 8, {1, 2, 0});
    for (const WarpTrace& warp : run.block.warps) {
      for (const TraceOp op : {TraceOp::load, TraceOp::store}) {
        const std::vector<TraceStep> global = accesses(warp, TraceSpace::global, op);
        ASSERT_EQ(global.size(), 4u);
        for (const TraceStep& step : global) {
          EXPECT_EQ(step.active_mask, 0xffffffffu);
          EXPECT_EQ(step.bytes_per_lane, 4);
          EXPECT_EQ(lines(step), 1);
          EXPECT_EQ(sectors(step), 4);
        }
      }
      for (const TraceStep& step : accesses(warp, TraceSpace::shared, TraceOp::store)) EXPECT_EQ(bank_ways(step), 1);
      const std::vector<TraceStep> column_reads = accesses(warp, TraceSpace::shared, TraceOp::load);
      ASSERT_EQ(column_reads.size(), 4u);
      for (const TraceStep& step : column_reads) EXPECT_EQ(bank_ways(step), pad ? 1 : 32) << "pad " << pad;
    }
    EXPECT_EQ(run.facts.static_shared_bytes, 32 * (32 + pad) * 4);
  }
}

// Program order: every tile element is stored to shared only after its load arrived (a wait
// between a global load and the shared store of its value), all shared stores precede the
// barrier, all shared loads follow it.
TEST(ExtractTranspose, ProgramOrderWaitsAndBarrier) {
  const TransposeRun run = run_transpose("transpose_t32_b8_p1", 32, 8, {0, 0, 0});
  for (const WarpTrace& warp : run.block.warps) {
    bool after_barrier = false;
    int loads_since_wait = 0;
    int waits = 0;
    for (const TraceStep& step : warp.steps) {
      if (step.kind == TraceStep::Kind::barrier) after_barrier = true;
      if (step.kind == TraceStep::Kind::wait_loads) {
        ++waits;
        loads_since_wait = 0;
      }
      if (step.kind != TraceStep::Kind::access) continue;
      if (step.space == TraceSpace::shared && step.op == TraceOp::store) {
        EXPECT_FALSE(after_barrier);
        EXPECT_GE(waits, 1);
      }
      if (step.space == TraceSpace::shared && step.op == TraceOp::load) EXPECT_TRUE(after_barrier);
      if (step.space == TraceSpace::global && step.op == TraceOp::load) ++loads_since_wait;
    }
    EXPECT_GE(waits, 1);
    EXPECT_GT(warp.warp_instructions, 16); // at least the 16 memory instructions and the barrier
  }
  // The four loads of a thread's tile rows are independent and only shared stores lie between
  // them in the source, so the compiled code has all four in flight before the first store waits.
  EXPECT_EQ(run.facts.max_loads_in_flight, 4);
}

// TILE_DIM 16, BLOCK_ROWS 4: a warp holds two thread rows (lanes 0-15 ty = 2w, 16-31 ty = 2w+1).
// A global access covers two rows of 64 B (two lines, four sectors); a shared column read of
// unpadded 16-float rows hits two banks per half warp with 8 distinct words each: 8 ways.
TEST(ExtractTranspose, Tile16Rows4TwoRowsPerWarp) {
  const TransposeRun run = run_transpose("transpose_t16_b4_p0", 16, 4, {1, 1, 0});
  ASSERT_EQ(run.block.warps.size(), 2u);
  const std::uint64_t idata = run.buffers[1].base_address;
  for (int w = 0; w < 2; ++w) {
    const std::vector<TraceStep> loads = accesses(run.block.warps[w], TraceSpace::global, TraceOp::load);
    ASSERT_EQ(loads.size(), 4u);
    std::set<std::map<int, std::uint64_t>> expected;
    for (int j = 0; j < 16; j += 4) {
      std::map<int, std::uint64_t> load;
      for (int lane = 0; lane < 32; ++lane) {
        const int tx = lane % 16, ty = 2 * w + lane / 16;
        load[lane] = idata + static_cast<std::uint64_t>(((16 + ty + j) * kN + 16 + tx) * 4);
      }
      expected.insert(load);
    }
    EXPECT_EQ(address_sets(loads), expected);
    for (const TraceStep& step : loads) {
      EXPECT_EQ(lines(step), 2);
      EXPECT_EQ(sectors(step), 4);
    }
    for (const TraceStep& step : accesses(run.block.warps[w], TraceSpace::shared, TraceOp::load))
      EXPECT_EQ(bank_ways(step), 8);
    for (const TraceStep& step : accesses(run.block.warps[w], TraceSpace::shared, TraceOp::store))
      EXPECT_EQ(bank_ways(step), 1);
  }
}

} // namespace
} // namespace cachewise::frontend::testing
