// simulate_traced(): a traced kernel through the sampler (its waves run by the trace runner),
// the checks of its description and launch, and the time model's inputs read off its sample.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "cachewise/model/simulation/kernel_trace.hpp"
#include "simulation/launch_fit.hpp"
#include "simulation/sampling.hpp"
#include "simulation/trace_runner.hpp"

namespace cachewise::detail {
namespace {

class TraceKernel final : public SimulatedKernel {
public:
  TraceKernel(const TracedKernel& kernel, const DeviceProfile& profile)
      : kernel_(kernel), profile_(profile), layout_(trace_layout(kernel)) {}

  Dim3 grid() const override { return kernel_.grid; }
  std::int64_t shared_bytes_per_block() const override { return kernel_.shared_bytes_per_block; }
  int warps_per_block() const override { return layout_.warps_per_block; }
  void plan(const SimulationOptions& /*options*/, std::int64_t /*wave_blocks*/) override {
  } // a trace has no loops to cut
  std::unique_ptr<WaveExecutor> executor(MemorySystem& memory) const override {
    return make_trace_runner(kernel_, layout_, profile_, memory);
  }
  WaveCounts empty_counts() const override {
    WaveCounts counts;
    counts.segments.resize(1);
    return counts;
  }
  /// A barrier interval runs once in every block that reaches it.
  CountScaling scaling(const WaveCounts& sample, std::int64_t simulated_blocks) const override {
    CountScaling scaling;
    scaling.segment_scale.push_back(1.0);
    for (std::size_t p = 0; p < sample.phases.size(); ++p) {
      scaling.phase_scale.push_back(1.0);
      scaling.runs_per_block.push_back(sample.trace.phase_blocks[p] / static_cast<double>(simulated_blocks));
    }
    return scaling;
  }

private:
  const TracedKernel& kernel_;
  const DeviceProfile& profile_;
  TraceLayout layout_;
};

[[noreturn]] void invalid_kernel(const TracedKernel& kernel, const std::string& what) {
  throw InputError("traced kernel '" + kernel.name + "': " + what);
}

void validate_traced_kernel(const TracedKernel& kernel) {
  for (const auto& [name, dim] : {std::pair{"grid", kernel.grid}, std::pair{"block", kernel.block}}) {
    for (const std::int64_t value : {dim.x, dim.y, dim.z}) {
      if (value < 1 || value > (std::int64_t{1} << 31)) {
        invalid_kernel(kernel, std::string(name) + " extents must be in [1, 2147483648], got " + std::to_string(value));
      }
    }
  }
  if (kernel.registers_per_thread < 1 || kernel.registers_per_thread > 255) {
    invalid_kernel(kernel,
                   "registers_per_thread must be in [1, 255], got " + std::to_string(kernel.registers_per_thread));
  }
  if (kernel.shared_bytes_per_block < 0 || kernel.local_bytes_per_thread < 0 || kernel.useful_bytes < 0) {
    invalid_kernel(kernel, "shared, local and useful bytes must not be negative");
  }
  constexpr std::uint64_t kAddressLimit = std::uint64_t{1} << 56;
  for (const TraceBuffer& buffer : kernel.buffers) {
    if (buffer.bytes < 0 || buffer.base_address >= kAddressLimit ||
        static_cast<std::uint64_t>(buffer.bytes) >= kAddressLimit) {
      invalid_kernel(kernel, "buffer '" + buffer.name + "' must lie below 2^56 with a size >= 0");
    }
  }
  const auto threads = static_cast<double>(kernel.grid.count()) * static_cast<double>(kernel.block.count());
  if (threads * static_cast<double>(kernel.local_bytes_per_thread + 4) >= static_cast<double>(kAddressLimit)) {
    invalid_kernel(kernel, std::to_string(kernel.local_bytes_per_thread) + " local bytes per thread for " +
                               std::to_string(threads) + " threads exceed the 2^56-byte address space");
  }
}

LaunchShape launch_shape(const TracedKernel& kernel) {
  return {kernel.grid, kernel.block, kernel.shared_bytes_per_block, kernel.registers_per_thread};
}

/// The time model's inputs, read off the sample's traces and scaled to the grid: a division by
/// a register counts as the calibration's machine-code routine, not as one instruction.
TracedFacts traced_facts(const WaveCounts& sample, const SimulationRun& run, const Calibration& calibration) {
  const TraceTally& tally = sample.trace;
  const double scale = static_cast<double>(run.total_blocks) / static_cast<double>(run.simulated_blocks);
  double memory_instructions = 0;
  for (const PhaseCounts& phase : sample.phases) memory_instructions += phase.warp_instructions;
  TracedFacts facts;
  facts.loads_in_flight = tally.load_rounds > 0 ? tally.global_loads / tally.load_rounds : 0.0;
  facts.store_burst = tally.store_runs > 0 ? tally.stores_in_runs / tally.store_runs : 1.0;
  facts.flops = tally.flops * scale;
  facts.register_divisions = tally.register_divisions * scale;
  facts.constant_requests = tally.constant_requests * scale;
  facts.warp_instructions =
      (tally.warp_instructions + tally.register_divisions * (calibration.register_division_instructions.value - 1.0)) *
      scale;
  facts.memory_instructions = memory_instructions * scale;
  facts.overhead_instructions =
      std::max(0.0, facts.warp_instructions - facts.memory_instructions - facts.flops / kFlopsPerWarpInstruction);
  for (const auto& [address, operations] : tally.atomics_by_address) {
    facts.hottest_address_atomics = std::max(facts.hottest_address_atomics, operations * scale);
  }
  return facts;
}

} // namespace
} // namespace cachewise::detail

namespace cachewise {

void check_fits_device(const TracedKernel& kernel, const DeviceProfile& profile) {
  detail::validate_traced_kernel(kernel);
  detail::check_launch_fits(detail::launch_shape(kernel), profile, "kernel '" + kernel.name + "'");
}

int blocks_per_sm(const TracedKernel& kernel, const DeviceProfile& profile) {
  detail::validate_traced_kernel(kernel);
  return detail::resident_blocks_per_sm(detail::launch_shape(kernel), profile);
}

Prediction simulate_traced(const TracedKernel& kernel, const DeviceProfile& profile, const SimulationOptions& options,
                           TracedFacts* facts) {
  check_fits_device(kernel, profile);
  if (!kernel.trace_block) detail::invalid_kernel(kernel, "no trace_block to extract blocks with");
  const int resident = blocks_per_sm(kernel, profile);
  if (resident < 1)
    throw InputError("kernel '" + kernel.name + "' cannot launch on " + profile.device.name +
                     ": no block fits on an SM");
  detail::TraceKernel simulated(kernel, profile);
  detail::WaveCounts sample;
  const detail::SimulationRun run = detail::run_sampled(simulated, profile, options, resident, &sample);
  const TracedFacts traced = detail::traced_facts(sample, run, profile.calibration);
  detail::KernelFacts time_inputs;
  time_inputs.store_burst = traced.store_burst;
  time_inputs.flops = traced.flops;
  time_inputs.overhead_instructions = traced.overhead_instructions;
  time_inputs.hottest_address_atomics = traced.hottest_address_atomics;
  time_inputs.constant_requests = traced.constant_requests;
  time_inputs.useful_bytes = static_cast<double>(kernel.useful_bytes);
  if (facts != nullptr) *facts = traced;
  return detail::make_prediction(time_inputs, profile, run);
}

} // namespace cachewise
