// A file of several kernels (kernels/several.cu), as users have them: only the entry asked for
// is parsed, so a kernel the parser or the extractor cannot read does not sink the others; a
// cooperative-groups reduction (thread_block, sync, tiled_partition<32> and its shuffles) and a
// 3D grid are traced. Addresses and masks derived by hand.
#include "extract_test_support.hpp"

#include <functional>

#include "cachewise/frontend/compile.hpp"

namespace cachewise::frontend::testing {
namespace {

/// several.cu's PTX with only the body of the entry whose name contains `fragment`.
PtxModule load_entry(const std::string& fragment) {
  std::ifstream file(std::string(CACHEWISE_TEST_PTX_DIR) + "/several.ptx");
  std::stringstream text;
  text << file.rdbuf();
  return parse_ptx(text.str(), [&](std::string_view name) { return name.find(fragment) != std::string_view::npos; });
}

std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

// The whole file does not parse: env_word reads %envreg3. The message names the kernel and the
// line of its asm statement (several.cu:19).
TEST(ExtractSeveral, AnUnreadableKernelIsNamedWithItsSourceLine) {
  const std::string message = error_of([] { (void)load_entry("env_word"); });
  EXPECT_EQ(message.rfind("env_word (several.cu:19): ptx:", 0), 0u) << message;
  EXPECT_NE(message.find("undeclared register '%envreg3'"), std::string::npos) << message;
}

// carry_sum parses, but its add.cc is refused when it is lowered, naming line 13.
TEST(ExtractSeveral, ARejectedInstructionNamesItsSourceLine) {
  const PtxModule module = load_entry("carry_sum");
  const std::vector<TraceBuffer> buffers = place_buffers({{"a", 4096}, {"b", 4096}, {"out", 4096}});
  LaunchArgs args;
  args.grid = {8, 1, 1};
  args.block = {128, 1, 1};
  args.params = {buffers[0].base_address, buffers[1].base_address, buffers[2].base_address};
  const std::string message = error_of([&] { (void)Extractor(module, entry_containing(module, "carry_sum"), args); });
  EXPECT_EQ(message.rfind("several.cu:13: ", 0), 0u) << message;
}

// 256 threads, block 2: warp w loads in[512 + 32 w + lane] (4 sectors), lane 0 stores its sum
// to partial[w]; after the barrier warp 0's lanes 0..7 (meta_group_size 8) read partial[lane]
// and lane 0 stores out[2]. The other warps read and write nothing more.
TEST(ExtractSeveral, CooperativeGroupsReduction) {
  const PtxModule module = load_entry("tile_sum");
  const std::vector<TraceBuffer> buffers = place_buffers({{"in", 4 * 256 * 4}, {"out", 4 * 4}});
  LaunchArgs args;
  args.grid = {4, 1, 1};
  args.block = {256, 1, 1};
  args.params = {buffers[0].base_address, buffers[1].base_address};
  args.buffers = buffers;
  const BlockTrace block = Extractor(module, entry_containing(module, "tile_sum"), args).trace_block({2, 0, 0});
  ASSERT_EQ(block.warps.size(), 8u);
  for (std::size_t w = 0; w < 8; ++w) {
    const WarpTrace& warp = block.warps[w];
    const std::vector<TraceStep> loads = accesses(warp, TraceSpace::global, TraceOp::load);
    ASSERT_EQ(loads.size(), 1u) << "warp " << w;
    EXPECT_EQ(loads[0].address[0], buffers[0].base_address + (512 + 32 * w) * 4);
    EXPECT_EQ(sectors(loads[0]), 4);
    const std::vector<TraceStep> partial = accesses(warp, TraceSpace::shared, TraceOp::store);
    ASSERT_EQ(partial.size(), 1u);
    EXPECT_EQ(partial[0].active_mask, 0x1u);
    EXPECT_EQ(partial[0].address[0], 4 * w);
    EXPECT_EQ(count_kind(warp, TraceStep::Kind::barrier), 1);
    EXPECT_EQ(accesses(warp, TraceSpace::shared, TraceOp::load).size(), w == 0 ? 1u : 0u);
    EXPECT_EQ(accesses(warp, TraceSpace::global, TraceOp::store).size(), w == 0 ? 1u : 0u);
  }
  const TraceStep read = accesses(block.warps[0], TraceSpace::shared, TraceOp::load)[0];
  EXPECT_EQ(read.active_mask, 0xffu);
  for (int lane = 0; lane < 8; ++lane) EXPECT_EQ(read.address[lane], 4u * lane);
  const TraceStep result = accesses(block.warps[0], TraceSpace::global, TraceOp::store)[0];
  EXPECT_EQ(result.active_mask, 0x1u);
  EXPECT_EQ(result.address[0], buffers[1].base_address + 2 * 4);
}

// nx = 64, ny = 8, nz = 4, block 32 x 4, grid 2 x 2 x 4. Block (1, 1, 3), warp w (threadIdx.y
// = w): x = 32 + lane, y = 4 + w, element (3 * 8 + 4 + w) * 64 + 32 + lane. The buffers hold
// exactly 64 * 8 * 4 floats, so the last plane's last row, (31 * 64 + 63) * 4 = 8188, fits.
TEST(ExtractSeveral, ThreeDimensionalGrid) {
  const PtxModule module = load_entry("scale_volume");
  const std::vector<TraceBuffer> buffers = place_buffers({{"in", 64 * 8 * 4 * 4}, {"out", 64 * 8 * 4 * 4}});
  LaunchArgs args;
  args.grid = {2, 2, 4};
  args.block = {32, 4, 1};
  args.params = {buffers[0].base_address, buffers[1].base_address, 64, 8};
  args.buffers = buffers;
  const Extractor extractor(module, entry_containing(module, "scale_volume"), args);
  const BlockTrace block = extractor.trace_block({1, 1, 3});
  ASSERT_EQ(block.warps.size(), 4u);
  for (std::uint64_t w = 0; w < 4; ++w) {
    const std::uint64_t element = (3 * 8 + 4 + w) * 64 + 32;
    const std::vector<TraceStep> loads = accesses(block.warps[w], TraceSpace::global, TraceOp::load);
    const std::vector<TraceStep> stores = accesses(block.warps[w], TraceSpace::global, TraceOp::store);
    ASSERT_EQ(loads.size(), 1u);
    ASSERT_EQ(stores.size(), 1u);
    EXPECT_EQ(loads[0].address[0], buffers[0].base_address + element * 4);
    EXPECT_EQ(loads[0].address[31], buffers[0].base_address + (element + 31) * 4);
    EXPECT_EQ(stores[0].address[0], buffers[1].base_address + element * 4);
    EXPECT_EQ(sectors(loads[0]), 4);
  }
  // Plane 0 of the same column: 3 * 8 * 64 elements lower.
  const BlockTrace first_plane = extractor.trace_block({1, 1, 0});
  EXPECT_EQ(accesses(first_plane.warps[0], TraceSpace::global, TraceOp::load)[0].address[0],
            buffers[0].base_address + ((4 * 64) + 32) * 4);
}

} // namespace
} // namespace cachewise::frontend::testing
