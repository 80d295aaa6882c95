// simulate_traced with TracedKernel::translate_block: blocks given as a reference block's trace
// moved by their offset (docs/model.md, "Traced kernels"). A grid of 64 one-warp blocks, block b
// loading the 128-byte line b and storing it 2^19 bytes on.
#include <atomic>
#include <cstdint>
#include <memory>

#include <gtest/gtest.h>

#include "cachewise/model.hpp"
#include "cachewise/model/simulation/kernel_trace.hpp"

namespace cachewise {
namespace {

constexpr std::uint64_t kBase = std::uint64_t{1} << 30;
constexpr std::uint64_t kStoreOffset = std::uint64_t{1} << 19;

SimulationOptions exact() {
  SimulationOptions options;
  options.work_budget = 0;
  return options;
}

TraceStep line_access(TraceOp op, std::uint64_t first) {
  TraceStep step;
  step.op = op;
  step.active_mask = ~0u;
  step.instruction = op == TraceOp::load ? 1 : 2;
  for (std::uint64_t lane = 0; lane < 32; ++lane) step.address[lane] = first + 4 * lane;
  return step;
}

BlockTrace block_trace(const std::array<std::int64_t, 3>& index) {
  const auto line = kBase + 128 * static_cast<std::uint64_t>(index[0]);
  BlockTrace trace;
  trace.block_index = index;
  trace.warps.push_back({{line_access(TraceOp::load, line),
                          {.kind = TraceStep::Kind::wait_loads},
                          line_access(TraceOp::store, line + kStoreOffset)},
                         3.0,
                         0.0});
  return trace;
}

/// The kernel, its trace_block counting its calls.
TracedKernel traced_kernel(const std::shared_ptr<std::atomic<int>>& traced) {
  TracedKernel kernel;
  kernel.name = "lines";
  kernel.grid = {64, 1, 1};
  kernel.block = {32, 1, 1};
  kernel.buffers = {{"data", kBase, 1 << 20}};
  kernel.trace_block = [traced](const std::array<std::int64_t, 3>& index) {
    ++*traced;
    return block_trace(index);
  };
  return kernel;
}

/// Every block as block 10's trace moved by `load_step` and `store_step` bytes per block.
std::function<std::optional<TranslatedBlock>(const std::array<std::int64_t, 3>&)> moved_from_block_10(
    std::int64_t load_step, std::int64_t store_step, std::size_t steps = 3) {
  auto reference = std::make_shared<const BlockTrace>(block_trace({10, 0, 0}));
  auto moves = std::make_shared<std::vector<std::array<std::int64_t, 3>>>(steps);
  (*moves)[0][0] = load_step;
  if (steps > 2) (*moves)[2][0] = store_step;
  return [reference, moves = std::shared_ptr<const std::vector<std::array<std::int64_t, 3>>>(moves)](
             const std::array<std::int64_t, 3>&) {
    return TranslatedBlock{reference, moves};
  };
}

TEST(TraceTranslation, TranslatedBlocksTouchTheLinesTheirOffsetsMoveTo) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  auto traced = std::make_shared<std::atomic<int>>(0);
  const Prediction whole = simulate_traced(traced_kernel(traced), profile, exact());
  EXPECT_GE(traced->load(), 64);
  TracedKernel translated = traced_kernel(traced);
  translated.translate_block = moved_from_block_10(128, 128);
  traced->store(0);
  const Prediction moved = simulate_traced(translated, profile, exact());
  EXPECT_EQ(traced->load(), 0); // every block came from the reference
  // 64 distinct lines read cold: 64 x 128 bytes from DRAM, 4 sectors each; as many stored.
  EXPECT_EQ(moved.metric("dram__bytes_read.sum"), 64 * 128);
  EXPECT_EQ(moved.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 64 * 4);
  EXPECT_EQ(moved.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), 64 * 4);
  for (const auto& [name, value] : whole.metrics) EXPECT_EQ(moved.metric(name), value) << name;
  EXPECT_EQ(moved.time_us, whole.time_us);
}

TEST(TraceTranslation, AStepThatLeavesTheBuffersTracesTheBlockWhole) {
  // Moving the load 128 KiB per block from block 10's (byte 1280 of the 1 MiB buffer): blocks
  // 0 .. 9 would load before the buffer, blocks 18 .. 63 past its end. Those 56 are traced whole;
  // blocks 10 .. 17 stay inside and are taken as moved.
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  auto traced = std::make_shared<std::atomic<int>>(0);
  TracedKernel kernel = traced_kernel(traced);
  kernel.translate_block = moved_from_block_10(128 * 1024, 128);
  (void)simulate_traced(kernel, profile, exact());
  EXPECT_EQ(traced->load(), 56);
}

TEST(TraceTranslation, AStepPerBlockForEachStepOfTheReference) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  auto traced = std::make_shared<std::atomic<int>>(0);
  TracedKernel kernel = traced_kernel(traced);
  kernel.translate_block = moved_from_block_10(128, 128, 2);
  EXPECT_THROW((void)simulate_traced(kernel, profile, exact()), InputError);
}

} // namespace
} // namespace cachewise
