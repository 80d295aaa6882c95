// Other widths and forms (kernels/vectors.cu): float4 / float2 accesses with a runtime loop
// bound and an early return, f64 and f16x2 flops, an index broadcast by __shfl_sync, atomics.
#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

const PtxModule& vectors_module() {
  static const PtxModule module = load_test_ptx("vectors");
  return module;
}

BlockTrace trace(const std::string& entry, LaunchArgs args, std::array<std::int64_t, 3> block_index) {
  return Extractor(vectors_module(), entry_containing(vectors_module(), entry), std::move(args))
      .trace_block(block_index);
}

// n4 = 1000 float4, 128 threads, block 7: i = 896 + tid < 1000 leaves warp 3 lanes 0-7.
// A full warp moves 512 B from a multiple of 128 B (4 lines, 16 sectors), warp 3 128 B.
TEST(ExtractVectors, Float4CopyWithRuntimeRepeatsAndEarlyReturn) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"in", 3 * 1000 * 16}, {"out", 3 * 1000 * 16}});
  for (const std::int64_t repeats : {3, 0}) {
    LaunchArgs args;
    args.grid = {8, 1, 1};
    args.block = {128, 1, 1};
    args.params = {buffers[0].base_address, buffers[1].base_address, 1000, static_cast<std::uint64_t>(repeats)};
    args.buffers = buffers;
    const BlockTrace block = trace("copy_float4", args, {7, 0, 0});
    for (int w = 0; w < 4; ++w) {
      const std::vector<TraceStep> loads = accesses(block.warps[w], TraceSpace::global, TraceOp::load);
      ASSERT_EQ(loads.size(), static_cast<std::size_t>(repeats));
      ASSERT_EQ(accesses(block.warps[w], TraceSpace::global, TraceOp::store).size(), static_cast<std::size_t>(repeats));
      std::set<std::uint64_t> firsts;
      for (const TraceStep& step : loads) {
        EXPECT_EQ(step.bytes_per_lane, 16);
        EXPECT_EQ(step.active_mask, w < 3 ? 0xffffffffu : 0xffu);
        EXPECT_EQ(lines(step), w < 3 ? 4 : 1);
        EXPECT_EQ(sectors(step), w < 3 ? 16 : 4);
        firsts.insert(step.address[0]);
      }
      std::set<std::uint64_t> expected;
      for (int r = 0; r < repeats; ++r)
        expected.insert(buffers[0].base_address + static_cast<std::uint64_t>((r * 1000 + 896 + 32 * w) * 16));
      EXPECT_EQ(firsts, expected);
    }
  }
}

TEST(ExtractVectors, Float2CopyIsTwoLinesPerWarp) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"in", 64 * 8}, {"out", 64 * 8}});
  LaunchArgs args;
  args.block = {64, 1, 1};
  args.params = {buffers[0].base_address, buffers[1].base_address, 64};
  args.buffers = buffers;
  const BlockTrace block = trace("copy_float2", args, {0, 0, 0});
  for (const WarpTrace& warp : block.warps) {
    const std::vector<TraceStep> loads = accesses(warp, TraceSpace::global, TraceOp::load);
    ASSERT_EQ(loads.size(), 1u);
    EXPECT_EQ(loads[0].bytes_per_lane, 8);
    EXPECT_EQ(lines(loads[0]), 2);
    EXPECT_EQ(sectors(loads[0]), 8);
  }
}

// y = a x + y in double: one f64 fma per lane = 2 flops, counted twice (f32-equivalent): 128 per warp.
// __hfma2: one f16x2 fma per lane = 2 lanes x 2 flops: 128 per warp.
TEST(ExtractVectors, DoubleAndHalf2Flops) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"a", 256 * 8}, {"b", 256 * 8}, {"c", 256 * 8}});
  LaunchArgs daxpy;
  daxpy.block = {64, 1, 1};
  daxpy.params = {0x4000000000000000ull /* 2.0 */, buffers[0].base_address, buffers[1].base_address, 64};
  daxpy.buffers = buffers;
  const BlockTrace d = trace("daxpy", daxpy, {0, 0, 0});
  for (const WarpTrace& warp : d.warps) {
    EXPECT_EQ(warp.flops, 128.0);
    for (const TraceStep& step : accesses(warp, TraceSpace::global, TraceOp::load)) EXPECT_EQ(step.bytes_per_lane, 8);
  }
  LaunchArgs half;
  half.block = {64, 1, 1};
  half.params = {buffers[0].base_address, buffers[1].base_address, buffers[2].base_address, 64};
  half.buffers = buffers;
  const BlockTrace h = trace("hfma2", half, {0, 0, 0});
  for (const WarpTrace& warp : h.warps) EXPECT_EQ(warp.flops, 128.0);
}

// base = (global thread of lane 3) * stride, broadcast: block 2, warp 1, stride 64 -> (128 + 32 + 3) * 64.
TEST(ExtractVectors, ShuffleBroadcastsAnIndex) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"in", 1 << 20}, {"out", 1 << 20}});
  LaunchArgs args;
  args.grid = {4, 1, 1};
  args.block = {64, 1, 1};
  args.params = {buffers[0].base_address, buffers[1].base_address, 64};
  args.buffers = buffers;
  const BlockTrace block = trace("broadcast_base", args, {2, 0, 0});
  const std::vector<TraceStep> stores = accesses(block.warps[1], TraceSpace::global, TraceOp::store);
  ASSERT_EQ(stores.size(), 1u);
  for (int lane = 0; lane < 32; ++lane)
    EXPECT_EQ(stores[0].address[lane], buffers[1].base_address + static_cast<std::uint64_t>((163 * 64 + lane) * 4));
}

// atomicAdd(&counters[blockIdx.x], 1) by even threads: one atomic step, mask 0x55555555, one address.
TEST(ExtractVectors, AtomicsOfEvenLanes) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"counters", 16 * 4}});
  LaunchArgs args;
  args.grid = {16, 1, 1};
  args.block = {32, 1, 1};
  args.params = {buffers[0].base_address};
  args.buffers = buffers;
  const BlockTrace block = trace("count_per_block", args, {9, 0, 0});
  const std::vector<TraceStep> atomics = accesses(block.warps[0], TraceSpace::global, TraceOp::atomic);
  ASSERT_EQ(atomics.size(), 1u);
  EXPECT_EQ(atomics[0].active_mask, 0x55555555u);
  EXPECT_EQ(lane_addresses(atomics[0]).begin()->second, buffers[0].base_address + 9 * 4);
  EXPECT_EQ(sectors(atomics[0]), 1);
}

// __ballot_sync(threadIdx.x % 5 == 0): warp 0 votes with t = 0, 5, .. 30 (7 lanes), warp 1 with
// t = 35, 40, .. 60 (6 lanes); the popcount picks the row of 32 ints each warp stores.
TEST(ExtractVectors, BallotCountPicksTheRow) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"out", 64 * 32 * 4}});
  LaunchArgs args;
  args.block = {64, 1, 1};
  args.params = {buffers[0].base_address};
  args.buffers = buffers;
  const BlockTrace block = trace("ballot_offset", args, {0, 0, 0});
  for (int w = 0; w < 2; ++w) {
    const std::vector<TraceStep> stores = accesses(block.warps[w], TraceSpace::global, TraceOp::store);
    ASSERT_EQ(stores.size(), 1u);
    const int votes = w == 0 ? 7 : 6;
    for (int lane = 0; lane < 32; ++lane)
      EXPECT_EQ(stores[0].address[lane],
                buffers[0].base_address + static_cast<std::uint64_t>((votes * 32 + 32 * w + lane) * 4));
  }
}

} // namespace
} // namespace cachewise::frontend::testing
