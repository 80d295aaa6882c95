// How long simulate_traced takes for one candidate of a user kernel: the tiled transpose
// (TILE_DIM 32, BLOCK_ROWS 8, padded tile) at n=4096, its blocks' traces generated here as the
// front end extracts them from compiled code (four loads, a wait, four shared stores, a
// barrier, four shared loads each followed by a store). Issue #21's goal: extracting and
// simulating one n=4096 transpose candidate <= 50 ms; this measures the simulation part with
// a generator instead of the extractor.
#include <benchmark/benchmark.h>

#include "cachewise/model/simulation/kernel_trace.hpp"
#include "cachewise/model.hpp"

namespace {

using cachewise::BlockTrace;
using cachewise::TraceOp;
using cachewise::TraceSpace;
using cachewise::TraceStep;

constexpr std::int64_t kTile = 32;
constexpr std::int64_t kBlockRows = 8;
constexpr std::uint64_t kInputBase = std::uint64_t{1} << 30;

/// One warp instruction of the transpose: lane l of warp w (thread x = l, y = w) at byte
/// `address(x, y)`.
template <typename Address>
TraceStep step(TraceSpace space, TraceOp op, int warp, Address address) {
  TraceStep s;
  s.space = space;
  s.op = op;
  s.bytes_per_lane = 4;
  s.active_mask = 0xffffffffu;
  for (int lane = 0; lane < 32; ++lane) s.address[static_cast<std::size_t>(lane)] = address(lane, warp);
  return s;
}

cachewise::TracedKernel transpose_kernel(std::int64_t n, bool padded) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(n * n * 4);
  const std::uint64_t output_base = kInputBase + (bytes + (1 << 20) - 1) / (1 << 20) * (1 << 20);
  const std::uint64_t row_words = kTile + (padded ? 1 : 0);
  cachewise::TracedKernel kernel;
  kernel.name = "transpose_tiled";
  kernel.grid = {n / kTile, n / kTile, 1};
  kernel.block = {kTile, kBlockRows, 1};
  kernel.shared_bytes_per_block = static_cast<std::int64_t>(kTile * row_words * 4);
  kernel.registers_per_thread = 40;
  kernel.buffers = {{"idata", kInputBase, static_cast<std::int64_t>(bytes)},
                    {"odata", output_base, static_cast<std::int64_t>(bytes)}};
  kernel.useful_bytes = static_cast<std::int64_t>(2 * bytes);
  kernel.trace_block = [=](const std::array<std::int64_t, 3>& index) {
    const auto bx = static_cast<std::uint64_t>(index[0] * kTile);
    const auto by = static_cast<std::uint64_t>(index[1] * kTile);
    const auto row = static_cast<std::uint64_t>(n);
    BlockTrace trace;
    trace.block_index = index;
    trace.warps.resize(kBlockRows);
    for (int warp = 0; warp < kBlockRows; ++warp) {
      std::vector<TraceStep>& steps = trace.warps[static_cast<std::size_t>(warp)].steps;
      for (std::uint64_t j = 0; j < kTile; j += kBlockRows) {
        steps.push_back(step(TraceSpace::global, TraceOp::load, warp, [&](int x, int y) {
          return kInputBase + ((by + static_cast<std::uint64_t>(y) + j) * row + bx + static_cast<std::uint64_t>(x)) * 4;
        }));
      }
      steps.push_back({.kind = TraceStep::Kind::wait_loads});
      for (std::uint64_t j = 0; j < kTile; j += kBlockRows) {
        steps.push_back(step(TraceSpace::shared, TraceOp::store, warp, [&](int x, int y) {
          return ((static_cast<std::uint64_t>(y) + j) * row_words + static_cast<std::uint64_t>(x)) * 4;
        }));
      }
      steps.push_back({.kind = TraceStep::Kind::barrier});
      for (std::uint64_t j = 0; j < kTile; j += kBlockRows) {
        steps.push_back(step(TraceSpace::shared, TraceOp::load, warp, [&](int x, int y) {
          return (static_cast<std::uint64_t>(x) * row_words + static_cast<std::uint64_t>(y) + j) * 4;
        }));
        steps.push_back(step(TraceSpace::global, TraceOp::store, warp, [&](int x, int y) {
          return output_base +
                 ((bx + static_cast<std::uint64_t>(y) + j) * row + by + static_cast<std::uint64_t>(x)) * 4;
        }));
      }
      trace.warps[static_cast<std::size_t>(warp)].warp_instructions =
          40; // the 16 accesses and their address arithmetic
    }
    return trace;
  };
  return kernel;
}

void simulate_traced_transpose(benchmark::State& state, std::int64_t n, bool padded,
                               cachewise::SimulationOptions options) {
  const cachewise::DeviceProfile profile = cachewise::load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const cachewise::TracedKernel kernel = transpose_kernel(n, padded);
  double simulated_fraction = 1.0;
  double time_us = 0;
  for (auto _ : state) {
    const cachewise::Prediction prediction = cachewise::simulate_traced(kernel, profile, options);
    simulated_fraction = prediction.simulated_fraction;
    time_us = prediction.time_us;
    benchmark::DoNotOptimize(prediction.time_us);
  }
  state.counters["simulated_fraction"] = simulated_fraction;
  state.counters["predicted_us"] = time_us;
}

/// What the advisor screens every candidate with (SuggestOptions::screening).
const cachewise::SimulationOptions kScreening{.work_budget = std::int64_t{1} << 13, .simulated_sm_count = 4};

BENCHMARK_CAPTURE(simulate_traced_transpose, traced_transpose_4096_tile32_pad1, 4096, true,
                  cachewise::SimulationOptions{})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_traced_transpose, traced_transpose_4096_tile32_pad0, 4096, false,
                  cachewise::SimulationOptions{})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_traced_transpose, traced_transpose_16384_tile32_pad1, 16384, true,
                  cachewise::SimulationOptions{})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_traced_transpose, screen_traced_transpose_4096_tile32_pad1, 4096, true, kScreening)
    ->Unit(benchmark::kMillisecond);

} // namespace
