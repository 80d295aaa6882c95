// Test support: a KernelPattern as a traced kernel, each block's trace the pattern's own
// addresses, so simulate_traced and simulate can be held to the same counts.
#pragma once

#include "cachewise/model/simulation/kernel_trace.hpp"
#include "cachewise/model.hpp"

namespace cachewise::testing {

/// The pattern's blocks as traces: per warp, one access step per pattern access and
/// iteration (steps whose lanes all stay idle included, as the pattern issues nothing there),
/// a wait_loads after every `loads_in_flight` issued global loads, and a barrier between
/// consecutive phase runs. Each warp carries an equal share of the pattern's flops and
/// overhead instructions. Buffers are the pattern's global arrays where the simulator places them.
TracedKernel traced_from_pattern(const KernelPattern& pattern);

} // namespace cachewise::testing
