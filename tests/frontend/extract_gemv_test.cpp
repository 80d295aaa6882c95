// y = A x (kernels/gemv.cu), rows = 100, cols = 64: thread per row (each lane its own row: 32
// lines per load, x broadcast) against warp per row (a row's 64 floats in two coalesced loads,
// then a __shfl_down_sync tree). Out-of-range threads return early.
#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

constexpr std::int64_t kRows = 100;
constexpr std::int64_t kCols = 64;

struct Gemv {
  std::vector<TraceBuffer> buffers = place_buffers({{"A", kRows* kCols * 4}, {"x", kCols * 4}, {"y", kRows * 4}});
  BlockTrace block;
  ExtractedFacts facts;
};

Gemv trace_gemv(const std::string& entry, std::int64_t threads, std::int64_t rows) {
  static const PtxModule module = load_test_ptx("gemv");
  Gemv run;
  LaunchArgs args;
  args.grid = {1, 1, 1};
  args.block = {threads, 1, 1};
  args.params = {run.buffers[0].base_address, run.buffers[1].base_address, run.buffers[2].base_address,
                 static_cast<std::uint64_t>(rows), kCols};
  args.buffers = run.buffers;
  const Extractor extractor(module, entry_containing(module, entry), args);
  run.block = extractor.trace_block({0, 0, 0});
  run.facts = extractor.facts();
  return run;
}

std::vector<TraceStep> in_buffer(const std::vector<TraceStep>& steps, const TraceBuffer& buffer) {
  std::vector<TraceStep> out;
  for (const TraceStep& step : steps) {
    const int lane = std::countr_zero(step.active_mask);
    if (step.address[lane] >= buffer.base_address && step.address[lane] < buffer.base_address + buffer.bytes)
      out.push_back(step);
  }
  return out;
}

// Warp w holds rows 32w .. 32w+31; rows >= 100 returned, so warp 3 runs lanes 0-3 only.
TEST(ExtractGemv, ThreadPerRowStridesAcrossLines) {
  const Gemv run = trace_gemv("gemv_thread_per_row", 128, kRows);
  ASSERT_EQ(run.block.warps.size(), 4u);
  for (int w = 0; w < 4; ++w) {
    const WarpTrace& warp = run.block.warps[w];
    const std::uint32_t mask = w < 3 ? 0xffffffffu : 0xfu;
    const int lanes = w < 3 ? 32 : 4;
    const std::vector<TraceStep> loads = accesses(warp, TraceSpace::global, TraceOp::load);
    const std::vector<TraceStep> a_loads = in_buffer(loads, run.buffers[0]);
    const std::vector<TraceStep> x_loads = in_buffer(loads, run.buffers[1]);
    ASSERT_EQ(a_loads.size(), 64u);
    ASSERT_EQ(x_loads.size(), 64u);
    std::set<std::map<int, std::uint64_t>> expected;
    for (int c = 0; c < kCols; ++c) {
      std::map<int, std::uint64_t> step;
      for (int lane = 0; lane < lanes; ++lane)
        step[lane] = run.buffers[0].base_address + static_cast<std::uint64_t>(((32 * w + lane) * kCols + c) * 4);
      expected.insert(step);
    }
    EXPECT_EQ(address_sets(a_loads), expected);
    for (const TraceStep& step : a_loads) {
      EXPECT_EQ(step.active_mask, mask);
      EXPECT_EQ(lines(step), lanes); // rows 256 B apart
    }
    for (const TraceStep& step : x_loads) EXPECT_EQ(sectors(step), 1); // x[c]: one address for all lanes
    const std::vector<TraceStep> stores = accesses(warp, TraceSpace::global, TraceOp::store);
    ASSERT_EQ(stores.size(), 1u);
    EXPECT_EQ(stores[0].active_mask, mask);
    EXPECT_EQ(warp.flops, 2.0 * kCols * lanes);
  }
  // nvcc unrolls the c loop by four (64 % 4 == 0: no remainder): eight independent loads per
  // round before the first fma needs one.
  EXPECT_EQ(run.facts.max_loads_in_flight, 8);
}

// Row = warp index; with 5 rows and 8 warps, warps 5-7 return before any access.
TEST(ExtractGemv, WarpPerRowCoalescesAndShuffles) {
  const Gemv run = trace_gemv("gemv_warp_per_row", 256, 5);
  ASSERT_EQ(run.block.warps.size(), 8u);
  for (int w = 0; w < 8; ++w) {
    const WarpTrace& warp = run.block.warps[w];
    const std::vector<TraceStep> loads = accesses(warp, TraceSpace::global, TraceOp::load);
    const std::vector<TraceStep> stores = accesses(warp, TraceSpace::global, TraceOp::store);
    if (w >= 5) {
      EXPECT_TRUE(loads.empty());
      EXPECT_TRUE(stores.empty());
      EXPECT_EQ(warp.flops, 0.0);
      continue;
    }
    const std::vector<TraceStep> a_loads = in_buffer(loads, run.buffers[0]);
    ASSERT_EQ(a_loads.size(), 2u); // c = lane, lane + 32
    std::set<std::map<int, std::uint64_t>> expected;
    for (int c0 : {0, 32}) {
      std::map<int, std::uint64_t> step;
      for (int lane = 0; lane < 32; ++lane)
        step[lane] = run.buffers[0].base_address + static_cast<std::uint64_t>((w * kCols + c0 + lane) * 4);
      expected.insert(step);
    }
    EXPECT_EQ(address_sets(a_loads), expected);
    for (const TraceStep& step : a_loads) {
      EXPECT_EQ(lines(step), 1);
      EXPECT_EQ(sectors(step), 4);
    }
    ASSERT_EQ(stores.size(), 1u);
    EXPECT_EQ(stores[0].active_mask, 0x1u);
    EXPECT_EQ(stores[0].address[0], run.buffers[2].base_address + static_cast<std::uint64_t>(w * 4));
    EXPECT_EQ(warp.flops, 2.0 * 2 * 32 + 5.0 * 32); // two fma per lane, five shuffle adds per lane
  }
  // Two iterations per lane run in the loop's one-at-a-time remainder: A and x, then the fma.
  EXPECT_EQ(run.facts.max_loads_in_flight, 2);
}

} // namespace
} // namespace cachewise::frontend::testing
