// Stages: L1 and L2 sector, line and fill granularity (partial-line and block tests).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "probe_stages.hpp"

namespace cachewise::probe::detail {

/// Script-measured latencies of the second of two loads at offsets 0 and d of fresh lines.
std::vector<Point> Probe::partial_line_curve(std::uint64_t region, const std::vector<double>& offsets, bool through_l1,
                                             int lines) {
  std::vector<Point> curve;
  std::uint64_t line_base = region;
  for (double d : offsets) {
    std::vector<gpu::ScriptStep> steps;
    for (int i = 0; i < lines; ++i, line_base += 4 * kKiB) {
      const auto offset = static_cast<std::uint64_t>(d);
      if (through_l1) {
        steps.push_back({gpu::Op::load_cg, line_base, false});          // bring the line into L2
        steps.push_back({gpu::Op::load_cg, line_base + offset, false}); // and the tested part too
        steps.push_back({gpu::Op::load_ca, line_base, false});          // L1 miss: fills from L2
        steps.push_back({gpu::Op::load_ca, line_base + offset, true});  // hit iff it came with the fill
      } else {
        steps.push_back({gpu::Op::load_cg, line_base, false});         // L2 miss: fills from DRAM
        steps.push_back({gpu::Op::load_cg, line_base + offset, true}); // hit iff it came with the fill
      }
    }
    const std::vector<std::uint32_t> cycles = gpu::run_script(*buffer_, steps, home_sm_);
    curve.emplace_back(d, median(std::vector<double>(cycles.begin(), cycles.end())));
  }
  return curve;
}

/// Nodes of the block test: `fraction` of `capacity` as random aligned blocks of `block` bytes in
/// [0, span), a node every 32 B. Returns (footprint in bytes, nodes).
std::pair<double, Offsets> Probe::block_test_nodes(double capacity, double fraction, double block, std::uint64_t span) {
  const auto footprint = static_cast<std::uint64_t>(capacity * fraction);
  const std::uint64_t count = std::max<std::uint64_t>(1, footprint / static_cast<std::uint64_t>(block));
  return {static_cast<double>(count) * block,
          random_blocks(0, span, static_cast<std::uint64_t>(block), count, kSector)};
}

/// The line size from the block test's knees (see smallest_saturating_block); `method` describes
/// the test and gets the knees appended.
Measured Probe::line_from_block_test(const std::vector<Point>& knees, std::size_t blocks_tried, double sector,
                                     std::string method) {
  for (const auto& [block, knee] : knees) {
    method += ' ';
    method += format_number(block, 0);
    method += " B->";
    method += format_bytes(knee);
  }
  const std::optional<double> line = smallest_saturating_block(knees);
  if (!line || std::fmod(*line, sector) != 0.0) return measured(128, low(method + "; inconclusive, 128 B written"));
  return measured(*line, {method, static_cast<std::int64_t>(knees.size()), 0.0,
                          knees.size() == blocks_tried ? Confidence::high : Confidence::medium});
}

void Probe::l1_line() {
  // Sector: touch offset 0 of an L2-resident line through L1, then time offset d.
  const std::uint64_t region = 2 * kGiB;
  buffer_->zero(region, 64 * kMiB);
  const std::vector<double> offsets{8, 16, 32, 64, 96};
  const std::vector<Point> fill = partial_line_curve(region, offsets, true, 16);
  add_curve("L1 partial-line test (second load at offset d)", "bytes (offset)", kLatencyUnit, fill);
  const std::optional<double> sector = fill_granularity(fill, l1_miss_threshold_in_script());
  if (sector) {
    l1_sector_ = *sector;
    profile_.l1.sector_bytes =
        measured(*sector, {"partial-line test: load offset 0 of an L2-resident line with ld.global.ca, then time "
                           "offset d; offsets below the first L1 miss came with the fill (16 lines per offset, "
                           "median)",
                           16 * static_cast<std::int64_t>(offsets.size()), 0.0, Confidence::high});
  } else {
    l1_sector_ = kSector;
    profile_.l1.sector_bytes = measured(kSector, low("partial-line test inconclusive; 32 B assumed"));
  }

  // Line: the block test (see smallest_saturating_block).
  const double capacity = profile_.l1.capacity_bytes.value;
  const std::vector<double> blocks =
      quick() ? std::vector<double>{32, 64, 128, 256} : std::vector<double>{32, 64, 128, 256, 512};
  const std::vector<double> fractions =
      quick() ? std::vector<double>{0.125, 0.25, 0.375, 0.5, 0.75, 1, 1.25, 2}
              : std::vector<double>{0.0625, 0.125, 0.1875, 0.25,  0.3125, 0.375, 0.5, 0.625,
                                    0.75,   0.875, 1,      1.125, 1.25,   1.5,   2};
  std::vector<Point> knees;
  for (double block : blocks) {
    std::vector<Point> curve;
    for (double fraction : fractions) {
      const auto [footprint, nodes] = block_test_nodes(capacity, fraction, block, 64 * kMiB);
      curve.emplace_back(footprint, chase_cycle(shuffled(nodes), CacheOp::ca));
    }
    add_curve("L1 block test, " + format_number(block, 0) + " B blocks", "bytes (footprint)", kLatencyUnit, curve);
    const std::optional<Rise> rise = find_rise(curve);
    if (rise) knees.emplace_back(block, rise->last_flat_x);
  }
  profile_.l1.line_bytes = line_from_block_test(
      knees, blocks.size(), l1_sector_,
      "block test: random aligned blocks of B bytes, every 32 B of each chased with ld.global.ca; the footprint at "
      "the capacity knee grows with B until B reaches the line. Knees:");
}

void Probe::l2_line() {
  // Fill granularity: an L2 miss brings some bytes from DRAM; a second load at offset d hits
  // inside them.
  const std::uint64_t region = 5 * kGiB + 512 * kMiB;
  buffer_->zero(region, 64 * kMiB);
  flush_l2();
  const std::vector<double> offsets{8, 16, 32, 64, 96, 128};
  const std::vector<Point> fill = partial_line_curve(region, offsets, false, 16);
  add_curve("L2 partial-line test (second load at offset d, first missed to DRAM)", "bytes (offset)", kLatencyUnit,
            fill);
  const std::optional<double> granularity = fill_granularity(fill, l2_miss_threshold_in_script());
  const std::string fill_method =
      "partial-line test: after evicting L2, load offset 0 of a line with ld.global.cg (DRAM miss), then time "
      "offset d; offsets below the first miss came with the fill (16 lines per offset, median)";
  if (granularity) {
    profile_.l2.fill_granularity_bytes =
        measured(*granularity, {fill_method, 16 * static_cast<std::int64_t>(offsets.size()), 0.0, Confidence::high});
    profile_.dram.fetch_granularity_bytes =
        measured(*granularity, {"same test as l2.fill_granularity_bytes: the bytes one DRAM access brings into L2",
                                16 * static_cast<std::int64_t>(offsets.size()), 0.0, Confidence::medium});
  }
  // L2 serves L1 misses in sectors: the L1 partial-line test measures that unit.
  profile_.l2.sector_bytes = measured(
      l1_sector_, {"unit in which L2 serves an L1 miss (the L1 partial-line test); L2 valid bits are at most the "
                   "fill granularity apart",
                   profile_.l1.sector_bytes.provenance.samples, 0.0, Confidence::medium});

  // Line: the block test with L2 (warm by gathering every node, then sample).
  const double capacity = profile_.l2.capacity_bytes.value;
  const std::vector<double> blocks =
      quick() ? std::vector<double>{64, 128, 256} : std::vector<double>{32, 64, 128, 256, 512};
  const std::vector<double> fractions =
      quick() ? std::vector<double>{0.5, 1, 2} : std::vector<double>{0.25, 0.5, 1, 2, 4};
  std::vector<Point> knees;
  for (double block : blocks) {
    std::vector<Point> hit_curve;
    for (double fraction : fractions) {
      const auto [footprint, nodes] = block_test_nodes(capacity, fraction, block, 2 * kGiB);
      const Offsets order = sample(nodes, gpu::kMaxTimedHops);
      gpu::write_chain(*buffer_, order);
      gpu::gather_through_l2(*buffer_, nodes);
      gpu::gather_through_l2(*buffer_, nodes);
      const HopStats stats =
          classify_hops(gpu::chase_per_hop(*buffer_, order.front(), static_cast<int>(order.size()), home_sm_));
      hit_curve.emplace_back(footprint, stats.hit_fraction);
    }
    add_curve("L2 block test, " + format_number(block, 0) + " B blocks", "bytes (footprint)", "hit fraction",
              hit_curve);
    if (const std::optional<Summary> effective = capacity_from_hit_fractions(hit_curve, 0)) {
      knees.emplace_back(block, effective->median);
    }
  }
  profile_.l2.line_bytes = line_from_block_test(
      knees, blocks.size(), profile_.l2.sector_bytes.value,
      "block test: random aligned blocks of B bytes, every 32 B of each loaded into L2 (ld.global.cg gather), then "
      "random nodes timed from one pinned SM; effective capacity (hit fraction x footprint) grows with B until B "
      "reaches the line. Effective capacities:");
}

} // namespace cachewise::probe::detail
