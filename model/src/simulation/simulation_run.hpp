// The simulator's half of model::simulate: counting traffic (simulator.cpp, the runners) into the
// time model's inputs (timing/time_model.hpp), and the write runs of the stores.
#pragma once

#include <compare>
#include <cstdint>
#include <vector>

#include "cachewise/model/simulation/simulation.hpp"
#include "timing/time_model.hpp"

namespace cachewise::detail {

/// A global store's line, the position in its wave of the block that wrote it, and its warp.
struct StoredLine {
  std::uint64_t line = 0;
  std::uint32_t block_slot = 0;
  std::uint32_t warp = 0;
  friend auto operator<=>(const StoredLine&, const StoredLine&) = default;
};

/// When a warp's run of stored lines counts as compact (the profile's calibration): the lines
/// written by the blocks within `neighbour_blocks` of its block in dispatch order (its own
/// included) continue it to `compact_factor` times its length, or another of those blocks
/// writes one of its lines too (they fill a 1-D output together).
struct WriteRunRule {
  std::int64_t neighbour_blocks = 0;
  std::int64_t compact_factor = 1;
};
WriteRunRule write_run_rule(const Calibration& calibration);

/// Adds one wave's stores to `runs`: each warp's runs of consecutive lines, spread unless
/// `rule` calls them compact.
void tally_write_runs(const std::vector<StoredLine>& wave_stores, const WriteRunRule& rule, WriteRuns& runs);

/// Runs the warps of `pattern` through coalescer, shared-memory banks, L1, L2 and DRAM.
SimulationRun run_simulation(const KernelPattern& pattern, const DeviceProfile& profile,
                             const SimulationOptions& options, int blocks_per_sm);

} // namespace cachewise::detail
