// The sampler every simulation goes through: blocks are dealt to SMs in waves (the i-th block
// of a wave on simulated SM i mod SMs), a sample of waves from the middle of the grid is run
// after a warm-up, and its counts are scaled to the whole kernel (docs/model.md, "Sampling").
// What a wave executes comes from the kernel: pattern_runner.cpp or trace_runner.cpp.
#include <algorithm>
#include <string>
#include <utility>

#include "cachewise/model/simulation/occupancy.hpp"
#include "simulation/memory_system.hpp"
#include "simulation/sampling.hpp"

namespace cachewise::detail {

void TrafficCounts::add_scaled(const TrafficCounts& other, double factor) {
  global_load_requests += other.global_load_requests * factor;
  global_store_requests += other.global_store_requests * factor;
  global_load_sectors += other.global_load_sectors * factor;
  global_store_sectors += other.global_store_sectors * factor;
  global_load_lines += other.global_load_lines * factor;
  l1_hit_sectors += other.l1_hit_sectors * factor;
  l2_read_lookups += other.l2_read_lookups * factor;
  l2_read_hits += other.l2_read_hits * factor;
  l2_write_lookups += other.l2_write_lookups * factor;
  l2_write_line_lookups += other.l2_write_line_lookups * factor;
  l2_write_hits += other.l2_write_hits * factor;
  dram_read_bytes += other.dram_read_bytes * factor;
  dram_write_bytes += other.dram_write_bytes * factor;
  shared_load_wavefronts += other.shared_load_wavefronts * factor;
  shared_store_wavefronts += other.shared_store_wavefronts * factor;
  shared_load_ideal_wavefronts += other.shared_load_ideal_wavefronts * factor;
  shared_store_ideal_wavefronts += other.shared_store_ideal_wavefronts * factor;
}

void PhaseCounts::add_scaled(const PhaseCounts& other, double factor) {
  load_rounds += other.load_rounds * factor;
  round_latency_cycles += other.round_latency_cycles * factor;
  dram_round_latency_cycles += other.dram_round_latency_cycles * factor;
  shared_load_instructions += other.shared_load_instructions * factor;
  warp_instructions += other.warp_instructions * factor;
}

namespace {

/// Where the sample lies in the grid and how big a wave is (docs/model.md, "Sampling").
struct SamplePlan {
  std::int64_t total_blocks = 0;
  std::int64_t sm_count = 0; ///< simulated SMs (fewer than the device's when screening)
  bool screening = false;
  std::int64_t wave_blocks = 0;
  std::int64_t block_limit = 0; ///< the most blocks the sample may simulate
  std::int64_t first_block = 0;
  std::int64_t last_block = 0;
  std::int64_t budget_blocks = 1;   ///< blocks whose work is one budget
  double block_footprint_bytes = 0; ///< bytes one block reads from DRAM cold, plus its stores
  WriteRunRule write_run_rule;      ///< the profile calibration's, for the write-run tally
};

/// Runs blocks [begin, end) as one wave (SM = position in the wave); `write_runs`: where the
/// wave's stores are tallied (the sample's first wave only).
void run_wave(const SimulatedKernel& kernel, const SamplePlan& plan, WaveExecutor& executor, MemorySystem& memory,
              std::int64_t begin, std::int64_t end, WaveCounts& counts, WriteRuns* write_runs = nullptr) {
  // The blocks of the previous screening wave ran on SMs these ones do not use.
  if (plan.screening) memory.invalidate_l1s();
  const Dim3 grid = kernel.grid();
  std::vector<WaveBlock> blocks;
  for (std::int64_t b = begin; b < end; ++b) {
    const std::array<std::int64_t, 3> index = {b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y)};
    blocks.push_back({index, static_cast<int>((b - begin) % plan.sm_count)});
  }
  std::vector<StoredLine> stored;
  executor.run_wave(blocks, counts, write_runs != nullptr ? &stored : nullptr);
  if (write_runs != nullptr) tally_write_runs(stored, plan.write_run_rule, *write_runs);
}

/// The simulated SMs, the wave and the most blocks the sample may take, before any block runs.
SamplePlan plan_waves(SimulatedKernel& kernel, const DeviceProfile& profile, const SimulationOptions& options,
                      int blocks_per_sm) {
  if (options.work_budget < 0 || options.max_simulated_blocks < 0) {
    throw InputError("simulation options: limits must be >= 0");
  }
  if (options.simulated_sm_count < 0) {
    throw InputError("simulated_sm_count must not be negative, got " + std::to_string(options.simulated_sm_count));
  }
  SamplePlan plan;
  plan.total_blocks = kernel.grid().count();
  plan.write_run_rule = write_run_rule(profile.calibration);
  const std::int64_t device_sm_count = profile.device.sm_count;
  plan.sm_count = options.simulated_sm_count > 0 ? std::min<std::int64_t>(device_sm_count, options.simulated_sm_count)
                                                 : device_sm_count;
  // Screening keeps the whole L2: it sees the same blocks in the same order as with every SM
  // (a scaled-down L2 would lose the reuse between block rows a stencil relies on).
  plan.screening = plan.sm_count < device_sm_count;
  plan.wave_blocks = plan.sm_count * blocks_per_sm;
  kernel.plan(options, plan.wave_blocks);
  plan.block_limit = options.max_simulated_blocks > 0
                         ? std::min(plan.total_blocks, (options.max_simulated_blocks + plan.wave_blocks - 1) /
                                                           plan.wave_blocks * plan.wave_blocks)
                         : plan.total_blocks;
  return plan;
}

/// With a work budget: one block's work, measured on a scratch machine, sets how many blocks
/// the sample takes and where in the grid it starts.
void place_sample(const SimulatedKernel& kernel, const DeviceProfile& profile, const SimulationOptions& options,
                  int blocks_per_sm, SamplePlan& plan) {
  if (options.work_budget > 0) {
    const double budget = static_cast<double>(options.work_budget);
    // Work does not depend on cache state, so the smallest memory system will do.
    MemorySystem scratch_memory(profile, l1_capacity_bytes(kernel.shared_bytes_per_block(), profile, blocks_per_sm), 1,
                                1.0 / static_cast<double>(profile.device.sm_count));
    const std::unique_ptr<WaveExecutor> scratch = kernel.executor(scratch_memory);
    WaveCounts scratch_counts = kernel.empty_counts();
    run_wave(kernel, plan, *scratch, scratch_memory, plan.total_blocks / 2, plan.total_blocks / 2 + 1, scratch_counts);
    const auto block_work = static_cast<double>(std::max<std::int64_t>(1, scratch->work()));
    plan.budget_blocks = std::max<std::int64_t>(1, static_cast<std::int64_t>(budget / block_work));
    for (const TrafficCounts& counts : scratch_counts.segments) {
      plan.block_footprint_bytes +=
          counts.dram_read_bytes + counts.global_store_sectors * profile.l2.sector_bytes.value;
    }
    if (block_work * static_cast<double>(plan.wave_blocks) > budget) {
      // Even one wave is over budget: simulate part of one wave, the same number of blocks
      // on every SM (at least one each).
      const auto rounds = static_cast<std::int64_t>(budget / block_work / static_cast<double>(plan.sm_count));
      plan.block_limit = std::min(plan.block_limit, std::max<std::int64_t>(1, rounds) * plan.sm_count);
    }
    // A sample is taken from the middle of the grid, away from the boundary blocks whose
    // guards make them unlike the bulk; it starts cold, like the kernel.
    const auto expected = std::max<std::int64_t>(plan.sm_count, static_cast<std::int64_t>(budget / block_work));
    if (expected < plan.total_blocks) {
      plan.first_block = (plan.total_blocks - std::min(expected, plan.block_limit)) / 2 / plan.sm_count * plan.sm_count;
    }
  }
  plan.last_block = std::min(plan.total_blocks, plan.first_block + plan.block_limit);
}

/// The blocks just before the sample fill the caches (e.g. the halo rows a stencil shares with
/// its upper neighbours); their counts and dirty data are discarded.
void warm_up(const SimulatedKernel& kernel, const DeviceProfile& profile, const SimulationOptions& options,
             const SamplePlan& plan, WaveExecutor& executor, MemorySystem& memory) {
  if (plan.first_block == 0) return;
  const std::int64_t first_block = plan.first_block;
  const std::int64_t window = std::min(plan.block_limit, plan.total_blocks - first_block);
  // Screening's sample is too small to warm up on: it warms the L2 with the row of blocks
  // before the sample instead (what a stencil's upper halo needs), at most one budget's
  // work, skipping shared memory, which leaves nothing in the caches.
  const Dim3 grid = kernel.grid();
  const std::int64_t warm_up_blocks =
      plan.screening ? std::min({first_block, plan.budget_blocks, grid.x})
                     : std::min(first_block, std::max<std::int64_t>(1, std::min(plan.wave_blocks / 4, window / 2)));
  WaveCounts discarded = kernel.empty_counts();
  executor.set_skip_shared(plan.screening);
  // A 3D grid's blocks share data with the layer below (a stencil3d chunk's halo planes are
  // the chunk below's last ones), further back than the warm-up reaches. The sample's blocks
  // one layer down run first when the blocks between touch less than the L2 holds, so the
  // device finds that data in L2 too (H200, 8-plane chunks at n=256: 71 MB read; a sample
  // that missed the layer below predicted 79 MB, every halo plane from DRAM).
  const std::int64_t layer_blocks = grid.x * grid.y;
  if (grid.z > 1 && layer_blocks > warm_up_blocks && first_block >= layer_blocks &&
      static_cast<double>(layer_blocks) * plan.block_footprint_bytes <= profile.l2.capacity_bytes.value) {
    // In steps of the sample's waves, as much work as the sample gets: one budget.
    const std::int64_t end = first_block - warm_up_blocks;
    const std::int64_t step = std::min(plan.wave_blocks, window);
    const std::int64_t start_work = executor.work();
    for (std::int64_t begin = first_block - layer_blocks;
         begin < end && executor.work() - start_work < options.work_budget; begin += step) {
      run_wave(kernel, plan, executor, memory, begin, std::min(end, begin + step), discarded);
    }
    // Those blocks ran long before the sample, their L1 lines gone with them: only L2 keeps
    // their planes.
    memory.invalidate_l1s();
  }
  run_wave(kernel, plan, executor, memory, first_block - warm_up_blocks, first_block, discarded);
  executor.set_skip_shared(false);
  memory.flush(discarded.segments[0]);
}

/// Whole waves from the sample's first block until the budget is spent; returns the blocks run.
std::int64_t run_sample(const SimulatedKernel& kernel, const SimulationOptions& options, const SamplePlan& plan,
                        WaveExecutor& executor, MemorySystem& memory, WaveCounts& counts, WriteRuns& write_runs) {
  const std::int64_t warm_up_work = executor.work();
  std::int64_t simulated_blocks = 0;
  while (plan.first_block + simulated_blocks < plan.last_block &&
         (options.work_budget == 0 || simulated_blocks == 0 || executor.work() - warm_up_work < options.work_budget)) {
    const std::int64_t wave_start = plan.first_block + simulated_blocks;
    const std::int64_t wave_end = std::min(plan.last_block, wave_start + plan.wave_blocks);
    simulated_blocks = wave_end - plan.first_block;
    // The sample's first wave stands for the rest in the write-run tally (its sort of every
    // stored line is the costly part; the later waves of a sample repeat its layout).
    run_wave(kernel, plan, executor, memory, wave_start, wave_end, counts,
             wave_start == plan.first_block ? &write_runs : nullptr);
  }
  memory.flush(counts.segments[0]);
  return simulated_blocks;
}

/// The sample's counts scaled to every block (and every trip of a cut phase loop).
void scale_to_kernel(const CountScaling& scaling, const WaveCounts& sample, std::int64_t simulated_blocks,
                     SimulationRun& run) {
  const double block_scale = static_cast<double>(run.total_blocks) / static_cast<double>(simulated_blocks);
  double simulated_work = static_cast<double>(simulated_blocks) / static_cast<double>(run.total_blocks);
  for (std::size_t s = 0; s < sample.segments.size(); ++s) {
    run.traffic.add_scaled(sample.segments[s], block_scale * scaling.segment_scale[s]);
  }
  for (const double fraction : scaling.work_fractions) simulated_work *= fraction;
  for (std::size_t p = 0; p < sample.phases.size(); ++p) {
    PhaseCounts scaled;
    scaled.add_scaled(sample.phases[p], block_scale * scaling.phase_scale[p]);
    scaled.runs_per_block = scaling.runs_per_block[p];
    run.phases.push_back(scaled);
  }
  run.simulated_blocks = simulated_blocks;
  run.simulated_fraction = simulated_work;
}

} // namespace

SimulationRun run_sampled(SimulatedKernel& kernel, const DeviceProfile& profile, const SimulationOptions& options,
                          int blocks_per_sm, WaveCounts* sample) {
  check_profile_supported(profile);
  SamplePlan plan = plan_waves(kernel, profile, options, blocks_per_sm);
  place_sample(kernel, profile, options, blocks_per_sm, plan);

  MemorySystem memory(profile, l1_capacity_bytes(kernel.shared_bytes_per_block(), profile, blocks_per_sm),
                      plan.sm_count, 1.0);
  const std::unique_ptr<WaveExecutor> executor = kernel.executor(memory);
  warm_up(kernel, profile, options, plan, *executor, memory);
  WaveCounts counts = kernel.empty_counts();
  SimulationRun run;
  const std::int64_t simulated_blocks = run_sample(kernel, options, plan, *executor, memory, counts, run.write_runs);

  run.total_blocks = plan.total_blocks;
  run.blocks_per_sm = blocks_per_sm;
  run.warps_per_block = kernel.warps_per_block();
  scale_to_kernel(kernel.scaling(counts, simulated_blocks), counts, simulated_blocks, run);
  run.sampled = run.simulated_fraction < 1.0 || plan.screening;
  if (sample != nullptr) *sample = std::move(counts);
  return run;
}

} // namespace cachewise::detail

namespace cachewise {

Prediction simulate(const KernelPattern& pattern, const DeviceProfile& profile, const SimulationOptions& options) {
  validate_pattern(pattern);
  check_fits_device(pattern, profile);
  const int resident = blocks_per_sm(pattern, profile);
  if (resident < 1) throw InputError("pattern cannot launch on " + profile.device.name + ": no block fits on an SM");
  return detail::make_prediction(detail::kernel_facts(pattern), profile,
                                 detail::run_simulation(pattern, profile, options, resident));
}

} // namespace cachewise
