// A 5x5 convolution (kernels/conv2d.cu) on a 256 x 256 image with 32 x 8 blocks: a 36 x 12 shared
// halo tile, wider than a warp row, so each tile row takes a full warp load (lanes 0-31) and a
// second one by lanes 0-3. Addresses, coalescing and masks derived by hand.
#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

constexpr std::int64_t kSize = 256;

struct Conv {
  std::vector<TraceBuffer> buffers = place_buffers({{"in", kSize* kSize * 4}, {"out", kSize* kSize * 4}});
  BlockTrace block;
};

Conv trace_conv(std::array<std::int64_t, 3> block_index) {
  static const PtxModule module = load_test_ptx("conv2d");
  Conv run;
  LaunchArgs args;
  args.grid = {kSize / 32, kSize / 8, 1};
  args.block = {32, 8, 1};
  args.params = {run.buffers[0].base_address, run.buffers[1].base_address, kSize, kSize};
  args.buffers = run.buffers;
  run.block = Extractor(module, entry_containing(module, "conv2d"), args).trace_block(block_index);
  return run;
}

// Block (1, 1), warp w = thread row ty: tile rows i = w and, for w < 4, w + 8. Tile column j
// holds gx = 32 + j - 2, row i gy = 8 + i - 2. j = lane starts 8 B before a line: lanes 0-1 in
// one sector, lanes 2-31 in the next line's 4 sectors (2 lines, 5 sectors); j = lane + 32
// (lanes 0-3) straddles the next line boundary (2 lines, 2 sectors).
TEST(ExtractConv2d, HaloLoadsOfAnInteriorBlock) {
  const Conv run = trace_conv({1, 1, 0});
  const std::uint64_t in = run.buffers[0].base_address;
  for (int w = 0; w < 8; ++w) {
    const WarpTrace& warp = run.block.warps[w];
    std::set<std::map<int, std::uint64_t>> expected;
    std::vector<int> rows = {w};
    if (w < 4) rows.push_back(w + 8);
    for (int i : rows) {
      for (int j0 : {0, 32}) {
        std::map<int, std::uint64_t> step;
        for (int lane = 0; lane < (j0 == 0 ? 32 : 4); ++lane)
          step[lane] = in + static_cast<std::uint64_t>(((8 + i - 2) * kSize + 32 + j0 + lane - 2) * 4);
        expected.insert(step);
      }
    }
    const std::vector<TraceStep> loads = accesses(warp, TraceSpace::global, TraceOp::load);
    EXPECT_EQ(address_sets(loads), expected) << "warp " << w;
    ASSERT_EQ(loads.size(), 2 * rows.size());
    for (const TraceStep& step : loads) {
      EXPECT_EQ(lines(step), 2);
      EXPECT_EQ(sectors(step), step.active_mask == 0xffffffffu ? 5 : 2);
    }
    for (const TraceStep& step : accesses(warp, TraceSpace::shared, TraceOp::store)) EXPECT_EQ(bank_ways(step), 1);
    EXPECT_EQ(count_kind(warp, TraceStep::Kind::barrier), 1);
  }
}

// After the barrier: 25 shared reads tile[w + di][lane + dj] (rows of 36 floats, consecutive
// words: conflict free), one coalesced store, 25 fma per lane.
TEST(ExtractConv2d, StencilReadsAndOutput) {
  const Conv run = trace_conv({1, 1, 0});
  for (int w = 0; w < 8; ++w) {
    const WarpTrace& warp = run.block.warps[w];
    std::set<std::map<int, std::uint64_t>> expected;
    for (int di = 0; di < 5; ++di) {
      for (int dj = 0; dj < 5; ++dj) {
        std::map<int, std::uint64_t> step;
        for (int lane = 0; lane < 32; ++lane) step[lane] = static_cast<std::uint64_t>(((w + di) * 36 + lane + dj) * 4);
        expected.insert(step);
      }
    }
    const std::vector<TraceStep> reads = accesses(warp, TraceSpace::shared, TraceOp::load);
    ASSERT_EQ(reads.size(), 25u);
    EXPECT_EQ(address_sets(reads), expected);
    for (const TraceStep& step : reads) EXPECT_EQ(bank_ways(step), 1);
    const std::vector<TraceStep> stores = accesses(warp, TraceSpace::global, TraceOp::store);
    ASSERT_EQ(stores.size(), 1u);
    EXPECT_EQ(stores[0].address[0],
              run.buffers[1].base_address + static_cast<std::uint64_t>(((8 + w) * kSize + 32) * 4));
    EXPECT_EQ(sectors(stores[0]), 4);
    EXPECT_EQ(warp.flops, 25.0 * 2 * 32);
  }
}

// Block (0, 0): gx = j - 2 < 0 for lanes 0-1 of j = lane, gy = i - 2 < 0 for tile rows 0-1, so
// warp 0 loads only tile row 8, without lanes 0-1, and warp 1 only row 9.
TEST(ExtractConv2d, CornerBlockSkipsTheOutsideOfTheImage) {
  const Conv run = trace_conv({0, 0, 0});
  for (int w = 0; w < 2; ++w) {
    const std::vector<TraceStep> loads = accesses(run.block.warps[w], TraceSpace::global, TraceOp::load);
    ASSERT_EQ(loads.size(), 2u) << "warp " << w;
    std::set<std::uint32_t> masks;
    for (const TraceStep& step : loads) {
      masks.insert(step.active_mask);
      const int lane = std::countr_zero(step.active_mask);
      const int gy = w + 8 - 2;
      const int gx = step.active_mask == 0xfu ? 30 + lane : lane - 2;
      EXPECT_EQ(step.address[lane], run.buffers[0].base_address + static_cast<std::uint64_t>((gy * kSize + gx) * 4));
    }
    EXPECT_EQ(masks, (std::set<std::uint32_t>{0xfffffffcu, 0xfu}));
    // Every tile element is stored (zeros outside the image): 2 rows x 2 column steps.
    EXPECT_EQ(accesses(run.block.warps[w], TraceSpace::shared, TraceOp::store).size(), 4u);
  }
}

} // namespace
} // namespace cachewise::frontend::testing
