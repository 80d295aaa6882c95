// Helpers the stages share: chains of nodes, the L2 flush, curves, bandwidth samples.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_set>

#include "probe_stages.hpp"

namespace cachewise::probe::detail {

/// Offsets [first, first + bytes) every `spacing` bytes.
Offsets Probe::contiguous(std::uint64_t first, std::uint64_t bytes, std::uint64_t spacing) {
  Offsets offsets;
  for (std::uint64_t offset = first; offset + spacing <= first + bytes; offset += spacing) offsets.push_back(offset);
  return offsets;
}

Offsets Probe::shuffled(Offsets offsets) {
  std::shuffle(offsets.begin(), offsets.end(), random_);
  return offsets;
}

/// `count` distinct entries of `offsets`, in random order.
Offsets Probe::sample(const Offsets& offsets, std::size_t count) {
  if (count >= offsets.size()) return shuffled(offsets);
  std::unordered_set<std::size_t> chosen;
  Offsets picked;
  std::uniform_int_distribution<std::size_t> pick(0, offsets.size() - 1);
  while (picked.size() < count) {
    const std::size_t index = pick(random_);
    if (chosen.insert(index).second) picked.push_back(offsets[index]);
  }
  return picked;
}

/// M aligned blocks of `block` bytes at random, well spread positions of [first, first + span):
/// the span is cut into M equal slots and each slot holds one block at a random aligned place.
Offsets Probe::random_blocks(std::uint64_t first, std::uint64_t span, std::uint64_t block, std::uint64_t count,
                             std::uint64_t node_spacing) {
  Offsets offsets;
  const std::uint64_t slot = span / count / block * block;
  if (slot < block) throw std::runtime_error("random_blocks: span too small");
  std::uniform_int_distribution<std::uint64_t> place(0, slot / block - 1);
  for (std::uint64_t m = 0; m < count; ++m) {
    const std::uint64_t start = first + m * slot + place(random_) * block;
    for (std::uint64_t offset = 0; offset < block; offset += node_spacing) offsets.push_back(start + offset);
  }
  return offsets;
}

/// Mean cycles per hop of a full-cycle chase through `order` (one warm traversal, then at least
/// two timed ones); the median over `runs` runs of the same chain.
double Probe::chase_cycle(const Offsets& order, CacheOp op, int runs, int carveout) {
  gpu::write_chain(*buffer_, order);
  gpu::ChaseOptions chase;
  chase.op = op;
  chase.warm_hops = static_cast<std::int64_t>(order.size());
  chase.timed_hops = std::max<std::int64_t>(2 * static_cast<std::int64_t>(order.size()), 2048);
  chase.l1_carveout_percent = carveout;
  std::vector<double> values;
  for (int r = 0; r < runs; ++r) values.push_back(gpu::chase_mean_cycles(*buffer_, order.front(), chase));
  return median(values);
}

/// Evicts L2 by streaming several times its size of unrelated data through it.
void Probe::flush_l2() {
  gpu::stream_through_l2(*buffer_, kFlushRegion, std::min<std::uint64_t>(4 * l2_reported(), 512 * kMiB));
}

void Probe::add_curve(std::string name, std::string x_unit, std::string y_unit, std::vector<Point> points) {
  std::ranges::sort(points, {}, &Point::first);
  profile_.curves.push_back({std::move(name), std::move(x_unit), std::move(y_unit), std::move(points)});
}

/// Bandwidth samples (GB/s) of one configuration.
Summary Probe::bandwidth(const gpu::BandwidthRun& run) {
  const std::uint64_t moved = gpu::bandwidth_bytes_moved(run);
  std::vector<double> rates;
  for (double seconds : gpu::bandwidth_seconds(*buffer_, run)) rates.push_back(gb_per_s(moved, seconds));
  return summarize(rates);
}

/// Passes so that one launch moves about `target` bytes.
int Probe::passes_for(std::uint64_t bytes_per_pass, double target) {
  return std::max(1, static_cast<int>(target / static_cast<double>(bytes_per_pass)));
}

/// Folds a second method's knee into a capacity's provenance: agreement within one bracket of
/// the coarser sweep keeps the confidence, disagreement lowers it.
void Probe::cross_check_capacity(Measured& capacity, const std::optional<Rise>& knee, const std::string& what) {
  if (!knee) {
    capacity.provenance.method += "; cross-check by " + what + ": no knee found";
    capacity.provenance.confidence = weakest(capacity.provenance.confidence, Confidence::medium);
    return;
  }
  const bool agrees = capacity.value >= knee->last_flat_x * 0.9 && capacity.value <= knee->first_risen_x * 1.1;
  capacity.provenance.method += "; cross-check by " + what + ": knee between " + format_bytes(knee->last_flat_x) +
                                " and " + format_bytes(knee->first_risen_x) + (agrees ? " (agrees)" : " (DISAGREES)");
  if (!agrees) capacity.provenance.confidence = weakest(capacity.provenance.confidence, Confidence::low);
}

} // namespace cachewise::probe::detail
