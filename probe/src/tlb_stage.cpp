// Stage: TLB reach, page size and miss penalty.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "probe_stages.hpp"

namespace cachewise::probe::detail {

/// Chase through one node per `stride` (at a random line inside each stride) over `region` bytes.
double Probe::tlb_point(std::uint64_t region, std::uint64_t stride) {
  Offsets nodes;
  std::uniform_int_distribution<std::uint64_t> line(0, stride / kNode - 1);
  for (std::uint64_t page = 0; page + stride <= region; page += stride) nodes.push_back(page + line(random_) * kNode);
  return chase_cycle(shuffled(nodes), CacheOp::cg);
}

/// Swaps the shared buffer for the largest one the device has room for (leaving headroom for the
/// runtime), at least kBufferBytes (same fixed regions, zeroed). Returns its size.
std::uint64_t Probe::grow_buffer_for_tlb() {
  buffer_.reset();
  const std::uint64_t free_bytes = gpu::free_device_memory_bytes();
  const std::uint64_t headroom = std::max<std::uint64_t>(2 * kGiB, free_bytes / 20);
  std::uint64_t bytes = free_bytes > headroom ? (free_bytes - headroom) / kGiB * kGiB : 0;
  while (bytes > kBufferBytes) {
    try {
      buffer_ = std::make_unique<DeviceBuffer>(bytes);
      return bytes;
    } catch (const std::runtime_error&) {
      bytes = std::max(kBufferBytes, bytes / 4 * 3 / kGiB * kGiB);
    }
  }
  buffer_ = std::make_unique<DeviceBuffer>(kBufferBytes);
  return kBufferBytes;
}

/// Latency vs region of one chase per stride (the reach, coverage and penalty come from these).
std::vector<StrideCurve> Probe::tlb_curves(std::uint64_t largest) {
  // A node per stride s: with s at most the page the step sits at entries x page for every s;
  // larger strides step at entries x s, so the strides also bound the page size.
  const std::vector<std::uint64_t> strides =
      quick() ? std::vector<std::uint64_t>{2 * kMiB}
              : std::vector<std::uint64_t>{2 * kMiB, 32 * kMiB, 64 * kMiB, 128 * kMiB, 256 * kMiB, 512 * kMiB};
  std::vector<StrideCurve> curves;
  for (std::uint64_t stride : strides) {
    StrideCurve curve{static_cast<double>(stride), {}};
    // Doubling to 8 GiB, then 8 GiB steps: an H200 exploration saw the step between 64 and 128 GiB.
    std::uint64_t last = 0;
    for (std::uint64_t region = std::max(16 * kMiB, 8 * stride); region <= largest;
         region = region < 8 * kGiB ? 2 * region : region + 8 * kGiB) {
      curve.region_to_latency.emplace_back(static_cast<double>(region), tlb_point(region, stride));
      last = region;
    }
    if (last != 0 && last < largest) {
      curve.region_to_latency.emplace_back(static_cast<double>(largest), tlb_point(largest, stride));
    }
    if (curve.region_to_latency.empty()) continue;
    add_curve("TLB: chase one line per " + format_bytes(static_cast<double>(stride)) + " vs region", "bytes (region)",
              kLatencyUnit, curve.region_to_latency);
    curves.push_back(std::move(curve));
  }
  return curves;
}

/// The TLB stage's method text: the curves' steps and what the strides bound.
std::string Probe::tlb_method(const std::vector<StrideCurve>& curves, const TlbReach& found, std::uint64_t largest,
                              std::uint64_t buffer_bytes) const {
  std::ostringstream method;
  method << "chase ld.global.cg through one random line per stride s over growing regions (nodes stay in L2), "
            "regions up to "
         << format_bytes(static_cast<double>(largest)) << " (device buffer "
         << format_bytes(static_cast<double>(buffer_bytes))
         << "); steps found by find_rise (25% of the rise, top/base >= 1.1):";
  for (std::size_t i = 0; i < curves.size(); ++i) {
    method << ' ' << format_bytes(curves[i].stride_bytes) << ": ";
    if (const std::optional<Rise>& step = found.steps[i]) {
      method << "step after " << format_bytes(step->last_flat_x) << " (" << format_number(step->base_level) << " -> "
             << format_number(step->top_level) << " cycles, "
             << format_number(step->last_flat_x / curves[i].stride_bytes, 0) << " strides)";
    } else {
      method << "no step up to " << format_bytes(curves[i].region_to_latency.back().first);
    }
    method << (i + 1 < curves.size() ? ";" : "");
  }
  if (found.entry_covers_at_least_bytes > curves.front().stride_bytes) {
    method << "; larger strides step at the same region, so one entry covers at least "
           << format_bytes(found.entry_covers_at_least_bytes) << " (about "
           << format_number(found.reach_bytes / found.entry_covers_at_least_bytes, 0) << " entries or fewer)";
  }
  if (found.entry_covers_less_than_bytes > 0) {
    method << "; the " << format_bytes(found.entry_covers_less_than_bytes)
           << " stride steps later or not at all (a node per entry), so one entry covers less than that";
  }
  return method.str();
}

void Probe::tlb() {
  // Regions up to most of the device memory: the H200 showed no step within 32 GiB at 2 MiB.
  const std::uint64_t buffer_bytes = quick() ? buffer_->bytes() : grow_buffer_for_tlb();
  const std::uint64_t largest = quick() ? 2 * kGiB : buffer_bytes / (512 * kMiB) * (512 * kMiB);
  const std::vector<StrideCurve> curves = tlb_curves(largest);
  const TlbReach found = tlb_reach(curves);
  const std::string method = tlb_method(curves, found, largest, buffer_bytes);
  const auto samples = static_cast<std::int64_t>(curves.front().region_to_latency.size());
  if (found.lower_bound) {
    profile_.tlb.reach_bytes = measured(found.reach_bytes, low("LOWER BOUND: no step at the smallest stride up to " +
                                                                   format_bytes(found.reach_bytes) + "; " + method,
                                                               samples));
    return;
  }
  const double reach = found.reach_bytes;
  profile_.tlb.reach_bytes = measured(
      reach, {"reach = last region before the smallest stride's latency step (power-of-two regions); " + method,
              samples, 0.0, Confidence::medium});
  profile_.tlb.miss_penalty_cycles =
      measured(found.miss_penalty_cycles,
               {"latency after the reach step minus before it (same curve)", samples, 0.0, Confidence::medium});
  // Neighbouring power-of-two strides on both sides of the coverage pin it: that is the page
  // (translation granule) a TLB entry maps, and the reach holds reach / page of them.
  if (found.entry_covers_less_than_bytes > 0 &&
      found.entry_covers_less_than_bytes == 2 * found.entry_covers_at_least_bytes) {
    const double page = found.entry_covers_at_least_bytes;
    profile_.tlb.page_bytes =
        measured(page, {"stride test (same curves): strides up to " + format_bytes(page) + " step at the reach, " +
                            format_bytes(2 * page) + " does not, so one entry covers " + format_bytes(page) +
                            " (power-of-two granules)",
                        samples, 0.0, Confidence::medium});
    profile_.tlb.entries = measured(reach / page, {"reach / page size", samples, 0.0, Confidence::medium});
    return;
  }
  tlb_page_block_test(reach, largest);
}

/// Page size by the block test (full probe only, when the reach leaves room for its footprints).
void Probe::tlb_page_block_test(double reach, std::uint64_t largest) {
  // The block test needs footprints up to twice the reach at half the buffer's density.
  if (quick() || reach > static_cast<double>(largest) / 4) return;
  // Page size: blocks of B bytes with a node every 64 KiB; the footprint at the knee grows with B
  // until B reaches the page.
  std::vector<Point> knees;
  for (std::uint64_t block = 256 * kKiB; block <= 8 * kMiB; block *= 2) {
    std::vector<Point> block_curve;
    for (double fraction : {1.0 / 32, 1.0 / 16, 1.0 / 8, 0.25, 0.5, 1.0, 2.0}) {
      const std::uint64_t count =
          std::clamp<std::uint64_t>(static_cast<std::uint64_t>(reach * fraction) / block, 1, largest / (2 * block));
      const Offsets nodes = random_blocks(0, largest, block, count, std::min<std::uint64_t>(block, 64 * kKiB));
      block_curve.emplace_back(static_cast<double>(count * block), chase_cycle(shuffled(nodes), CacheOp::cg));
    }
    add_curve("TLB block test, " + format_bytes(static_cast<double>(block)) + " blocks", "bytes (footprint)",
              kLatencyUnit, block_curve);
    if (const std::optional<Rise> knee = find_rise(block_curve, 0.25, 1.1))
      knees.emplace_back(block, knee->last_flat_x);
  }
  const std::optional<double> page = smallest_saturating_block(knees, 0.3);
  if (!page) return;
  std::ostringstream page_method;
  page_method << "block test: random aligned blocks of B bytes (a node every 64 KiB), footprint at the TLB knee "
                 "grows with B until B reaches the page. Knees:";
  for (const auto& [block, knee] : knees) page_method << ' ' << format_bytes(block) << "->" << format_bytes(knee);
  profile_.tlb.page_bytes =
      measured(*page, {page_method.str(), static_cast<std::int64_t>(knees.size()), 0.0, Confidence::medium});
  profile_.tlb.entries = measured(reach / *page, {"reach / page size", 0, 0.0, Confidence::medium});
}

} // namespace cachewise::probe::detail
