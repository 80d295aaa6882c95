// Shared tree reductions (kernels/reduce.cu), 256 threads per block: the strided index of
// interleaved addressing conflicts in the banks, sequential addressing does not. Active masks,
// bank ways and flops per stride derived by hand.
#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

constexpr std::int64_t kBlocks = 64;
constexpr std::int64_t kThreads = 256;

BlockTrace trace_reduction(const std::string& entry, std::array<std::int64_t, 3> block_index, std::vector<TraceBuffer>& buffers) {
  static const PtxModule module = load_test_ptx("reduce");
  buffers = place_buffers({{"in", kBlocks * kThreads * 4}, {"out", kBlocks * 4}});
  LaunchArgs args;
  args.grid = {kBlocks, 1, 1};
  args.block = {kThreads, 1, 1};
  args.dynamic_shared_bytes = kThreads * 4;
  args.params = {buffers[0].base_address, buffers[1].base_address};
  args.buffers = buffers;
  return Extractor(module, entry_containing(module, entry), args).trace_block(block_index);
}

struct MaskAndWays {
  std::uint32_t mask;
  int ways;
  friend bool operator==(const MaskAndWays&, const MaskAndWays&) = default;
};

std::vector<MaskAndWays> shared_stores(const WarpTrace& warp) {
  std::vector<MaskAndWays> out;
  for (const TraceStep& step : accesses(warp, TraceSpace::shared, TraceOp::store)) out.push_back({step.active_mask, bank_ways(step)});
  return out;
}

// index = 2 s tid, active while index < 256. Warp 0, s = 1: words 0, 2, .. 62: two lanes per
// bank; s = 2: words 0, 4, .. 124: four per bank; s = 4: 8 tid, all 32 lanes, 4 banks: 8 ways;
// s = 8: tid < 16, banks 0 and 16: 8 ways; s = 16: tid < 8, bank 0: 8; s = 32: tid < 4: 4;
// s = 64: 2; s = 128: 1. Warp 1 (tid 32..63) works only at s = 1 (2 ways) and s = 2 (4 ways).
TEST(ExtractReduce, InterleavedAddressingBankConflictsPerStride) {
  std::vector<TraceBuffer> buffers;
  const BlockTrace block = trace_reduction("reduce_interleaved", {5, 0, 0}, buffers);
  ASSERT_EQ(block.warps.size(), 8u);
  const std::vector<MaskAndWays> warp0 = {{0xffffffffu, 1}, {0xffffffffu, 2}, {0xffffffffu, 4}, {0xffffffffu, 8}, {0xffffu, 8},
                                          {0xffu, 8},       {0xfu, 4},        {0x3u, 2},        {0x1u, 1}};
  EXPECT_EQ(shared_stores(block.warps[0]), warp0);
  const std::vector<MaskAndWays> warp1 = {{0xffffffffu, 1}, {0xffffffffu, 2}, {0xffffffffu, 4}};
  EXPECT_EQ(shared_stores(block.warps[1]), warp1);
  const std::vector<MaskAndWays> warp7 = {{0xffffffffu, 1}}; // 2 tid >= 256 from the start
  EXPECT_EQ(shared_stores(block.warps[7]), warp7);
  // sdata[index + s] of warp 0 at s = 1: words 1, 3, .. 63.
  std::map<int, std::uint64_t> odd;
  for (int lane = 0; lane < 32; ++lane) odd[lane] = static_cast<std::uint64_t>((2 * lane + 1) * 4);
  EXPECT_EQ(address_sets(accesses(block.warps[0], TraceSpace::shared, TraceOp::load)).count(odd), 1u);
  // Adds: warp 0 32 + 32 + 32 + 16 + 8 + 4 + 2 + 1 lanes; warp 1 32 + 32; warps 2, 3 at s = 1 only.
  EXPECT_EQ(block.warps[0].flops, 127.0);
  EXPECT_EQ(block.warps[1].flops, 64.0);
  EXPECT_EQ(block.warps[2].flops, 32.0);
  EXPECT_EQ(block.warps[4].flops, 0.0);
  for (const WarpTrace& warp : block.warps) EXPECT_EQ(count_kind(warp, TraceStep::Kind::barrier), 9); // 1 + log2(256)
}

// tid < s with s = 128, 64, .. 1: consecutive words, conflict free; warp 0 active in full for
// s >= 32, then 16, 8, 4, 2, 1 lanes; warp 1 (tid 32..63) only at s = 128 and 64.
TEST(ExtractReduce, SequentialAddressingIsConflictFree) {
  std::vector<TraceBuffer> buffers;
  const BlockTrace block = trace_reduction("reduce_sequential", {5, 0, 0}, buffers);
  const std::vector<MaskAndWays> warp0 = {{0xffffffffu, 1}, {0xffffffffu, 1}, {0xffffffffu, 1}, {0xffffffffu, 1}, {0xffffu, 1},
                                          {0xffu, 1},       {0xfu, 1},        {0x3u, 1},        {0x1u, 1}};
  EXPECT_EQ(shared_stores(block.warps[0]), warp0);
  const std::vector<MaskAndWays> warp1 = {{0xffffffffu, 1}, {0xffffffffu, 1}, {0xffffffffu, 1}};
  EXPECT_EQ(shared_stores(block.warps[1]), warp1);
  EXPECT_EQ(block.warps[0].flops, 127.0);
  EXPECT_EQ(block.warps[1].flops, 64.0);
  EXPECT_EQ(block.warps[3].flops, 32.0); // tid 96..127 < 128 at s = 128 only
  EXPECT_EQ(block.warps[4].flops, 0.0);
  for (const WarpTrace& warp : block.warps) EXPECT_EQ(count_kind(warp, TraceStep::Kind::barrier), 9);
  // sdata[tid + s] of warp 1 at s = 128: words 160..191.
  std::map<int, std::uint64_t> upper;
  for (int lane = 0; lane < 32; ++lane) upper[lane] = static_cast<std::uint64_t>((160 + lane) * 4);
  EXPECT_EQ(address_sets(accesses(block.warps[1], TraceSpace::shared, TraceOp::load)).count(upper), 1u);
}

// The input row of a warp: 32 floats from a multiple of 128 B; the result: lane 0 of warp 0 only.
TEST(ExtractReduce, GlobalAccessesAndTheSingleResultStore) {
  for (const char* entry : {"reduce_interleaved", "reduce_sequential"}) {
    std::vector<TraceBuffer> buffers;
    const BlockTrace block = trace_reduction(entry, {5, 0, 0}, buffers);
    for (std::size_t w = 0; w < block.warps.size(); ++w) {
      const std::vector<TraceStep> loads = accesses(block.warps[w], TraceSpace::global, TraceOp::load);
      ASSERT_EQ(loads.size(), 1u);
      EXPECT_EQ(loads[0].address[0], buffers[0].base_address + (5 * 256 + w * 32) * 4);
      EXPECT_EQ(lines(loads[0]), 1);
      EXPECT_EQ(sectors(loads[0]), 4);
      const std::vector<TraceStep> stores = accesses(block.warps[w], TraceSpace::global, TraceOp::store);
      ASSERT_EQ(stores.size(), w == 0 ? 1u : 0u);
      if (w == 0) {
        EXPECT_EQ(stores[0].active_mask, 0x1u);
        EXPECT_EQ(stores[0].address[0], buffers[1].base_address + 5 * 4);
      }
    }
  }
}

} // namespace
} // namespace cachewise::frontend::testing
