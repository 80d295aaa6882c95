// Stages: L1 and L2 capacities (working-set sweeps, hit fractions).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "probe_stages.hpp"

namespace cachewise::probe::detail {

/// Latency vs working set with ld.global.ca, refined near the knee; returns (capacity, curve).
std::pair<Measured, std::vector<Point>> Probe::l1_sweep(int carveout) {
  const std::vector<double> coarse_kib =
      quick() ? std::vector<double>{16, 64, 128, 160, 192, 224, 256, 320, 512}
              : std::vector<double>{8, 16, 32, 64, 96, 128, 160, 176, 192, 208, 224, 240, 256, 288, 320, 384, 512};
  const int runs = quick() ? 1 : 3;
  std::vector<Point> curve;
  auto measure_at = [&](double kib) {
    const Offsets order = shuffled(contiguous(0, static_cast<std::uint64_t>(kib * kKiB), kNode));
    curve.emplace_back(kib * kKiB, chase_cycle(order, CacheOp::ca, runs, carveout));
  };
  for (double kib : coarse_kib) measure_at(kib);
  const double step = quick() ? 8.0 * kKiB : 4.0 * kKiB;
  std::optional<Rise> rise = find_rise(curve);
  if (!rise) {
    return {measured(curve.back().first, low("no L1 knee found up to the largest working set")), curve};
  }
  for (double x : grid(rise->last_flat_x + step, rise->first_risen_x - step, step)) measure_at(x / kKiB);
  std::ranges::sort(curve, {}, &Point::first);
  rise = find_rise(curve);
  const double capacity = rise->last_flat_x;
  std::ostringstream method;
  method << "working-set sweep, pointer chase ld.global.ca over 128 B nodes in random cyclic order (one warm "
            "traversal, then >= 2 timed), refined in "
         << step / kKiB << " KiB steps; capacity = last working set on the hit plateau ("
         << format_number(rise->base_level) << " cycles; first point above: " << format_bytes(rise->first_risen_x)
         << " at " << format_number(curve[rise->last_flat_index + 1].second) << " cycles)";
  const Confidence confidence = quick() ? Confidence::medium : Confidence::high;
  return {measured(capacity, {method.str(), static_cast<std::int64_t>(curve.size()), step / capacity, confidence}),
          curve};
}

void Probe::l1_capacity_default() {
  auto [capacity, curve] = l1_sweep(-1);
  profile_.l1.capacity_bytes = capacity;
  add_curve("L1 chase (default carveout)", kWorkingSetUnit, kLatencyUnit, curve);
}

void Probe::l1_capacity_max_carveout() {
  auto [capacity, curve] = l1_sweep(0);
  capacity.provenance.method = "carveout 0 (max L1): " + capacity.provenance.method;
  profile_.l1.capacity_max_carveout_bytes = capacity;
  add_curve("L1 chase (max L1 carveout)", kWorkingSetUnit, kLatencyUnit, curve);
}

/// Warms [0, working_set), then times random lines of it from the home SM, one hop at a time.
Probe::HopStats Probe::l2_point(std::uint64_t working_set, Warm warm) {
  const Offsets order = sample(contiguous(0, working_set, kNode), gpu::kMaxTimedHops);
  if (warm == Warm::stores) {
    buffer_->zero(0, working_set);
    gpu::write_chain(*buffer_, order);
  } else {
    gpu::write_chain(*buffer_, order);
    gpu::stream_through_l2(*buffer_, 0, working_set);
    gpu::stream_through_l2(*buffer_, 0, working_set);
  }
  return classify_hops(gpu::chase_per_hop(*buffer_, order.front(), static_cast<int>(order.size()), home_sm_));
}

/// Latency vs working set, refined near the knee. Each point averages l2_point_repeats() samples
/// of 4096 lines (fresh warm-up and lines each): the hit-fraction capacity rests on these.
Probe::L2Sweep Probe::l2_sweep(Warm warm) {
  const std::vector<double> coarse_mib =
      quick() ? std::vector<double>{4, 16, 32, 48, 64, 96, 128, 256}
              : std::vector<double>{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 192, 256};
  L2Sweep sweep;
  auto measure_at = [&](double mib) {
    const auto bytes = static_cast<std::uint64_t>(mib * kMiB);
    HopStats mean;
    for (int r = 0; r < l2_point_repeats(); ++r) {
      const HopStats stats = l2_point(bytes, warm);
      mean.mean += stats.mean / l2_point_repeats();
      mean.hit_fraction += stats.hit_fraction / l2_point_repeats();
      mean.near_fraction += stats.near_fraction / l2_point_repeats();
    }
    sweep.latency.emplace_back(static_cast<double>(bytes), mean.mean);
    sweep.hits.emplace_back(static_cast<double>(bytes), mean.hit_fraction);
    sweep.near_hits.emplace_back(static_cast<double>(bytes), mean.near_fraction);
  };
  for (double mib : coarse_mib) measure_at(mib);
  sweep.rise = find_rise(sweep.latency, 0.05);
  if (sweep.rise) {
    for (double x : grid(sweep.rise->last_flat_x / kMiB + l2_step_mib(),
                         sweep.rise->first_risen_x / kMiB - l2_step_mib(), l2_step_mib())) {
      measure_at(x);
    }
    sweep.rise = find_rise(sweep.latency, 0.05);
  }
  std::ranges::sort(sweep.latency, {}, &Point::first);
  std::ranges::sort(sweep.hits, {}, &Point::first);
  std::ranges::sort(sweep.near_hits, {}, &Point::first);
  // Plateau: the points up to half the knee (half the reported size without one).
  const double plateau_end = 0.5 * (sweep.rise ? sweep.rise->last_flat_x : static_cast<double>(l2_reported()));
  sweep.by_hits = capacity_from_hit_curve(sweep.hits, plateau_end);
  return sweep;
}

void Probe::l2_capacity() {
  // Stores put each line in L2 once; reads from every SM also leave copies of far lines in the
  // readers' near partitions, so less distinct data fits. The first is the capacity.
  const L2Sweep stored = l2_sweep(Warm::stores);
  const L2Sweep read = l2_sweep(Warm::reads);
  add_curve("L2 chase, one SM (warmed by stores)", kWorkingSetUnit, kLatencyUnit, stored.latency);
  add_curve("L2 chase, one SM (warmed by reads from all SMs)", kWorkingSetUnit, kLatencyUnit, read.latency);
  add_curve("L2 hit fraction, one SM (warmed by stores)", "bytes (working set)", "fraction", stored.hits);
  add_curve("L2 hit fraction, one SM (warmed by reads from all SMs)", "bytes (working set)", "fraction", read.hits);
  add_curve("L2 near-hit fraction, one SM (warmed by stores)", "bytes (working set)", "fraction", stored.near_hits);

  const L2Sweep& primary = stored.by_hits || !read.by_hits ? stored : read;
  const L2Sweep& other = &primary == &stored ? read : stored;
  const std::string primary_warm = &primary == &stored ? "cudaMemset of the working set (stores)"
                                                       : "every SM streaming the working set with ld.global.cg "
                                                         "(the store-warmed hit fractions gave no estimate)";
  std::ostringstream method;
  method << "working-set sweep 1..256 MiB: warm by " << primary_warm << ", then time " << gpu::kMaxTimedHops
         << " random lines of it one by one from one pinned SM with ld.global.cg (" << l2_point_repeats()
         << " samples per point, fresh lines each; a hit is faster than midway between the slowest L2 hit level, "
         << format_number(l2_slowest_hit_) << " cycles, and DRAM, " << format_number(dram_)
         << ", plus the per-hop timing overhead, " << format_number(overhead_)
         << "); capacity = W x hit fraction / "
            "plateau hit fraction for the points past the knee (relative hit fraction 0.1..0.8; a random line of "
            "W > C hits with probability C / W), median over those points, rounded to "
         << format_bytes(l2_capacity_step_bytes());
  auto describe = [&](const L2Sweep& sweep) {
    std::ostringstream text;
    if (sweep.by_hits) {
      text << format_bytes(sweep.by_hits->capacity.median) << " (plateau hit fraction "
           << format_number(sweep.by_hits->plateau_hit_fraction, 3) << ", " << sweep.by_hits->capacity.samples
           << " points, spread " << format_number(100 * sweep.by_hits->capacity.spread) << "%)";
    } else {
      text << "no estimate";
    }
    text << "; latency knee (last point on the plateau, " << format_number(l2_step_mib(), 0)
         << " MiB refinement): " << (sweep.rise ? format_bytes(sweep.rise->last_flat_x) : "none");
    return text.str();
  };
  method << ": " << describe(primary) << "; warmed the other way: " << describe(other);
  record_l2_capacity(primary, method.str());
  record_near_capacity(stored);
}

/// The whole L2: the full-cycle chase's step from its last L2 plateau to DRAM (a random cyclic
/// chase reuses each line only after the whole working set, so it hits until W passes the
/// capacity and then misses almost everything: the sharpest step of any method), cross-checked
/// by the hit-fraction estimate. Without a chase step: the hit-fraction estimate, else the knee.
void Probe::record_l2_capacity(const L2Sweep& primary, const std::string& method_text) {
  const double step = l2_capacity_step_bytes();
  if (chase_.total_step) {
    const double capacity = chase_.total_step->last_flat_x;
    std::ostringstream method;
    method << "full-cycle chase from SM " << home_sm_ << ": the largest working set on its last L2 plateau, "
           << format_bytes(capacity) << " (DRAM from " << format_bytes(chase_.total_step->first_risen_x) << ")";
    Confidence confidence = quick() ? Confidence::medium : Confidence::high;
    if (primary.by_hits) {
      const double by_hits = primary.by_hits->capacity.median;
      const bool agrees = std::abs(by_hits - capacity) <= 0.1 * capacity;
      method << "; cross-check by hit fractions (" << method_text
             << "): " << format_number(100 * (by_hits - capacity) / capacity) << "% ("
             << (agrees ? "agrees" : "DISAGREES") << ")";
      if (!agrees) confidence = Confidence::low;
    } else {
      method << "; no hit-fraction estimate to cross-check (" << method_text << ")";
      confidence = weakest(confidence, Confidence::medium);
    }
    profile_.l2.capacity_bytes =
        measured(capacity, {method.str(), primary.by_hits ? primary.by_hits->capacity.samples : 0, 0.0, confidence});
    return;
  }
  std::string method = method_text + "; no full-cycle chase step";
  if (!primary.by_hits) {
    const double fallback = primary.rise ? primary.rise->last_flat_x : static_cast<double>(l2_reported());
    profile_.l2.capacity_bytes =
        measured(fallback, low(method + "; no hit-fraction estimate, " +
                               (primary.rise ? "the latency knee written" : "the reported size written")));
    return;
  }
  const Summary& estimate = primary.by_hits->capacity;
  const double capacity = std::max(step, std::round(estimate.median / step) * step);
  Confidence confidence = weakest(confidence_from_spread(estimate.spread), Confidence::medium);
  // The latency knee should sit at or a little below the estimate (eviction starts before W = C).
  if (!primary.rise || primary.rise->last_flat_x > capacity + step || primary.rise->last_flat_x < 0.8 * capacity) {
    method += "; the knee does not bracket the estimate";
    confidence = Confidence::low;
  }
  profile_.l2.capacity_bytes = measured(capacity, {method, estimate.samples, estimate.spread, confidence});
}

/// The SM's near partition: the full-cycle chase's near step (the largest working set still at
/// the near latency), cross-checked by the store-warmed sweep's near hits (W x near fraction /
/// plateau hit fraction past the whole L2's knee). Without a near step: capacity / partitions.
void Probe::record_near_capacity(const L2Sweep& stored) {
  const std::optional<Summary> by_hits =
      stored.by_hits
          ? near_capacity_from_hit_curves(stored.hits, stored.near_hits, stored.by_hits->plateau_hit_fraction)
          : std::nullopt;
  const std::string hits_text = by_hits ? format_bytes(by_hits->median) + " (" + std::to_string(by_hits->samples) +
                                              " points, spread " + format_number(100 * by_hits->spread) + "%)"
                                        : std::string("no estimate");
  if (chase_.near_step) {
    const Step& step = *chase_.near_step;
    // A partition holds no more than the whole L2 (the profile format requires it).
    const double value = std::min(step.last_flat_x, profile_.l2.capacity_bytes.value);
    const std::string clamped = value < step.last_flat_x ? "; above the whole L2's capacity, that written instead" : "";
    const bool bracketed =
        by_hits && by_hits->median >= 0.9 * step.last_flat_x && by_hits->median <= 1.1 * step.first_risen_x;
    Confidence confidence = Confidence::medium; // one method
    if (by_hits) confidence = !bracketed ? Confidence::low : quick() ? Confidence::medium : Confidence::high;
    profile_.l2.near_capacity_bytes = measured(
        value, {"full-cycle chase from SM " + std::to_string(home_sm_) + ": last working set on the near plateau (" +
                    format_bytes(step.last_flat_x) + "; next point " + format_bytes(step.first_risen_x) +
                    "); cross-check by near hits of the store-warmed sweep past the L2 knee (W x near fraction / "
                    "plateau hit fraction): " +
                    hits_text + (bracketed ? " (agrees)" : " (DISAGREES)") + clamped,
                static_cast<std::int64_t>(chase_.near->points), 0.0, clamped.empty() ? confidence : Confidence::low});
    return;
  }
  // Without a chase step: the share of addresses near to the home SM, of the capacity. A share
  // within 5 points of an even split is taken as one (capacity x 47-49% straddles a rounding
  // boundary from run to run, capacity / partitions does not).
  const double step = l2_capacity_step_bytes();
  const double partitions = std::max(1, profile_.l2.partitions);
  const bool even_split = std::abs(near_fraction_ - 1.0 / partitions) <= 0.05;
  const double near = even_split ? std::round(profile_.l2.capacity_bytes.value / partitions / step) * step
                                 : std::round(profile_.l2.capacity_bytes.value * near_fraction_ / step) * step;
  profile_.l2.near_capacity_bytes = measured(
      near, {std::string(even_split ? "capacity / partitions: the share of addresses near to the home SM ("
                                    : "capacity x share of addresses near to the home SM (") +
                 format_number(100 * near_fraction_) + "%, per-address test)" +
                 (even_split ? " is an even split within 5 points" : "") + ", rounded to " + format_bytes(step) +
                 "; the full-cycle chase found no near step; near hits of the store-warmed sweep: " + hits_text,
             static_cast<std::int64_t>(stored.latency.size()), 0.0,
             profile_.l2.partitions == 2 ? Confidence::medium : Confidence::low});
}

} // namespace cachewise::probe::detail
