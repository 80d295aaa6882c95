// What the sampler (simulator.cpp: plan, warm-up, sample, scale) needs of a kernel, so that a
// KernelPattern and a traced kernel run through the same waves, SMs and caches.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cachewise/model/simulation/simulation.hpp"
#include "simulation/simulation_run.hpp"

namespace cachewise::detail {

class MemorySystem;

/// A block of a wave and the simulated SM it runs on.
struct WaveBlock {
  std::array<std::int64_t, 3> index{};
  int sm = 0;
};

/// What a traced kernel's executed blocks report besides traffic (unused for patterns).
struct TraceTally {
  std::vector<double> phase_blocks; ///< per phase (barrier interval): the blocks that reached it
  double warp_instructions = 0;     ///< every executed instruction, memory ones included
  double register_divisions = 0;    ///< of them, integer divisions by a register (WarpTrace)
  double constant_requests = 0;     ///< constant-cache requests (WarpTrace)
  double flops = 0;
  double global_loads = 0;   ///< issued global load instructions (local ones included)
  double load_rounds = 0;    ///< rounds of them, closed by waits, barriers and the end
  double store_runs = 0;     ///< runs of consecutive global stores
  double stores_in_runs = 0; ///< their stores
  /// Global atomic lane operations per address: the hottest one serialises at its L2 slice.
  std::unordered_map<std::uint64_t, double> atomics_by_address;
};

/// Counts of the waves run into it.
struct WaveCounts {
  /// Traffic per scaling segment: 0 outside phase loops, 1 + l inside phase loop l.
  std::vector<TrafficCounts> segments;
  std::vector<PhaseCounts> phases;
  TraceTally trace;
};

/// Runs the blocks of one wave on a memory system.
class WaveExecutor {
public:
  virtual ~WaveExecutor() = default;
  /// Warp instructions plus the cache lines they touched so far: what the work budget limits.
  virtual std::int64_t work() const = 0;
  /// Whether shared-memory accesses are skipped (a warm-up that only fills the caches).
  virtual void set_skip_shared(bool skip) = 0;
  /// Runs `blocks` together; with `stored`, appends the wave's global stores (tally_write_runs).
  virtual void run_wave(const std::vector<WaveBlock>& blocks, WaveCounts& counts, std::vector<StoredLine>* stored) = 0;
};

/// How a sample's counts scale to the kernel beyond all blocks / simulated blocks.
struct CountScaling {
  std::vector<double> segment_scale;  ///< per traffic segment (1 for segment 0)
  std::vector<double> phase_scale;    ///< per phase
  std::vector<double> runs_per_block; ///< per phase: how often a block runs it
  std::vector<double> work_fractions; ///< the simulated share of each cut phase loop
};

/// A kernel the sampler can run: a lowered pattern or a trace.
class SimulatedKernel {
public:
  virtual ~SimulatedKernel() = default;
  virtual Dim3 grid() const = 0;
  virtual std::int64_t shared_bytes_per_block() const = 0;
  virtual int warps_per_block() const = 0;
  /// Called once before sampling: what a wave of `wave_blocks` may cost (a pattern cuts long
  /// phase loops to the budget here).
  virtual void plan(const SimulationOptions& options, std::int64_t wave_blocks) = 0;
  virtual std::unique_ptr<WaveExecutor> executor(MemorySystem& memory) const = 0;
  virtual WaveCounts empty_counts() const = 0;
  virtual CountScaling scaling(const WaveCounts& sample, std::int64_t simulated_blocks) const = 0;
};

/// The sampled simulation of `kernel` (docs/model.md, "Sampling" and "Screening"); `sample`
/// receives the sample's own counts, unscaled, when not null.
SimulationRun run_sampled(SimulatedKernel& kernel, const DeviceProfile& profile, const SimulationOptions& options,
                          int blocks_per_sm, WaveCounts* sample = nullptr);

} // namespace cachewise::detail
