// Divergence and reconvergence (kernels/control.cu): the paths of an if / else run with their
// own lanes and meet again before the common store; a loop with per-lane trip counts narrows
// its mask lane by lane; a runtime-indexed local array lives in the thread's local frame.
#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

const PtxModule& control_module() {
  static const PtxModule module = load_test_ptx("control");
  return module;
}

struct Traced {
  BlockTrace block;
  ExtractedFacts facts;
};

Traced trace(const std::string& entry, LaunchArgs args) {
  const Extractor extractor(control_module(), entry_containing(control_module(), entry), std::move(args));
  Traced traced{extractor.trace_block({0, 0, 0}), {}};
  traced.facts = extractor.facts();
  return traced;
}

int index_of_buffer(const TraceStep& step, const std::vector<TraceBuffer>& buffers) {
  const std::uint64_t a = step.address[static_cast<std::size_t>(std::countr_zero(step.active_mask))];
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (a >= buffers[i].base_address && a < buffers[i].base_address + static_cast<std::uint64_t>(buffers[i].bytes))
      return static_cast<int>(i);
  return -1;
}

// Lanes 0-7 store a[k * 32 + t] for k < 3; lanes 8-31 store b[t]; then all 32 store c[t], once,
// after every store of either path.
TEST(ExtractControl, IfElsePathsReconvergeBeforeTheCommonStore) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"in", 256}, {"a", 4096}, {"b", 256}, {"c", 256}});
  LaunchArgs args;
  args.block = {32, 1, 1};
  args.params = {buffers[0].base_address, buffers[1].base_address, buffers[2].base_address, buffers[3].base_address, 3};
  args.buffers = buffers;
  const Traced traced = trace("if_else", args);
  const std::vector<TraceStep> stores = accesses(traced.block.warps[0], TraceSpace::global, TraceOp::store);
  ASSERT_EQ(stores.size(), 3u + 1u + 1u);
  std::set<std::uint64_t> a_firsts;
  for (std::size_t i = 0; i + 1 < stores.size(); ++i) {
    const int buffer = index_of_buffer(stores[i], buffers);
    if (buffer == 1) {
      EXPECT_EQ(stores[i].active_mask, 0xffu);
      a_firsts.insert(stores[i].address[0] - buffers[1].base_address);
    } else {
      EXPECT_EQ(buffer, 2);
      EXPECT_EQ(stores[i].active_mask, 0xffffff00u);
      EXPECT_EQ(stores[i].address[8], buffers[2].base_address + 8 * 4);
    }
  }
  EXPECT_EQ(a_firsts, (std::set<std::uint64_t>{0, 128, 256}));
  EXPECT_EQ(index_of_buffer(stores.back(), buffers), 3);
  EXPECT_EQ(stores.back().active_mask, 0xffffffffu);
}

// k <= t && k < 32: lane t stores out[k * 32 + t] for k = 0..t, each exactly once (nvcc unrolls
// by four and adds a remainder loop, so one store instruction may serve lanes at different k),
// then every lane stores out[1024 + t] once, after all of them.
TEST(ExtractControl, PerLaneTripCounts) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"out", 2048 * 4}});
  LaunchArgs args;
  args.block = {32, 1, 1};
  args.params = {buffers[0].base_address, 32};
  args.buffers = buffers;
  const Traced traced = trace("triangle", args);
  const std::vector<TraceStep> stores = accesses(traced.block.warps[0], TraceSpace::global, TraceOp::store);
  ASSERT_FALSE(stores.empty());
  std::multiset<std::pair<int, std::uint64_t>> stored, expected;
  for (std::size_t i = 0; i + 1 < stores.size(); ++i)
    for (const auto& [lane, address] : lane_addresses(stores[i])) stored.insert({lane, address});
  for (int t = 0; t < 32; ++t)
    for (int k = 0; k <= t; ++k)
      expected.insert({t, buffers[0].base_address + static_cast<std::uint64_t>((k * 32 + t) * 4)});
  EXPECT_EQ(stored, expected);
  EXPECT_EQ(stores.back().active_mask, 0xffffffffu);
  EXPECT_EQ(stores.back().address[0], buffers[0].base_address + 1024 * 4);
}

// Lane t leaves the loop at k = t % 8 (break) and skips odd k (continue): it stores
// out[k * 32 + t] for even k < t % 8, then all lanes, reconverged, store out[1024 + t] once.
TEST(ExtractControl, BreakAndContinue) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"out", 2048 * 4}});
  LaunchArgs args;
  args.block = {32, 1, 1};
  args.params = {buffers[0].base_address, 16};
  args.buffers = buffers;
  const Traced traced = trace("break_continue", args);
  const std::vector<TraceStep> stores = accesses(traced.block.warps[0], TraceSpace::global, TraceOp::store);
  ASSERT_FALSE(stores.empty());
  std::multiset<std::pair<int, std::uint64_t>> stored, expected;
  for (std::size_t i = 0; i + 1 < stores.size(); ++i)
    for (const auto& [lane, address] : lane_addresses(stores[i])) stored.insert({lane, address});
  for (int t = 0; t < 32; ++t)
    for (int k = 0; k < t % 8; k += 2)
      expected.insert({t, buffers[0].base_address + static_cast<std::uint64_t>((k * 32 + t) * 4)});
  EXPECT_EQ(stored, expected);
  EXPECT_EQ(stores.back().active_mask, 0xffffffffu);
  EXPECT_EQ(stores.back().address[5], buffers[0].base_address + (1024 + 5) * 4);
}

// int buf[16] with buf[k & 15] read at k = 21: the frame is 64 bytes, written whole by every
// lane, then read at byte (21 & 15) * 4 = 20.
TEST(ExtractControl, RuntimeIndexedLocalArray) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"in", 64 * 16 * 4}, {"out", 64 * 4}});
  LaunchArgs args;
  args.block = {64, 1, 1};
  args.params = {buffers[0].base_address, buffers[1].base_address, 21};
  args.buffers = buffers;
  const Traced traced = trace("local_array", args);
  EXPECT_EQ(traced.facts.local_bytes_per_thread, 64);
  for (const WarpTrace& warp : traced.block.warps) {
    std::set<std::uint64_t> written;
    for (const TraceStep& step : accesses(warp, TraceSpace::local, TraceOp::store)) {
      EXPECT_EQ(step.active_mask, 0xffffffffu);
      for (int lane = 0; lane < 32; ++lane)
        EXPECT_EQ(step.address[lane], step.address[0]); // the same frame offset in every lane
      for (std::uint64_t b = 0; b < step.bytes_per_lane; ++b) written.insert(step.address[0] + b);
    }
    EXPECT_EQ(written.size(), 64u);
    EXPECT_EQ(*written.rbegin(), 63u);
    const std::vector<TraceStep> reads = accesses(warp, TraceSpace::local, TraceOp::load);
    ASSERT_EQ(reads.size(), 1u);
    EXPECT_EQ(reads[0].address[0], 20u);
    EXPECT_EQ(reads[0].bytes_per_lane, 4);
  }
}

// wavefront, 16 threads: lane t stores cell (t + 1, 0) and (0, t + 1), lane 0 cell (0, 0), then at
// step m every lane t <= m stores cell (m - t + 1, t + 1): row pitch 17 words, so byte
// ((m - t + 1) * 17 + t + 1) * 4, all inside the tile's 17 * 17 * 4 = 1156 bytes. The base
// register nvcc keeps for those stores is cell - 64 t (below the tile for t >= 1); its 32-bit
// sum with the offset wraps back into the tile, as on the hardware.
TEST(ExtractControl, SharedAddressBelowTheTileWrapsBackAt32Bits) {
  const std::vector<TraceBuffer> buffers = place_buffers({{"in", 32 * 4}, {"out", 16 * 4}});
  LaunchArgs args;
  args.block = {16, 1, 1};
  args.params = {buffers[0].base_address, buffers[1].base_address};
  args.buffers = buffers;
  const Traced traced = trace("wavefront", args);
  EXPECT_EQ(traced.facts.static_shared_bytes, 1156);
  std::multiset<std::pair<int, std::uint64_t>> stored, expected;
  for (const TraceStep& step : accesses(traced.block.warps[0], TraceSpace::shared, TraceOp::store))
    for (const auto& [lane, address] : lane_addresses(step)) stored.insert({lane, address});
  expected.insert({0, 0});
  for (int t = 0; t < 16; ++t) {
    expected.insert({t, static_cast<std::uint64_t>((t + 1) * 17 * 4)});
    expected.insert({t, static_cast<std::uint64_t>((t + 1) * 4)});
    for (int m = t; m < 16; ++m) expected.insert({t, static_cast<std::uint64_t>(((m - t + 1) * 17 + t + 1) * 4)});
  }
  EXPECT_EQ(stored, expected);
}

} // namespace
} // namespace cachewise::frontend::testing
