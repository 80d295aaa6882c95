// cp.async (kernels/async_copy.cu): each thread copies one float4 from global to shared memory
// asynchronously, waits for its group, then reads a reversed tile after the barrier.
#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

// Block 3 of 128 threads: warp w copies in[3 * 128 + 32w + lane] (16 B each: 512 B from a
// multiple of 128 B = 4 lines, 16 sectors) to tile[32w + lane], waits, then after the barrier
// reads tile[127 - t] and stores it to out[3 * 128 + t].
TEST(ExtractAsync, CopyIntoSharedThenWait) {
  const PtxModule module = load_test_ptx("async_copy");
  const std::vector<TraceBuffer> buffers = place_buffers({{"in", 8 * 128 * 16}, {"out", 8 * 128 * 16}});
  LaunchArgs args;
  args.grid = {8, 1, 1};
  args.block = {128, 1, 1};
  args.params = {buffers[0].base_address, buffers[1].base_address};
  args.buffers = buffers;
  const Extractor extractor(module, entry_containing(module, "stage"), args);
  const BlockTrace block = extractor.trace_block({3, 0, 0});
  for (int w = 0; w < 4; ++w) {
    const WarpTrace& warp = block.warps[w];
    const std::vector<TraceStep> loads = accesses(warp, TraceSpace::global, TraceOp::load);
    const std::vector<TraceStep> shared_stores = accesses(warp, TraceSpace::shared, TraceOp::store);
    const std::vector<TraceStep> shared_loads = accesses(warp, TraceSpace::shared, TraceOp::load);
    ASSERT_EQ(loads.size(), 1u);
    ASSERT_EQ(shared_stores.size(), 1u);
    ASSERT_EQ(shared_loads.size(), 1u);
    EXPECT_EQ(loads[0].bytes_per_lane, 16);
    EXPECT_EQ(lines(loads[0]), 4);
    EXPECT_EQ(sectors(loads[0]), 16);
    for (int lane = 0; lane < 32; ++lane) {
      const int t = 32 * w + lane;
      EXPECT_EQ(loads[0].address[lane], buffers[0].base_address + static_cast<std::uint64_t>((3 * 128 + t) * 16));
      EXPECT_EQ(shared_stores[0].address[lane], static_cast<std::uint64_t>(t * 16));
      EXPECT_EQ(shared_loads[0].address[lane], static_cast<std::uint64_t>((127 - t) * 16));
    }
    // The wait for the copy comes before the barrier, the barrier before the shared read.
    std::vector<TraceStep::Kind> kinds;
    for (const TraceStep& step : warp.steps)
      if (step.kind != TraceStep::Kind::access) kinds.push_back(step.kind);
    EXPECT_EQ(kinds, (std::vector<TraceStep::Kind>{TraceStep::Kind::wait_loads, TraceStep::Kind::barrier}));
  }
  EXPECT_EQ(extractor.facts().max_loads_in_flight, 1);
}

} // namespace
} // namespace cachewise::frontend::testing
