// Stages: L1 hit latency, DRAM latency, and the timing overheads later stages classify with.
#include <algorithm>

#include "probe_stages.hpp"

namespace cachewise::probe::detail {

void Probe::l1_latency() {
  const Offsets order = shuffled(contiguous(0, 4 * kKiB, kNode));
  gpu::write_chain(*buffer_, order);
  gpu::ChaseOptions chase;
  chase.op = CacheOp::ca;
  chase.warm_hops = 256;
  chase.timed_hops = 4096;
  std::vector<double> samples;
  for (int r = 0; r < 2 * repeats(); ++r) samples.push_back(gpu::chase_mean_cycles(*buffer_, order.front(), chase));
  const Summary summary = summarize(samples);
  l1_hit_ = summary.median;
  profile_.l1.hit_latency_cycles = measured(
      l1_hit_, provenance_from("pointer chase, ld.global.ca, 4 KiB working set of 128 B nodes in random cyclic "
                               "order, clock64 over 4096 dependent loads; median of runs",
                               summary));
}

/// Latency of loads that all miss L2: chase fresh random lines right after evicting everything.
void Probe::dram_latency() {
  const std::uint64_t region = 6 * kGiB;
  const std::uint64_t flush_bytes = std::min<std::uint64_t>(4 * l2_reported(), 512 * kMiB);
  const Offsets lines = contiguous(region, 64 * kMiB, kNode);
  std::vector<double> samples;
  for (int r = 0; r < repeats(); ++r) {
    const Offsets order = sample(lines, 4096);
    gpu::write_chain(*buffer_, order);
    gpu::stream_through_l2(*buffer_, kFlushRegion, flush_bytes);
    gpu::ChaseOptions chase;
    chase.op = CacheOp::cg;
    chase.timed_hops = 4096;
    samples.push_back(gpu::chase_mean_cycles(*buffer_, order.front(), chase));
  }
  const Summary summary = summarize(samples);
  dram_ = summary.median;
  profile_.dram.latency_cycles = measured(
      dram_, provenance_from("pointer chase ld.global.cg over 4096 random lines of a 64 MiB region (within TLB "
                             "reach) right after streaming " +
                                 format_bytes(static_cast<double>(flush_bytes)) +
                                 " of other data through L2; every hop misses L2; median of runs",
                             summary));
  calibrate_per_hop_overhead();
  calibrate_script_overhead();
}

/// Cycles per-hop timing (chase_per_hop: a shared store and two clock reads around each load)
/// adds over a plain chase: both chase the same 2048 lines from the home SM right after each
/// other, so both see the same L2 state (the plain chase's laps leave the lines near).
void Probe::calibrate_per_hop_overhead() {
  const Offsets resident = sample(contiguous(0, 1 * kMiB, kNode), 2048);
  gpu::write_chain(*buffer_, resident);
  gpu::ChaseOptions chase;
  chase.op = CacheOp::cg;
  chase.warm_hops = static_cast<std::int64_t>(resident.size());
  chase.timed_hops = 4 * static_cast<std::int64_t>(resident.size());
  chase.sm = home_sm_;
  const double plain = gpu::chase_mean_cycles(*buffer_, resident.front(), chase);
  const std::vector<std::uint32_t> hops =
      gpu::chase_per_hop(*buffer_, resident.front(), static_cast<int>(resident.size()), home_sm_);
  overhead_ = std::max(0.0, median(std::vector<double>(hops.begin(), hops.end())) - plain);
}

/// Cycles a script's timed load adds over the same load in a plain chase (loop, shared store,
/// clock reads), measured on L1 hits.
void Probe::calibrate_script_overhead() {
  const std::uint64_t line = kScriptCalibrationRegion;
  buffer_->zero(line, kNode);
  std::vector<gpu::ScriptStep> steps{{gpu::Op::load_ca, line, false}};
  for (int i = 0; i < 16; ++i) steps.push_back({gpu::Op::load_ca, line, true});
  const std::vector<std::uint32_t> cycles = gpu::run_script(*buffer_, steps, home_sm_);
  script_overhead_ = std::max(0.0, median(std::vector<double>(cycles.begin(), cycles.end())) - l1_hit_);
}

/// Hits are below the midpoint between the slowest L2 hit and DRAM, near hits below the midpoint
/// between near and the slowest hit, both shifted by the per-hop timing overhead.
Probe::HopStats Probe::classify_hops(const std::vector<std::uint32_t>& hops) const {
  HopStats stats;
  const double hit_miss = 0.5 * (l2_slowest_hit_ + dram_) + overhead_;
  const double near_far = 0.5 * (l2_near_ + l2_slowest_hit_) + overhead_;
  for (std::uint32_t cycles : hops) {
    stats.mean += cycles;
    if (cycles < hit_miss) stats.hit_fraction += 1;
    if (cycles < near_far) stats.near_fraction += 1;
  }
  const auto count = static_cast<double>(hops.size());
  stats.mean /= count;
  stats.hit_fraction /= count;
  stats.near_fraction /= count;
  return stats;
}

} // namespace cachewise::probe::detail
