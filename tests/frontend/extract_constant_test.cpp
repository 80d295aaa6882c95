// Reads of a __constant__ table (kernels/constant_reads.cu): the constant cache serves a warp one
// address at a time, so a read whose lanes hold k distinct addresses makes k requests; every lane
// on one word is a broadcast, one (docs/model.md, "Constant memory"). The three kernels run the
// same 14 issued instructions (ld.param and cvta.to.global fold away): mov, shl/shr, cvt, and,
// mov of the table's address, add, ld.const, mov, mov, mad, mul.wide, add, st, ret.
#include <memory>

#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

/// Block 1 (256 threads, 8 warps) of `entry` over an output of 4 x 256 floats.
BlockTrace constant_block(const std::string& entry) {
  static const auto module = std::make_shared<const PtxModule>(load_test_ptx("constant_reads"));
  LaunchArgs args;
  args.grid = {4, 1, 1};
  args.block = {256, 1, 1};
  args.buffers = place_buffers({{"out", 4 * 256 * 4}});
  args.params = {args.buffers[0].base_address};
  const Extractor extractor(*module, entry_containing(*module, entry), args);
  return extractor.trace_block({1, 0, 0});
}

TEST(ExtractConstant, EachDistinctAddressOfAWarpIsARequestABroadcastOne) {
  // weights[blockIdx.x & 255]: one address for the warp, 1 request. weights[threadIdx.x & 255]:
  // 32 addresses, 32 requests. weights[(threadIdx.x >> 3) & 255]: 4 addresses a warp, 4.
  const BlockTrace broadcast = constant_block("constant_broadcast");
  const BlockTrace per_lane = constant_block("constant_per_lane");
  const BlockTrace per_eight = constant_block("constant_per_eight_lanes");
  ASSERT_EQ(broadcast.warps.size(), 8u);
  for (std::size_t w = 0; w < 8; ++w) {
    EXPECT_EQ(broadcast.warps[w].constant_requests, 1) << "warp " << w;
    EXPECT_EQ(per_lane.warps[w].constant_requests, 32) << "warp " << w;
    EXPECT_EQ(per_eight.warps[w].constant_requests, 4) << "warp " << w;
    for (const BlockTrace* block : {&broadcast, &per_lane, &per_eight})
      EXPECT_EQ(block->warps[w].warp_instructions, 14) << "warp " << w; // replays are not instructions
  }
}

} // namespace
} // namespace cachewise::frontend::testing
