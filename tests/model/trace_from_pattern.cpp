#include "trace_from_pattern.hpp"

#include <memory>

#include "../../model/src/simulation/lowered_pattern.hpp"

namespace cachewise::testing {
namespace {

using detail::LoweredAccess;
using detail::LoweredPattern;
using detail::LoweredPhase;

/// Expands one block of a lowered pattern, phase run by phase run.
class BlockExpander {
public:
  BlockExpander(const KernelPattern& pattern, const LoweredPattern& lowered, const std::array<std::int64_t, 3>& index)
      : pattern_(pattern),
        lowered_(lowered),
        loads_since_wait_(static_cast<std::size_t>(lowered.warps_per_block), 0),
        issued_(static_cast<std::size_t>(lowered.warps_per_block), 0.0) {
    trace_.block_index = index;
    trace_.warps.resize(static_cast<std::size_t>(lowered.warps_per_block));
  }

  BlockTrace run() {
    for (std::size_t p = 0; p < lowered_.phases.size();) {
      const LoweredPhase& phase = lowered_.phases[p];
      if (phase.phase_loop < 0) {
        run_phase(phase, 0);
        ++p;
        continue;
      }
      const PhaseLoop& loop = lowered_.phase_loops[static_cast<std::size_t>(phase.phase_loop)];
      for (std::int64_t trip = 0; trip < loop.loop.trip_count(); ++trip) {
        for (std::size_t q = loop.first_phase; q < loop.first_phase + loop.phase_count; ++q) {
          run_phase(lowered_.phases[q], loop.loop.begin + trip * loop.loop.step);
        }
      }
      p = loop.first_phase + loop.phase_count;
    }
    const double warps = static_cast<double>(pattern_.grid.count()) * lowered_.warps_per_block;
    const double flops = pattern_.flops / warps;
    const double overhead = pattern_.overhead_instructions / warps;
    for (std::size_t w = 0; w < trace_.warps.size(); ++w) {
      trace_.warps[w].flops = flops;
      trace_.warps[w].warp_instructions = issued_[w] + overhead + flops / 64.0;
    }
    return std::move(trace_);
  }

private:
  void run_phase(const LoweredPhase& phase, std::int64_t outer_value) {
    if (!first_run_) {
      for (WarpTrace& warp : trace_.warps) warp.steps.push_back({.kind = TraceStep::Kind::barrier});
    }
    first_run_ = false;
    std::fill(loads_since_wait_.begin(), loads_since_wait_.end(), 0);
    const std::size_t slots = phase.loops.size() + 1;
    std::vector<std::int64_t> loop_values(slots, 0);
    loop_values[static_cast<std::size_t>(phase.outer_slot)] = outer_value;
    for (std::size_t l = 0; l < phase.loops.size(); ++l) loop_values[l] = phase.loops[l].begin;
    std::vector<std::int64_t> block_values(slots);
    for (std::int64_t iteration = 0; iteration < phase.iterations; ++iteration) {
      detail::block_loop_values(phase, trace_.block_index, loop_values.data(), block_values.data());
      for (const LoweredAccess& access : phase.accesses) add_access(access, block_values.data());
      detail::advance_loops(phase, loop_values);
    }
  }

  void add_access(const LoweredAccess& access, const std::int64_t* loop_values) {
    detail::access_scalars(access, trace_.block_index, loop_values, scalars_);
    for (int warp = 0; warp < lowered_.warps_per_block; ++warp) {
      std::array<std::int64_t, 32> addresses{};
      TraceStep step;
      step.space = access.shared ? TraceSpace::shared : TraceSpace::global;
      step.op = access.store ? TraceOp::store : TraceOp::load;
      step.bytes_per_lane = static_cast<std::uint8_t>(access.access_bytes());
      step.instruction = static_cast<std::int32_t>(access.id);
      step.active_mask = detail::lane_addresses(lowered_, access, warp, scalars_.data(), addresses.data());
      for (int lane = 0; lane < 32; ++lane) {
        if ((step.active_mask >> lane & 1u) != 0)
          step.address[static_cast<std::size_t>(lane)] =
              static_cast<std::uint64_t>(addresses[static_cast<std::size_t>(lane)]);
      }
      std::vector<TraceStep>& steps = trace_.warps[static_cast<std::size_t>(warp)].steps;
      steps.push_back(step);
      if (step.active_mask == 0) continue;
      issued_[static_cast<std::size_t>(warp)] += 1;
      if (access.shared || access.store) continue;
      std::int64_t& loads = loads_since_wait_[static_cast<std::size_t>(warp)];
      if (++loads == pattern_.loads_in_flight) {
        steps.push_back({.kind = TraceStep::Kind::wait_loads});
        loads = 0;
      }
    }
  }

  const KernelPattern& pattern_;
  const LoweredPattern& lowered_;
  BlockTrace trace_;
  std::vector<std::int64_t> loads_since_wait_;
  std::vector<double> issued_; ///< per warp: access steps with an active lane
  std::vector<std::int64_t> scalars_;
  bool first_run_ = true;
};

} // namespace

TracedKernel traced_from_pattern(const KernelPattern& pattern) {
  auto lowered = std::make_shared<const LoweredPattern>(detail::lower_pattern(pattern));
  TracedKernel kernel;
  kernel.name = pattern.name;
  kernel.grid = pattern.grid;
  kernel.block = pattern.block;
  kernel.shared_bytes_per_block = shared_bytes_per_block(pattern);
  kernel.registers_per_thread = pattern.registers_per_thread;
  kernel.useful_bytes = pattern.useful_bytes;
  for (std::size_t a = 0; a < pattern.arrays.size(); ++a) {
    const ArrayDecl& array = pattern.arrays[a];
    if (array.space != MemorySpace::global) continue;
    std::int64_t bytes = array.element_bytes;
    for (const std::int64_t extent : array.extents) bytes *= extent;
    kernel.buffers.push_back({array.name, static_cast<std::uint64_t>(lowered->array_base_bytes[a]), bytes});
  }
  kernel.trace_block = [pattern, lowered](const std::array<std::int64_t, 3>& index) {
    return BlockExpander(pattern, *lowered, index).run();
  };
  return kernel;
}

} // namespace cachewise::testing
