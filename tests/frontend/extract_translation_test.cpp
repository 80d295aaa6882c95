// Blocks by translation (docs/ptx-extraction.md): where nothing the kernel decides depends on
// the block index, the extractor derives blocks from a reference block once it has interpreted
// twice the preparation's blocks (1 reference + 1 neighbour per axis + the corners). Each test
// traces every block of a grid in order, with and without translation, and holds them equal.
#include <memory>

#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

const PtxModule& translation_module() {
  static const auto module = std::make_shared<const PtxModule>(load_test_ptx("translation"));
  return *module;
}

/// Every field of the two traces, and the addresses of the active lanes.
void expect_same_trace(const BlockTrace& a, const BlockTrace& b) {
  EXPECT_EQ(a.block_index, b.block_index);
  ASSERT_EQ(a.warps.size(), b.warps.size());
  for (std::size_t w = 0; w < a.warps.size(); ++w) {
    const WarpTrace& x = a.warps[w];
    const WarpTrace& y = b.warps[w];
    EXPECT_EQ(x.warp_instructions, y.warp_instructions);
    EXPECT_EQ(x.flops, y.flops);
    ASSERT_EQ(x.steps.size(), y.steps.size()) << "warp " << w;
    for (std::size_t s = 0; s < x.steps.size(); ++s) {
      const TraceStep& p = x.steps[s];
      const TraceStep& q = y.steps[s];
      EXPECT_EQ(p.kind, q.kind);
      EXPECT_EQ(p.active_mask, q.active_mask);
      EXPECT_EQ(p.instruction, q.instruction);
      EXPECT_EQ(p.weight, q.weight);
      for (int lane = 0; lane < 32; ++lane)
        if ((p.active_mask >> lane) & 1u)
          ASSERT_EQ(p.address[lane], q.address[lane]) << "block " << a.block_index[0] << "," << a.block_index[1]
                                                      << " warp " << w << " step " << s << " lane " << lane;
    }
  }
}

/// Traces every block of the launch's grid in order, translated (when allowed) and interpreted;
/// returns the translated traces and sets `translated` to how many blocks were.
std::vector<BlockTrace> trace_grid(const std::string& entry, LaunchArgs args, std::int64_t& translated) {
  const Extractor extractor(translation_module(), entry, args);
  args.translate_blocks = false;
  const Extractor interpreter(translation_module(), entry, args);
  std::vector<BlockTrace> blocks;
  for (std::int64_t y = 0; y < args.grid.y; ++y) {
    for (std::int64_t x = 0; x < args.grid.x; ++x) {
      blocks.push_back(extractor.trace_block({x, y, 0}));
      expect_same_trace(blocks.back(), interpreter.trace_block({x, y, 0}));
    }
  }
  translated = extractor.facts().translated_blocks;
  EXPECT_EQ(interpreter.facts().translated_blocks, 0);
  const std::vector<SummarisedLoop> loops = extractor.facts().summarised_loops;
  const std::vector<SummarisedLoop> replayed = interpreter.facts().summarised_loops;
  EXPECT_EQ(loops.size(), replayed.size());
  for (std::size_t i = 0; i < std::min(loops.size(), replayed.size()); ++i) {
    EXPECT_EQ(loops[i].runs, replayed[i].runs);
    EXPECT_EQ(loops[i].trips_interpreted, replayed[i].trips_interpreted);
    EXPECT_EQ(loops[i].trips_skipped, replayed[i].trips_skipped);
  }
  return blocks;
}

constexpr int kWidth = 512;

/// tile_copy over a 512 x 512 matrix: 16 x 8 blocks of 32 x 8 threads.
LaunchArgs tile_copy_args() {
  LaunchArgs args;
  args.grid = {16, 8, 1};
  args.block = {32, 8, 1};
  args.buffers = place_buffers({{"out", kWidth * kWidth * 4}, {"in", kWidth * kWidth * 4}});
  args.params = {args.buffers[0].base_address, args.buffers[1].base_address, static_cast<std::uint64_t>(kWidth)};
  return args;
}

TEST(ExtractTranslation, BlocksOfATileKernelAreTranslationsOfTheReference) {
  // 16 x 8 blocks of 32 x 8 threads over a 512 x 512 matrix. The preparation interprets 7
  // blocks (the reference, one neighbour along x and y, 4 corners); it starts after 14 blocks
  // were interpreted, and the 114 blocks after them are translated.
  LaunchArgs args = tile_copy_args();
  std::int64_t translated = 0;
  const std::vector<BlockTrace> blocks = trace_grid("tile_copy", args, translated);
  EXPECT_EQ(translated, 16 * 8 - 14);
  // Block (5, 3), warp 2 (threadIdx.y = 2), its first load: row 3 * 64 + 2, lane 7 at column 5 * 32 + 7.
  const BlockTrace& block = blocks[3 * 16 + 5];
  const std::vector<TraceStep> loads = accesses(block.warps[2], TraceSpace::global, TraceOp::load);
  ASSERT_FALSE(loads.empty());
  EXPECT_EQ(loads[0].address[7], args.buffers[1].base_address + 4u * ((3u * 64 + 2) * kWidth + 5 * 32 + 7));
}

TEST(ExtractTranslation, AForgottenTranslationIsPreparedAgain) {
  // After 14 interpreted blocks the 15th is translated; forgotten, the next block prepares the
  // translation again (its 7 blocks are not counted as traced) and is translated too.
  LaunchArgs args = tile_copy_args();
  const Extractor extractor(translation_module(), "tile_copy", args);
  for (std::int64_t x = 0; x < 15; ++x) (void)extractor.trace_block({x, 0, 0});
  EXPECT_EQ(extractor.facts().translated_blocks, 1);
  extractor.forget_translation();
  const BlockTrace again = extractor.trace_block({5, 3, 0});
  EXPECT_EQ(extractor.facts().translated_blocks, 2);
  args.translate_blocks = false;
  expect_same_trace(again, Extractor(translation_module(), "tile_copy", args).trace_block({5, 3, 0}));
}

/// The translated block's trace as the simulator reads it: the reference's addresses moved.
BlockTrace moved_trace(const TranslatedBlock& translated, const std::array<std::int64_t, 3>& index) {
  BlockTrace trace = *translated.reference;
  trace.block_index = index;
  std::size_t at = 0;
  for (WarpTrace& warp : trace.warps) {
    for (TraceStep& step : warp.steps) {
      const std::array<std::int64_t, 3>& per_block = (*translated.step_per_block)[at++];
      for (std::uint64_t& address : step.address)
        for (std::size_t a = 0; a < 3; ++a)
          address += static_cast<std::uint64_t>((index[a] - translated.reference->block_index[a]) * per_block[a]);
    }
  }
  return trace;
}

TEST(ExtractTranslation, TheSimulatorTakesBlocksWhoseLanesMoveAlikeAsMovedReferences) {
  LaunchArgs args = tile_copy_args();
  const Extractor extractor(translation_module(), "tile_copy", args);
  EXPECT_FALSE(extractor.translated_block({5, 3, 0})); // not before 14 blocks were interpreted
  for (std::int64_t x = 0; x < 14; ++x) (void)extractor.trace_block({x, 0, 0});
  const std::optional<TranslatedBlock> translated = extractor.translated_block({5, 3, 0});
  ASSERT_TRUE(translated);
  // The middle block (8, 4) is the reference; a load moves 32 floats per block along x and 64
  // rows of 512 floats along y.
  EXPECT_EQ(translated->reference->block_index, (std::array<std::int64_t, 3>{8, 4, 0}));
  args.translate_blocks = false;
  expect_same_trace(moved_trace(*translated, {5, 3, 0}),
                    Extractor(translation_module(), "tile_copy", args).trace_block({5, 3, 0}));
  bool found_load = false;
  std::size_t at = 0;
  for (const TraceStep& step : translated->reference->warps[0].steps) {
    const std::array<std::int64_t, 3>& per_block = (*translated->step_per_block)[at++];
    if (step.kind != TraceStep::Kind::access || step.op != TraceOp::load) continue;
    EXPECT_EQ(per_block, (std::array<std::int64_t, 3>{32 * 4, 64 * kWidth * 4, 0}));
    found_load = true;
  }
  EXPECT_TRUE(found_load);
  EXPECT_EQ(extractor.facts().translated_blocks, 1);
}

TEST(ExtractTranslation, LanesMoveByTheirOwnStepsPerBlock) {
  // Lane l of block b stores element b * (l + 1) + l. A grid of 64 blocks: the preparation
  // interprets 4 (the reference, a neighbour, 2 corners) after 8 were, then 56 are translated.
  LaunchArgs args;
  args.grid = {64, 1, 1};
  args.block = {32, 1, 1};
  args.buffers = place_buffers({{"out", 64 * 32 * 4}});
  args.params = {args.buffers[0].base_address};
  std::int64_t translated = 0;
  const std::vector<BlockTrace> blocks = trace_grid("lane_scaled", args, translated);
  EXPECT_EQ(translated, 64 - 8);
  // The simulator's form needs lanes that move alike: these blocks reach it traced.
  const Extractor extractor(translation_module(), "lane_scaled", args);
  for (std::int64_t x = 0; x < 9; ++x) (void)extractor.trace_block({x, 0, 0});
  EXPECT_EQ(extractor.facts().translated_blocks, 1);
  EXPECT_FALSE(extractor.translated_block({50, 0, 0}));
  const std::vector<TraceStep> stores = accesses(blocks[50].warps[0], TraceSpace::global, TraceOp::store);
  ASSERT_EQ(stores.size(), 1u);
  for (const int lane : {0, 9, 31})
    EXPECT_EQ(stores[0].address[lane], args.buffers[0].base_address + 4u * (50u * (lane + 1) + lane)) << lane;
}

TEST(ExtractTranslation, AComparisonOnTheBlockIndexKeepsEveryBlockInterpreted) {
  // i < n with i = blockIdx.x * 256 + threadIdx.x: the last block's threads past n skip the copy.
  const std::int64_t n = 16 * 256 - 100;
  LaunchArgs args;
  args.grid = {16, 1, 1};
  args.block = {256, 1, 1};
  args.buffers = place_buffers({{"out", n * 4}, {"in", n * 4}});
  args.params = {args.buffers[0].base_address, args.buffers[1].base_address, static_cast<std::uint64_t>(n)};
  std::int64_t translated = 0;
  const std::vector<BlockTrace> blocks = trace_grid("guarded_copy", args, translated);
  EXPECT_EQ(translated, 0);
  // The last block has 156 threads below n: warps 0-3 whole, 28 lanes of warp 4, none after.
  const std::vector<TraceStep> stores = accesses(blocks.back().warps[4], TraceSpace::global, TraceOp::store);
  ASSERT_EQ(stores.size(), 1u);
  EXPECT_EQ(stores[0].active_mask, (1u << 28) - 1);
  EXPECT_TRUE(accesses(blocks.back().warps[5], TraceSpace::global, TraceOp::store).empty());
}

TEST(ExtractTranslation, AnIndexThatWrapsBetweenCornersKeepsEveryBlockInterpreted) {
  // Block b stores element (b * 2^30 + lane) mod 2^32 of a 2^34-element buffer. From the
  // reference (block 8, element 0 + lane) a translation would put block 12 at 2^32 + lane,
  // inside the buffer but not where it wraps to (lane): the corner block 15 shows the difference.
  LaunchArgs args;
  args.grid = {16, 1, 1};
  args.block = {32, 1, 1};
  args.buffers = place_buffers({{"out", std::int64_t{1} << 36}});
  args.params = {args.buffers[0].base_address};
  std::int64_t translated = 0;
  const std::vector<BlockTrace> blocks = trace_grid("wrapping_index", args, translated);
  EXPECT_EQ(translated, 0);
  const std::vector<TraceStep> stores = accesses(blocks[13].warps[0], TraceSpace::global, TraceOp::store);
  ASSERT_EQ(stores.size(), 1u);
  EXPECT_EQ(stores[0].address[5], args.buffers[0].base_address + 4u * ((std::uint64_t{1} << 30) + 5));
}

} // namespace
} // namespace cachewise::frontend::testing
