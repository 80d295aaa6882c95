// The time model's inputs and entry (docs/model.md, "Time estimate"): whole-kernel counts as the
// simulator gathers them (simulation/), the kernel's declared facts, and make_prediction, which
// turns them into CUPTI-named metrics and a time (prediction.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "cachewise/model/pattern/pattern.hpp"
#include "cachewise/model/profile/device_profile.hpp"
#include "cachewise/model/timing/prediction.hpp"

namespace cachewise::detail {

inline constexpr double kFlopsPerWarpInstruction = 64.0; // an FMA: 2 flops in each of 32 lanes

/// Whole-kernel counts (already scaled up when sampled).
struct TrafficCounts {
  double global_load_requests = 0;
  double global_store_requests = 0;
  double global_load_sectors = 0;
  double global_store_sectors = 0;
  double global_load_lines = 0; ///< the distinct lines of each load request: L1's data-stage wavefronts
  double l1_hit_sectors = 0;
  double l2_read_lookups = 0; ///< near and far lookups both count, like lts__t_sectors
  double l2_read_hits = 0;
  double l2_write_lookups = 0;
  double l2_write_line_lookups = 0; ///< the lines those sectors are in, looked up as they are
  double l2_write_hits = 0;
  double dram_read_bytes = 0;
  double dram_write_bytes = 0;
  double shared_load_wavefronts = 0;
  double shared_store_wavefronts = 0;
  double shared_load_ideal_wavefronts = 0;
  double shared_store_ideal_wavefronts = 0;

  void add_scaled(const TrafficCounts& other, double factor);
};

/// Per phase of the pattern, over the whole kernel: what the latency chain needs.
struct PhaseCounts {
  /// A warp's loads of one phase run go out in rounds of the pattern's loads_in_flight; a round
  /// waits for its slowest load. Summed over every warp's rounds: the rounds and their latency.
  double load_rounds = 0;
  double round_latency_cycles = 0;
  double dram_round_latency_cycles = 0; ///< the part of it from rounds whose slowest load went to DRAM
  double shared_load_instructions = 0;
  double warp_instructions = 0;
  double runs_per_block = 1; ///< how often a block executes the phase (phase-loop trips)

  void add_scaled(const PhaseCounts& other, double factor);
};

/// The global stores' lines by how they lie in DRAM: runs of consecutive lines one warp
/// writes, spread when the blocks dispatched around its block do not continue them (a
/// transpose's rows), compact otherwise (docs/model.md, "DRAM factors"). Counted over the
/// sample's first wave.
struct WriteRuns {
  std::map<std::int64_t, double> spread_lines_by_run_lines; ///< run length (lines) -> lines in such runs
  double lines = 0;                                         ///< every line a block stored to, spread or not
};

struct SimulationRun {
  TrafficCounts traffic;
  WriteRuns write_runs;
  std::vector<PhaseCounts> phases;
  std::int64_t total_blocks = 0;
  int blocks_per_sm = 0;
  int warps_per_block = 0;
  bool sampled = false;
  double simulated_fraction = 1.0;
  std::int64_t simulated_blocks = 0; ///< blocks of the sample (the warm-up's not counted)
};

/// What the time model needs of a kernel besides its simulated counts: a KernelPattern declares
/// it, a traced kernel's trace yields it (trace_runner.cpp).
struct KernelFacts {
  double store_burst = 1;             ///< global stores a thread issues back to back after the loads they need
  double flops = 0;                   ///< f32-equivalent, whole kernel
  double overhead_instructions = 0;   ///< warp instructions beyond the memory ones and one FMA per 64 flops
  double useful_bytes = 0;            ///< each input read once, each output written once
  double hottest_address_atomics = 0; ///< global atomic lane operations on the most used address
  double constant_requests = 0;       ///< constant-cache requests, whole kernel
};
KernelFacts kernel_facts(const KernelPattern& pattern);

/// Metrics under CUPTI names plus the time estimate.
Prediction make_prediction(const KernelFacts& facts, const DeviceProfile& profile, const SimulationRun& run);

} // namespace cachewise::detail
