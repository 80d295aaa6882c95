// Stages: per-address L2 near/far latency, partitions and interleave, SM placement.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "probe_stages.hpp"

namespace cachewise::probe::detail {

/// The near/far classes of addresses 32 B apart, from self-pointers timed on the home SM: every
/// load after a line's first is served from the home SM's partition (a far line's near copy), so
/// these latencies separate the two partitions' lines by a few tens of cycles only; the classes,
/// not the levels, are what the partition, interleave and placement tests use. The levels come
/// from the first-touch test (l2_first_touch) and the full-cycle chase (l2_chase).
void Probe::l2_near_far() {
  const std::uint64_t region = 5 * kGiB;
  const std::uint64_t span = quick() ? 256 * kKiB : 1 * kMiB;
  const Offsets addresses = contiguous(region, span, kSector);
  gpu::write_self_loops(*buffer_, addresses);
  const std::vector<double> latencies = gpu::self_loop_latencies(*buffer_, addresses, home_sm_);
  add_curve("L2 per-address latency from the home SM", "bytes (offset)", kLatencyUnit, [&] {
    std::vector<Point> points;
    for (std::size_t i = 0; i < latencies.size() && i < 2048; ++i) {
      points.emplace_back(static_cast<double>(addresses[i] - region), latencies[i]);
    }
    return points;
  }());
  const TwoClusters clusters = split_two_clusters(latencies);
  l2_near_ = clusters.low.median;
  l2_far_ = clusters.high.median;
  l2_slowest_hit_ = l2_far_;
  std::vector<int> classes;
  for (double latency : latencies) classes.push_back(latency <= clusters.threshold ? 0 : 1);
  near_far_addresses_ = addresses;
  near_far_classes_ = classes;
  double most_flipped = 0;
  const std::string other_sms = compare_classes_on_other_sms(classes, most_flipped);
  record_partitions(clusters, classes, other_sms, most_flipped);
  l2_first_touch();
}

/// The same addresses from other SMs: an SM in the other partition sees near and far swapped.
/// Returns "SM s: share%, ..." and sets the largest share of flipped classes.
std::string Probe::compare_classes_on_other_sms(const std::vector<int>& classes, double& most_flipped) {
  std::ostringstream other_sms;
  const std::size_t compared = std::min<std::size_t>(near_far_addresses_.size(), 1024);
  const Offsets head(near_far_addresses_.begin(), near_far_addresses_.begin() + static_cast<std::ptrdiff_t>(compared));
  most_flipped = 0;
  const std::size_t others = quick() ? 3 : 7;
  for (std::size_t k = 1; k <= others && sm_ids_.size() > others; ++k) {
    const int sm = sm_ids_[k * sm_ids_.size() / (others + 1)];
    const std::optional<std::vector<int>> theirs = near_far_classes_from(sm, head);
    std::size_t flipped = 0;
    for (std::size_t i = 0; theirs && i < compared; ++i) flipped += (*theirs)[i] != classes[i];
    const double share = static_cast<double>(flipped) / static_cast<double>(compared);
    most_flipped = std::max(most_flipped, share);
    other_sms << (k > 1 ? ", " : "") << "SM " << sm << ": " << format_number(100 * share, 0) << "%";
  }
  return other_sms.str();
}

/// Partitions, interleave and the self-pointer levels (written here, replaced by the first-touch
/// test and the chase when they find two levels).
void Probe::record_partitions(const TwoClusters& clusters, const std::vector<int>& classes,
                              const std::string& other_sms, double most_flipped) {
  // Two partitions when the split is real: the classes are stable and an SM elsewhere sees them
  // swapped (the near/far gap of these repeated loads is small, so the separation alone is weak).
  const bool two_groups = clusters.separation > 1.5;
  const bool swapped_elsewhere = most_flipped > 0.7;
  partition_method_ = "self-pointer test from SM " + std::to_string(home_sm_) + " (block pinned by %smid): each of " +
                      std::to_string(classes.size()) +
                      " addresses 32 B apart holds a self-pointer, 16 dependent "
                      "ld.global.cg after 2 warming loads, timing frame included: " +
                      format_number(clusters.low.median) + " / " + format_number(clusters.high.median) +
                      " cycles, two-means split at " + format_number(clusters.threshold) + " (separation " +
                      format_number(clusters.separation) +
                      "); share of addresses whose class flips when timed "
                      "from other SMs (each split at its own threshold): " +
                      other_sms;
  auto provenance_of = [&](const Summary& summary) {
    Provenance provenance = provenance_from(partition_method_, summary);
    provenance.confidence = Confidence::low; // levels of the near copy, timing frame included
    return provenance;
  };
  profile_.l2.near_hit_latency_cycles = measured(l2_near_, provenance_of(clusters.low));
  profile_.l2.far_hit_latency_cycles = measured(l2_far_, provenance_of(clusters.high));
  near_fraction_ = clusters.low_fraction;
  profile_.l2.partitions = two_groups && swapped_elsewhere ? 2 : 1;

  const std::optional<double> granularity = interleave_granularity(classes, kSector);
  std::vector<Point> agreement;
  for (std::size_t d = 1; d <= classes.size() / 16; d *= 2) {
    agreement.emplace_back(static_cast<double>(d * kSector), pair_agreement(classes, d));
  }
  add_curve("L2 near/far class agreement of address pairs", "bytes (pair distance)", "fraction agreeing", agreement);
  if (granularity && profile_.l2.partitions == 2) {
    profile_.l2.slice_interleave_bytes = measured(
        *granularity, {"address-pair test on the near/far classes above: pairs (a, a+d), a a multiple of 2d, "
                       "always agree below the interleave granularity; value = smallest d with agreement < 90% "
                       "(partition hash granularity as seen from one SM)",
                       static_cast<std::int64_t>(classes.size()), 0.0,
                       clusters.separation < 3.0 ? Confidence::low : Confidence::medium});
  }
}

/// Per-address near and far latency: after evicting L2, whole sectors of random lines are stored
/// (L2 allocates them in their home partition, no DRAM fill), then the home SM times its first
/// load of each line once, the empty timing frame subtracted: lines homed in its partition come
/// back at the near latency, the others at the far one (before any near copy exists).
void Probe::l2_first_touch() {
  const std::size_t count = quick() ? 512 : static_cast<std::size_t>(gpu::kMaxFirstLoads);
  const Offsets lines = sample(contiguous(kFirstTouchRegion, 2 * kMiB, kNode), count);
  // The empty frame (a register move) does not cost what a load's frame costs: the frame's
  // overhead is calibrated by an L1 hit in the same frame against the L1 chase's latency.
  const double residual = first_touch_overhead_check() - l1_hit_;
  flush_l2();
  gpu::store_sectors(*buffer_, lines);
  const gpu::FirstLoadTimes times = gpu::first_load_cycles(*buffer_, lines, CacheOp::cg, home_sm_);
  const double empty = median(std::vector<double>(times.empty_frame.begin(), times.empty_frame.end()));
  std::vector<double> first;
  std::vector<double> second;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    first.push_back(static_cast<double>(times.first[i]) - empty - residual);
    second.push_back(static_cast<double>(times.second[i]) - empty - residual);
  }
  std::vector<Point> curve;
  for (std::size_t i = 0; i < first.size(); ++i) curve.emplace_back(static_cast<double>(i), first[i]);
  add_curve("L2 first-touch latency per line from the home SM (timing frame subtracted)", "line (test order)",
            kLatencyUnit, curve);
  if (std::ranges::min(first) == std::ranges::max(first)) return;
  const TwoClusters clusters = split_two_clusters(first);
  std::vector<double> second_near;
  std::vector<double> second_far;
  for (std::size_t i = 0; i < first.size(); ++i)
    (first[i] <= clusters.threshold ? second_near : second_far).push_back(second[i]);
  std::ostringstream method;
  method << "first-touch test from SM " << home_sm_ << ": L2 evicted, whole 32 B sectors of " << lines.size()
         << " random 128 B lines of a 2 MiB region stored (st.global.cg, all SMs), then one timed ld.global.cg of "
         << "each line, minus the timing frame (the same frame around a register move: " << format_number(empty)
         << " cycles, median, corrected by an L1 hit in the frame: " << format_number(residual)
         << " cycles against the L1 chase's " << format_number(l1_hit_) << "); two-means split: near "
         << format_number(clusters.low.median) << ", far " << format_number(clusters.high.median) << " cycles ("
         << format_number(100 * clusters.low_fraction, 0) << "% near, separation " << format_number(clusters.separation)
         << "); a second load right after: " << format_number(second_near.empty() ? 0.0 : median(second_near)) << " / "
         << format_number(second_far.empty() ? 0.0 : median(second_far)) << " cycles (the far lines' near copy)";
  first_touch_ = clusters;
  first_touch_method_ = method.str();
  Provenance near = provenance_from(first_touch_method_, clusters.low);
  Provenance far = provenance_from(first_touch_method_, clusters.high);
  near.confidence = weakest(near.confidence, Confidence::medium); // one method until the chase agrees
  far.confidence = weakest(far.confidence, Confidence::medium);
  profile_.l2.near_hit_latency_cycles = measured(clusters.low.median, near);
  profile_.l2.far_hit_latency_cycles = measured(clusters.high.median, far);
  l2_near_ = clusters.low.median;
  l2_far_ = clusters.high.median;
  l2_slowest_hit_ = l2_far_;
}

/// An L1 hit timed in the first-touch test's frame, minus its empty frame (median cycles): the
/// L1 chase's latency when the empty frame is all the timing costs.
double Probe::first_touch_overhead_check() {
  const Offsets lines = sample(contiguous(kFirstTouchRegion + 4 * kMiB, 1 * kMiB, kNode), 256);
  gpu::store_sectors(*buffer_, lines);
  const gpu::FirstLoadTimes times = gpu::first_load_cycles(*buffer_, lines, CacheOp::ca, home_sm_);
  std::vector<double> hits;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    hits.push_back(static_cast<double>(times.second[i]) - static_cast<double>(times.empty_frame[i]));
  }
  return median(hits);
}

/// Near (0) / far (1) class of each address as timed from `sm`, split at that SM's own
/// two-means threshold: both groups' latencies shift by up to ~20 cycles from SM to SM (H200,
/// docs/history.md, "The probe"), enough to misclassify at another SM's threshold.
/// nullopt when all its latencies are equal.
std::optional<std::vector<int>> Probe::near_far_classes_from(int sm, const Offsets& addresses) {
  const std::vector<double> latencies = gpu::self_loop_latencies(*buffer_, addresses, sm);
  if (std::ranges::min(latencies) == std::ranges::max(latencies)) return std::nullopt;
  const double threshold = split_two_clusters(latencies).threshold;
  std::vector<int> classes;
  for (double latency : latencies) classes.push_back(latency <= threshold ? 0 : 1);
  return classes;
}

/// Every SM times the head of the near/far addresses and splits them at its own threshold; its
/// classes against the home SM's give its near partition. One block per SM records where the
/// hardware deals the blocks of a wave. Together: the partition the i-th block of a wave sees
/// as near (the model's placement of blocks on partitions).
void Probe::sm_placement() {
  if (profile_.l2.partitions < 2 || near_far_classes_.empty()) return; // one partition: all near
  const std::size_t compared = std::min<std::size_t>(near_far_addresses_.size(), quick() ? 256 : 512);
  const Offsets head(near_far_addresses_.begin(), near_far_addresses_.begin() + static_cast<std::ptrdiff_t>(compared));
  const std::vector<int> home_classes(near_far_classes_.begin(),
                                      near_far_classes_.begin() + static_cast<std::ptrdiff_t>(compared));
  std::vector<std::vector<int>> classes_by_sm;
  for (int sm : sm_ids_) {
    std::optional<std::vector<int>> classes = near_far_classes_from(sm, head);
    // No near/far split to read on an SM: no map at all (the model keeps its default
    // placement) rather than a guessed side.
    if (!classes) return;
    classes_by_sm.push_back(std::move(*classes));
  }
  const PartitionSides sides = partition_sides(home_classes, classes_by_sm);
  SmPlacement placement;
  placement.near_partition_by_sm.assign(static_cast<std::size_t>(sm_ids_.back()) + 1, 0);
  for (std::size_t i = 0; i < sm_ids_.size(); ++i) {
    placement.near_partition_by_sm[static_cast<std::size_t>(sm_ids_[i])] = sides.side[i];
  }
  // The first block's SM rotates from launch to launch; the order around the cycle is what the
  // model uses, so the first launch is kept and the others say how alike they are.
  const auto one_per_sm = [&](std::vector<int> order) {
    std::ranges::sort(order);
    return std::unique(order.begin(), order.end()) == order.end() && static_cast<int>(order.size()) == sm_count() &&
           order.front() >= 0 && order.back() <= sm_ids_.back();
  };
  std::vector<double> same_side_shares;
  for (int launch = 0; launch < repeats(); ++launch) {
    SmPlacement this_launch{gpu::block_dispatch_order(), placement.near_partition_by_sm, {}};
    if (!one_per_sm(this_launch.dispatch_sm_ids))
      return; // blocks shared an SM: no order to read, the model keeps its default
    const std::size_t pairs = this_launch.dispatch_sm_ids.size() - 1;
    same_side_shares.push_back(pairs == 0 ? 1.0
                                          : neighbours_sharing_a_partition(this_launch) / static_cast<double>(pairs));
    if (launch == 0) placement.dispatch_sm_ids = std::move(this_launch.dispatch_sm_ids);
  }
  const Summary same_side = summarize(same_side_shares);
  const std::int64_t others = static_cast<std::int64_t>(sm_ids_.size());
  placement.provenance = {
      "per-SM near/far classes of the first " + std::to_string(compared) +
          " near/far addresses (self-pointers 32 B apart, "
          "16 dependent ld.global.cg each after 2 warming loads, every SM split at its own two-means threshold): an SM "
          "whose classes differ from SM " +
          std::to_string(home_sm_) +
          "'s on more than half is near to the other "
          "partition (" +
          std::to_string(std::ranges::count(sides.side, 1)) + " of " + std::to_string(others) +
          " SMs; largest share of addresses against an SM's own side " + format_number(100 * sides.ambiguity) +
          "%); dispatch order: %smid of each block of a launch of one block per SM (the block takes the most "
          "dynamic shared memory allowed), the first of " +
          std::to_string(repeats()) +
          " launches; consecutive blocks "
          "on the same near partition: " +
          format_number(100 * same_side.median) + "% (median of the launches)",
      others, same_side.spread,
      sides.ambiguity < 0.2    ? Confidence::high
      : sides.ambiguity < 0.35 ? Confidence::medium
                               : Confidence::low};
  profile_.l2.sm_placement = std::move(placement);
}

} // namespace cachewise::probe::detail
