// Internal to the model: the trace runner (trace_runner.cpp), which runs a traced kernel's
// waves through the coalescer, memory system and bank model, and where its bytes lie.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cachewise/model/simulation/kernel_trace.hpp"
#include "simulation/memory_system.hpp"
#include "simulation/sampling.hpp"

namespace cachewise::detail {

/// Where a traced kernel's global and local bytes lie.
struct TraceLayout {
  std::vector<TraceBuffer> buffers; ///< by base address
  std::uint64_t local_window = 0;   ///< first byte of the local window, past every buffer
  std::uint64_t threads_total = 0;
  std::int64_t threads_per_block = 0;
  int warps_per_block = 0;
};

TraceLayout trace_layout(const TracedKernel& kernel);

/// Runs waves of `kernel`'s blocks on `memory`; `kernel` and `layout` must outlive it.
std::unique_ptr<WaveExecutor> make_trace_runner(const TracedKernel& kernel, const TraceLayout& layout,
                                                const DeviceProfile& profile, MemorySystem& memory);

} // namespace cachewise::detail
