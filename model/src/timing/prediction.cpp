// Counts -> CUPTI-named metrics and a time estimate (docs/model.md, "Time estimate").
#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "cachewise/model/timing/gpu_architecture.hpp"
#include "timing/time_model.hpp"

namespace cachewise {
namespace detail {
namespace {

constexpr double kDefaultSmClockMhz = 1500.0; // when the profile recorded no clock
constexpr double kL1BytesPerSmCycle = 128.0;  // when the profile has no L1 bandwidth
constexpr double kL2OverDramBandwidth = 2.5;  // when the profile has no L2 bandwidth
// The fitted constants (soft-maximum exponents, loaded-latency factors, block and barrier
// cycles, launch overhead) are the profile's calibration: docs/calibration.md.

/// The device's FP32 throughput and issue slots, from its compute capability.
struct SmThroughput {
  double flops_per_cycle = 0;
  double warp_instructions_per_cycle = 0;
};

SmThroughput sm_throughput(const DeviceProfile& profile) {
  const int major = profile.device.compute_capability_major;
  const int minor = profile.device.compute_capability_minor;
  const SmThroughput throughput{f32_flops_per_sm_cycle(major, minor),
                                static_cast<double>(warp_schedulers_per_sm(major, minor))};
  if (throughput.flops_per_cycle <= 0 || throughput.warp_instructions_per_cycle <= 0) {
    throw InputError("profile.device.compute_capability: no known FP32 throughput or scheduler count for " +
                     std::to_string(major) + "." + std::to_string(minor));
  }
  return throughput;
}

double bytes_per_us(double gb_per_s) { return gb_per_s * 1.0e3; }

/// Global and shared accesses the warps issue (the simulator's count, scaled to the kernel).
double memory_warp_instructions(const SimulationRun& run) {
  double instructions = 0;
  for (const PhaseCounts& phase : run.phases) instructions += phase.warp_instructions;
  return instructions;
}

/// Soft maximum: close to the largest term when one dominates, and still growing with the
/// others, so every term moves the estimate in the right direction (the ranking needs that).
double combine(const std::map<std::string, double, std::less<>>& terms, double exponent) {
  double sum = 0;
  for (const auto& [name, value] : terms) sum += std::pow(value, exponent);
  return std::pow(sum, 1.0 / exponent);
}

double sm_clock_mhz(const DeviceProfile& profile) {
  const int observed = std::max(profile.device.sm_clock_mhz_after, profile.device.sm_clock_mhz_before);
  return observed > 0 ? observed : kDefaultSmClockMhz;
}

/// Cycles one block needs when nothing but latency limits it: per phase, its warps' loads go
/// out in rounds of the pattern's loads_in_flight and each round waits for its slowest load
/// (the simulator sums those per warp; the mean warp stands for the block).
double block_latency_cycles(const SimulationRun& run, const DeviceProfile& profile) {
  const double warps = static_cast<double>(run.total_blocks) * run.warps_per_block;
  double cycles = 0;
  for (const PhaseCounts& phase : run.phases) {
    cycles += phase.round_latency_cycles / warps;
    if (phase.shared_load_instructions > 0) cycles += phase.runs_per_block * profile.l1.hit_latency_cycles.value;
  }
  return cycles;
}

/// That chain (`idle_cycles`) under load: rounds that wait for DRAM at the calibration's loaded
/// DRAM latency factor scaled to DRAM's busy fraction (`dram_load`: 1 + (factor - 1) x load),
/// the rest (L2 and L1 hits, the shared-load latency) at its cache factor.
double loaded_block_latency_cycles(const SimulationRun& run, const Calibration& calibration, double idle_cycles,
                                   double dram_load) {
  const double warps = static_cast<double>(run.total_blocks) * run.warps_per_block;
  double dram_cycles = 0;
  for (const PhaseCounts& phase : run.phases) dram_cycles += phase.dram_round_latency_cycles / warps;
  const double dram_factor = 1.0 + (calibration.loaded_dram_latency_factor.value - 1.0) * dram_load;
  return dram_factor * dram_cycles + calibration.loaded_cache_latency_factor.value * (idle_cycles - dram_cycles);
}

/// A measured slowdown curve at x: linear in log2(x) between the measured points, the largest
/// point's value beyond them. Below the smallest point it rises from 1 at x = 1 (store bursts,
/// rounds per block: one of them is the reference), or with `flat_below` it stays at that
/// point's value (write runs: shorter runs cost no less).
double slowdown_at(const std::map<std::int64_t, Measured>& measured, double x, bool flat_below = false) {
  if (measured.empty()) return 1.0;
  double below_x = flat_below ? static_cast<double>(measured.begin()->first) : 1.0;
  double below_value = flat_below ? measured.begin()->second.value : 1.0;
  for (const auto& [point, slowdown] : measured) {
    if (x <= static_cast<double>(point)) {
      if (static_cast<double>(point) <= below_x) return slowdown.value;
      const double fraction = std::log2(x / below_x) / std::log2(static_cast<double>(point) / below_x);
      return below_value + (slowdown.value - below_value) * std::max(0.0, fraction);
    }
    below_x = static_cast<double>(point);
    below_value = slowdown.value;
  }
  return below_value;
}

/// The slowdown was measured on a mirrored tile copy, whose DRAM bytes are half writes, and it
/// scales the whole DRAM time: a kernel writing under a quarter of its DRAM bytes (a reduction,
/// a matrix-vector product) lies outside that shape, and its few stores do not set the pace.
constexpr double kSpreadWriteMinWriteShare = 0.25;

/// Spread stores cost DRAM time by their runs' length (the probe's mirrored tile copy), in
/// proportion to the stored lines that lie so.
double spread_write_factor(const DeviceProfile& profile, const SimulationRun& run) {
  const WriteRuns& runs = run.write_runs;
  if (profile.dram.spread_write_slowdown.empty() || runs.lines <= 0) return 1.0;
  const double dram_bytes = run.traffic.dram_read_bytes + run.traffic.dram_write_bytes;
  if (!(run.traffic.dram_write_bytes >= kSpreadWriteMinWriteShare * dram_bytes)) return 1.0;
  double factor = 1.0;
  for (const auto& [run_lines, lines] : runs.spread_lines_by_run_lines) {
    const double run_bytes = static_cast<double>(run_lines) * profile.l2.line_bytes.value;
    factor += (slowdown_at(profile.dram.spread_write_slowdown, run_bytes, true) - 1.0) * lines / runs.lines;
  }
  return factor;
}

struct WholeKernelTerms {
  double dram_us = 0;
  double l2_us = 0;
  double l1_us = 0;
  double shared_us = 0;
  double compute_us = 0;
  double issue_us = 0;
  double block_launch_cycles = 0;  ///< the SM's block dispatch per block (SM cycles): a rate beside the issue slots
  double barrier_drain_cycles = 0; ///< one block's barrier drains (SM cycles): they lengthen its chain
  double atomics_us = 0;           ///< the most used address's atomics, one after another at L2
  double constant_us = 0;          ///< the constant cache's requests, one address at a time per SM
};

WholeKernelTerms throughput_terms(const KernelFacts& facts, const DeviceProfile& profile, const SimulationRun& run) {
  const TrafficCounts& t = run.traffic;
  const double clock_mhz = sm_clock_mhz(profile);
  const double sm_count = profile.device.sm_count;
  const double sector_bytes = profile.l2.sector_bytes.value;
  WholeKernelTerms terms;

  const double read_bw = bytes_per_us(profile.dram.read_bandwidth_gb_per_s.value);
  const double write_bw = bytes_per_us(profile.dram.write_bandwidth_gb_per_s.value);
  terms.dram_us = std::max(t.dram_read_bytes / read_bw, t.dram_write_bytes / write_bw);
  if (profile.dram.copy_bandwidth_gb_per_s) {
    terms.dram_us = std::max(terms.dram_us, (t.dram_read_bytes + t.dram_write_bytes) /
                                                bytes_per_us(profile.dram.copy_bandwidth_gb_per_s->value));
  }
  // Bursts of stores after loads cost DRAM time where reads and writes mix (the probe's copy
  // with 1-8 vectors per thread; reads alone or writes alone barely move on the H200): the
  // slowdown counts in proportion to how evenly the two mix.
  const double dram_bytes = t.dram_read_bytes + t.dram_write_bytes;
  const double mixed = dram_bytes > 0 ? 2.0 * std::min(t.dram_read_bytes, t.dram_write_bytes) / dram_bytes : 0.0;
  // Blocks that walk many rounds of loads lose DRAM bandwidth too (the probe's copy whose
  // threads move 4-64 vectors one after another): by the mean warp's rounds.
  double rounds = 0;
  for (const PhaseCounts& phase : run.phases) rounds += phase.load_rounds;
  rounds /= std::max(1.0, static_cast<double>(run.total_blocks) * run.warps_per_block);
  terms.dram_us *= 1.0 + (slowdown_at(profile.dram.store_burst_slowdown, facts.store_burst) - 1.0) * mixed;
  terms.dram_us *= 1.0 + (slowdown_at(profile.dram.block_walk_slowdown, rounds) - 1.0) * mixed;
  // Rows a warp writes a few lines of, while the blocks around it write elsewhere (a
  // transpose's output), cost DRAM time the shorter the run (docs/model.md, "DRAM factors").
  terms.dram_us *= spread_write_factor(profile, run);

  const double l2_read_bw = profile.l2.read_bandwidth_gb_per_s ? bytes_per_us(profile.l2.read_bandwidth_gb_per_s->value)
                                                               : read_bw * kL2OverDramBandwidth;
  // The counts are lookups (lts__t_sectors_op_*), the probe's bandwidths bytes re-read or
  // re-written. Its re-reads hit copies in the near partition (1.00 lookups per sector on the
  // H200, ncu), but every store to a far-homed line is looked up in the near partition and again
  // at home: 1 + (partitions - 1) / partitions lookups per sector written (H200: 1.500).
  const double partitions = std::max(1, profile.l2.partitions);
  const double write_lookups_per_sector = 1.0 + (partitions - 1.0) / partitions;
  const double l2_write_bw = profile.l2.write_bandwidth_gb_per_s
                                 ? bytes_per_us(profile.l2.write_bandwidth_gb_per_s->value) * write_lookups_per_sector
                                 : l2_read_bw;
  // A store's cost per line it writes: a + b x its sectors there, in whole-line sector-times:
  // m sectors per line cost m (the probe's write test), one sector costs the probe's measured
  // sparse-line slowdown s (H200: 1.97; a transpose without shared memory writes so).
  const double sectors_per_line = profile.l2.line_bytes.value / sector_bytes;
  const double sparse = profile.l2.sparse_line_write_slowdown ? profile.l2.sparse_line_write_slowdown->value : 1.0;
  const double per_sector = sectors_per_line > 1 ? (sectors_per_line - sparse) / (sectors_per_line - 1) : 1.0;
  const double per_line = sparse - per_sector;
  const double write_cost = per_line * t.l2_write_line_lookups + per_sector * t.l2_write_lookups;
  terms.l2_us = t.l2_read_lookups * sector_bytes / l2_read_bw + write_cost * sector_bytes / l2_write_bw;

  const double l1_bw = profile.l1.read_bandwidth_gb_per_s ? bytes_per_us(profile.l1.read_bandwidth_gb_per_s->value)
                                                          : kL1BytesPerSmCycle * sm_count * clock_mhz;
  // A load returns each distinct line it touches as one data-stage wavefront, however few of
  // its sectors it wants; a store moves only its sectors (docs/model.md "Time estimate").
  terms.l1_us = (t.global_load_lines * profile.l1.line_bytes.value + t.global_store_sectors * sector_bytes) / l1_bw;

  const double extra_cycles =
      profile.shared_memory.extra_wavefront_cycles ? profile.shared_memory.extra_wavefront_cycles->value : 1.0;
  const double ideal = t.shared_load_ideal_wavefronts + t.shared_store_ideal_wavefronts;
  const double conflicts = t.shared_load_wavefronts + t.shared_store_wavefronts - ideal;
  terms.shared_us = (ideal + conflicts * extra_cycles) / (sm_count * clock_mhz);

  const SmThroughput throughput = sm_throughput(profile);
  terms.compute_us = facts.flops / (throughput.flops_per_cycle * sm_count * clock_mhz);
  terms.issue_us = (memory_warp_instructions(run) + facts.overhead_instructions) /
                   (throughput.warp_instructions_per_cycle * sm_count * clock_mhz);
  double phase_runs = 0;
  for (const PhaseCounts& phase : run.phases) phase_runs += phase.runs_per_block;
  const Calibration& calibration = profile.calibration;
  terms.atomics_us = facts.hottest_address_atomics * calibration.same_address_atomic_cycles.value / clock_mhz;
  terms.constant_us = facts.constant_requests * calibration.constant_request_cycles.value / (sm_count * clock_mhz);
  terms.block_launch_cycles = calibration.block_launch_cycles.value;
  terms.barrier_drain_cycles = std::max(0.0, phase_runs - 1.0) * calibration.barrier_cycles.value;
  return terms;
}

/// The term that sets the time: of the side (memory or SM) that is larger, its largest part:
/// on the memory side the streaming levels' largest (dram, l2, l1) or the exposed latency
/// ("latency"); on the SM side the latency chain, the block dispatch, the issue slots (named
/// compute or issue, whichever is more of them) or the shared-memory pipe.
std::string dominant_term(const std::map<std::string, double, std::less<>>& t) {
  auto largest = [](std::initializer_list<std::pair<const char*, double>> parts) {
    std::pair<const char*, double> best = *parts.begin();
    for (const auto& part : parts) {
      if (part.second > best.second) best = part;
    }
    return std::string(best.first);
  };
  if (t.at("memory") >= t.at("sm")) {
    const double streaming_us = t.at("memory") - t.at("exposed_latency");
    if (t.at("exposed_latency") > streaming_us) return "latency";
    return largest({{"dram", t.at("dram")}, {"l2", t.at("l2")}, {"l1", t.at("l1")}, {"atomics", t.at("atomics")}});
  }
  const char* slots = t.at("compute") > t.at("issue") ? "compute" : "issue";
  return largest({{"latency", t.at("latency")},
                  {"blocks", t.at("blocks")},
                  {slots, t.at("compute") + t.at("issue")},
                  {"shared", t.at("shared")},
                  {"constant", t.at("constant")}});
}

struct TimeEstimate {
  double time_us = 0;
  std::int64_t waves = 0;
  std::map<std::string, double, std::less<>> terms_us;
  std::string bottleneck;
};

/// Blocks run in waves of sm_count * blocks_per_sm. Chip-wide terms (DRAM, L2) scale with the
/// blocks of a wave; per-SM terms (L1, shared, compute, issue) with the blocks of its busiest
/// SM; the latency chain is paid whole in the first wave, beside the other blocks' work after.
TimeEstimate estimate_time_at_load(const KernelFacts& facts, const DeviceProfile& profile, const SimulationRun& run,
                                   double dram_load) {
  const WholeKernelTerms whole = throughput_terms(facts, profile, run);
  const double clock_mhz = sm_clock_mhz(profile);
  const std::int64_t sm_count = profile.device.sm_count;
  const std::int64_t wave_blocks = sm_count * run.blocks_per_sm;
  const double total_blocks = static_cast<double>(run.total_blocks);
  const double chain_cycles = block_latency_cycles(run, profile);
  const double chain_us = chain_cycles / clock_mhz;
  const Calibration& calibration = profile.calibration;
  const double loaded_chain_us = loaded_block_latency_cycles(run, calibration, chain_cycles, dram_load) / clock_mhz;
  // A block that stages through shared memory waits at its barrier for every load of a round,
  // under load: on the SM side its chain is the loaded one (as on the memory side).
  const bool staged = std::any_of(run.phases.begin(), run.phases.end(),
                                  [](const PhaseCounts& phase) { return phase.shared_load_instructions > 0; });
  const double sm_chain_us = staged ? loaded_chain_us : chain_us;

  TimeEstimate estimate;
  auto add_wave = [&](std::int64_t blocks, std::int64_t count, bool staggered) {
    if (count <= 0 || blocks == 0) return;
    const double chip_share = static_cast<double>(blocks) / total_blocks;
    const double busiest_sm_blocks = static_cast<double>((blocks + sm_count - 1) / sm_count);
    const double sm_share = busiest_sm_blocks * static_cast<double>(sm_count) / total_blocks;
    // The memory system idles while a block waits on a round: the other blocks resident on
    // its SM stream meanwhile, so 1 / (resident blocks) of the loaded chain stays exposed.
    const double resident_blocks = std::max(1.0, static_cast<double>(blocks) / static_cast<double>(sm_count));
    std::map<std::string, double, std::less<>> wave{
        {"dram", whole.dram_us * chip_share},
        {"l2", whole.l2_us * chip_share},
        {"atomics", whole.atomics_us * chip_share},
        {"l1", whole.l1_us * sm_share},
        {"exposed_latency", loaded_chain_us / resident_blocks},
        {"shared", whole.shared_us * sm_share},
        {"constant", whole.constant_us * sm_share},
        {"compute", whole.compute_us * sm_share},
        {"issue", whole.issue_us * sm_share},
        {"blocks", busiest_sm_blocks * whole.block_launch_cycles / clock_mhz},
        {"latency", sm_chain_us + whole.barrier_drain_cycles / clock_mhz}};
    // An SM's schedulers issue the FMAs and every other instruction one slot each, so those
    // add up; the shared-memory pipe and the constant cache serve beside them, and its block scheduler
    // dispatches the next block while the resident ones run (soft maximum: the H200 runs the
    // same FMAs in 32- to 1024-thread blocks in one time once they outlast the dispatch). A
    // block's latency chain and its barrier drains stall its own warps. The first wave's blocks
    // start together, so their chain and work add; later blocks start as others retire, so the
    // other resident blocks issue while one waits, and a later wave costs the larger of its work
    // and one block's slot time, its chain plus its share of the work (convsep_rows of the
    // corpus's fit half, docs/model.md "Time estimate").
    const double work_us = combine({{"issue", wave.at("compute") + wave.at("issue")},
                                    {"shared", wave.at("shared")},
                                    {"constant", wave.at("constant")},
                                    {"blocks", wave.at("blocks")}},
                                   calibration.combine_exponent.value);
    wave["sm"] =
        staggered ? std::max(work_us, wave.at("latency") + work_us / resident_blocks) : wave.at("latency") + work_us;
    wave["memory"] =
        combine(
            {{"dram", wave.at("dram")}, {"l2", wave.at("l2")}, {"l1", wave.at("l1")}, {"atomics", wave.at("atomics")}},
            calibration.memory_levels_combine_exponent.value) +
        wave.at("exposed_latency");
    const std::map<std::string, double, std::less<>> overlapped{{"memory", wave.at("memory")}, {"sm", wave.at("sm")}};
    const auto repeats = static_cast<double>(count);
    estimate.time_us += combine(overlapped, calibration.combine_exponent.value) * repeats;
    for (const auto& [name, value] : wave) estimate.terms_us[name] += value * repeats;
    estimate.waves += count;
  };
  // A trailing partial wave streams its share of the traffic: after the first wave blocks
  // start as others retire, not together, staged or not (H200,
  // with whole-wave costs the fastest tenth of stencil3d 512^3, 64-plane chunks at 1-2
  // waves, was predicted 19% high, with shares 7%; the 64-tile transposes at 6.2
  // waves measured 37.1 us, not the 41.1 us of 7 whole waves; docs/model.md, "Time estimate").
  const std::int64_t full_waves = run.total_blocks / wave_blocks;
  add_wave(wave_blocks, std::min<std::int64_t>(full_waves, 1), false);
  add_wave(wave_blocks, full_waves - 1, true);
  add_wave(run.total_blocks % wave_blocks, 1, full_waves > 0);
  estimate.bottleneck = dominant_term(estimate.terms_us);
  estimate.terms_us["launch"] = calibration.launch_overhead_us.value;
  estimate.time_us += calibration.launch_overhead_us.value;
  return estimate;
}

/// A DRAM load waits behind the requests queued ahead of it, so its latency grows with how busy
/// DRAM is: the calibration's loaded DRAM factor (measured with DRAM streaming) holds where the
/// DRAM term fills the kernel's time and falls towards the idle latency as its share does
/// (reduction's grid-stride reduce6, the corpus's fit half: 3-6x its time at the full factor).
/// The load is the fixed point of load = DRAM term / time; it is unique, since the time grows
/// with the load, and found by regula falsi (Illinois), a few estimates for most kernels.
TimeEstimate estimate_time(const KernelFacts& facts, const DeviceProfile& profile, const SimulationRun& run) {
  TimeEstimate estimate;
  const auto excess = [&](double dram_load) {
    estimate = estimate_time_at_load(facts, profile, run, dram_load);
    const double busy_us = estimate.time_us - estimate.terms_us.at("launch");
    const double dram_us = estimate.terms_us.at("dram");
    return dram_load - std::min(1.0, busy_us > 0 ? dram_us / busy_us : 1.0);
  };
  double high = 1, excess_high = excess(high);
  if (excess_high <= 0) return estimate;
  double low = 0, excess_low = excess(low);
  if (excess_low >= 0) return estimate; // no DRAM term: the load is 0
  constexpr double kTolerance = 1e-12;
  for (int step = 0, kept = 0; step < 100; ++step) {
    const double load = (low * excess_high - high * excess_low) / (excess_high - excess_low);
    const double at = excess(load);
    if (std::abs(at) < kTolerance || high - low < kTolerance) break;
    // The end kept twice in a row has its excess halved, so that end moves too (Illinois).
    if (at < 0) {
      low = load, excess_low = at;
      if (kept == -1) excess_high /= 2;
      kept = -1;
    } else {
      high = load, excess_high = at;
      if (kept == 1) excess_low /= 2;
      kept = 1;
    }
  }
  return estimate;
}

double ratio(double part, double whole) { return whole > 0 ? part / whole : 0.0; }

/// A sampled run's DRAM reads are its blocks' scaled to the grid, and data every block shares
/// (a GEMM's B, read once from DRAM and then from L2) is fetched by the warm-up, whose counts
/// are discarded, not by the sample: those reads would be lost. The kernel still brings each
/// input byte from DRAM once (it starts cold), so a sampled run reads at least the useful bytes
/// less the bytes it writes to DRAM (docs/model.md, "Compulsory DRAM reads"). A run of every
/// block counts its reads exactly and keeps them.
SimulationRun with_compulsory_reads(SimulationRun run, double useful_bytes) {
  if (!run.sampled) return run;
  TrafficCounts& t = run.traffic;
  t.dram_read_bytes = std::max(t.dram_read_bytes, useful_bytes - t.dram_write_bytes);
  return run;
}

} // namespace

KernelFacts kernel_facts(const KernelPattern& pattern) {
  KernelFacts facts;
  facts.store_burst = static_cast<double>(pattern.store_burst);
  facts.flops = pattern.flops;
  facts.overhead_instructions = pattern.overhead_instructions;
  facts.useful_bytes = static_cast<double>(pattern.useful_bytes);
  return facts;
}

Prediction make_prediction(const KernelFacts& facts, const DeviceProfile& profile, const SimulationRun& sampled_run) {
  const SimulationRun run = with_compulsory_reads(sampled_run, facts.useful_bytes);
  const TrafficCounts& t = run.traffic;
  Prediction prediction;
  auto& m = prediction.metrics;
  m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = t.global_load_requests;
  m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] = t.global_store_requests;
  m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = t.global_load_sectors;
  m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] = t.global_store_sectors;
  m["l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"] =
      ratio(t.global_load_sectors, t.global_load_requests);
  m["l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio"] =
      ratio(t.global_store_sectors, t.global_store_requests);
  m["l1tex__t_sector_hit_rate.pct"] = 100.0 * ratio(t.l1_hit_sectors, t.global_load_sectors + t.global_store_sectors);
  m["lts__t_sector_hit_rate.pct"] =
      100.0 * ratio(t.l2_read_hits + t.l2_write_hits, t.l2_read_lookups + t.l2_write_lookups);
  m["lts__t_sectors_op_read.sum"] = t.l2_read_lookups;
  m["lts__t_sectors_op_write.sum"] = t.l2_write_lookups;
  m["dram__bytes_read.sum"] = t.dram_read_bytes;
  m["dram__bytes_write.sum"] = t.dram_write_bytes;
  m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = t.shared_load_wavefronts;
  m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] = t.shared_store_wavefronts;
  m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] =
      t.shared_load_wavefronts - t.shared_load_ideal_wavefronts;
  m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] =
      t.shared_store_wavefronts - t.shared_store_ideal_wavefronts;
  m["smsp__inst_executed.sum"] =
      memory_warp_instructions(run) + facts.overhead_instructions + facts.flops / kFlopsPerWarpInstruction;

  const TimeEstimate estimate = estimate_time(facts, profile, run);
  prediction.time_us = estimate.time_us;
  prediction.bottleneck = estimate.bottleneck;
  prediction.time_terms_us = estimate.terms_us;
  prediction.waves = estimate.waves;
  prediction.achieved_bandwidth_gb_per_s = facts.useful_bytes / (estimate.time_us * 1.0e3);
  prediction.achieved_gflop_per_s = facts.flops / (estimate.time_us * 1.0e3);
  prediction.blocks_per_sm = run.blocks_per_sm;
  prediction.grid_blocks = run.total_blocks;
  prediction.warps_per_block = run.warps_per_block;
  prediction.sampled = run.sampled;
  prediction.simulated_fraction = run.simulated_fraction;
  double spread_lines = 0;
  double spread_run_lines = 0;
  for (const auto& [run_lines, lines] : run.write_runs.spread_lines_by_run_lines) {
    spread_lines += lines;
    spread_run_lines += static_cast<double>(run_lines) * lines;
  }
  prediction.spread_write_fraction = ratio(spread_lines, run.write_runs.lines);
  prediction.spread_write_run_bytes = ratio(spread_run_lines, spread_lines) * profile.l2.line_bytes.value;
  prediction.spread_write_factor = spread_write_factor(profile, run);
  return prediction;
}

} // namespace detail

double Prediction::metric(std::string_view name) const {
  const auto found = metrics.find(name);
  if (found == metrics.end()) throw InputError("prediction has no metric '" + std::string(name) + "'");
  return found->second;
}

nlohmann::json summarised_loops_to_json(const std::vector<SummarisedLoop>& loops) {
  nlohmann::json json = nlohmann::json::array();
  for (const SummarisedLoop& loop : loops) {
    json.push_back({{"loop", loop.location},
                    {"runs", loop.runs},
                    {"trips_interpreted", loop.trips_interpreted},
                    {"trips_extrapolated", loop.trips_skipped}});
  }
  return json;
}

nlohmann::json prediction_to_json(const Prediction& prediction) {
  // The hardware counts events and bytes in whole numbers (the ".sum" metrics); rates and
  // ratios stay fractional. A sampled prediction's counts are the sample's, scaled up.
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [name, value] : prediction.metrics) {
    if (name.ends_with(".sum")) {
      metrics[name] = static_cast<std::int64_t>(std::llround(value));
    } else {
      metrics[name] = value;
    }
  }
  nlohmann::json terms = nlohmann::json::object();
  for (const auto& [name, value] : prediction.time_terms_us) terms[name] = value;
  return {{"metrics", metrics},
          {"time_us", prediction.time_us},
          {"bottleneck", prediction.bottleneck},
          {"time_terms_us", terms},
          {"achieved_bandwidth_gb_per_s", prediction.achieved_bandwidth_gb_per_s},
          {"achieved_gflop_per_s", prediction.achieved_gflop_per_s},
          {"blocks_per_sm", prediction.blocks_per_sm},
          {"grid_blocks", prediction.grid_blocks},
          {"warps_per_block", prediction.warps_per_block},
          {"waves", prediction.waves},
          {"sampled", prediction.sampled},
          {"simulated_fraction", prediction.simulated_fraction},
          {"scale_factor", prediction.simulated_fraction > 0 ? 1.0 / prediction.simulated_fraction : 1.0},
          {"spread_write_fraction", prediction.spread_write_fraction},
          {"spread_write_run_bytes", prediction.spread_write_run_bytes},
          {"spread_write_factor", prediction.spread_write_factor}};
}

} // namespace cachewise
