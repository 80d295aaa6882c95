// Stage: L2 and DRAM latency plateaus from the standard full-cycle pointer chase. One thread,
// pinned to an SM by %smid, follows one pointer per 128 B node of a host-built random cyclic
// permutation over a working set W with ld.global.cg; after one warm-up lap, clock64 around many
// laps gives cycles per hop with no per-load timing in them. Small W stays in the SM's near L2
// partition (near plateau); past what one partition holds, lines come from the other one (far
// plateau); past the whole L2, from DRAM.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "probe_stages.hpp"

namespace cachewise::probe::detail {
namespace {

/// Working sets of the chase: dense up to past the near capacity, then out beyond the L2.
std::vector<double> chase_sizes_bytes(bool quick) {
  const std::vector<double> mib =
      quick ? std::vector<double>{2, 8, 16, 24, 36, 42, 48, 54, 64, 96, 128}
            : std::vector<double>{1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64, 80, 96, 128, 160, 200};
  std::vector<double> bytes;
  for (double m : mib) bytes.push_back(m * kMiB);
  return bytes;
}

/// The working set of `curve` on `plateau` closest (in log scale) to its middle.
double middle_size(const std::vector<Point>& curve, const Plateau& plateau) {
  const double middle = std::sqrt(plateau.first_x * plateau.last_x);
  double best = plateau.first_x;
  for (const Point& point : curve) {
    if (point.first < plateau.first_x || point.first > plateau.last_x) continue;
    if (std::abs(std::log(point.first / middle)) < std::abs(std::log(best / middle))) best = point.first;
  }
  return best;
}

/// Timed hops of one point: at least two laps, and at least this many (small W: many laps).
constexpr std::int64_t kMinTimedHops = 1 << 18;
constexpr std::int64_t kMinTimedHopsQuick = 1 << 16;

} // namespace

Offsets Probe::full_cycle_order(std::uint64_t working_set) {
  return shuffled(contiguous(kFullChaseRegion, working_set, kNode));
}

double Probe::full_cycle_chase(const Offsets& order, int sm) {
  const auto nodes = static_cast<std::int64_t>(order.size());
  gpu::ChaseOptions chase;
  chase.op = CacheOp::cg;
  chase.warm_hops = nodes; // one warm-up lap
  chase.timed_hops = std::max<std::int64_t>(2 * nodes, quick() ? kMinTimedHopsQuick : kMinTimedHops);
  chase.sm = sm;
  return gpu::chase_mean_cycles(*buffer_, order.front(), chase);
}

/// One curve per SM: each working set's chain is written once and chased from every SM in turn
/// (each chase's warm-up lap brings L2 to that SM's steady state).
std::vector<std::vector<Point>> Probe::chase_curves(const std::vector<double>& sizes_bytes,
                                                    const std::vector<int>& sms) {
  std::vector<std::vector<Point>> curves(sms.size());
  for (double bytes : sizes_bytes) {
    const Offsets order = full_cycle_order(static_cast<std::uint64_t>(bytes));
    gpu::write_chain(*buffer_, order);
    for (std::size_t k = 0; k < sms.size(); ++k) curves[k].emplace_back(bytes, full_cycle_chase(order, sms[k]));
  }
  return curves;
}

/// Adds points between the last point of each plateau and the next one (1 MiB apart below
/// 40 MiB, 2 MiB above, at most 4 per step), so the steps are known to that resolution.
void Probe::refine_chase_steps(std::vector<Point>& curve) {
  if (quick()) return;
  const std::optional<Plateaus> found = find_plateaus(curve);
  if (!found) return;
  std::vector<double> extra;
  for (const Step& step : found->steps) {
    const double resolution = (step.last_flat_x < 40.0 * kMiB ? 1.0 : 2.0) * kMiB;
    const double spacing = std::max(resolution, std::ceil((step.first_risen_x - step.last_flat_x) / 5 / kMiB) * kMiB);
    for (double x = step.last_flat_x + spacing; x < step.first_risen_x - 0.5 * kMiB; x += spacing) extra.push_back(x);
  }
  if (extra.empty()) return;
  const std::vector<std::vector<Point>> refined = chase_curves(extra, {home_sm_});
  curve.insert(curve.end(), refined[0].begin(), refined[0].end());
  std::ranges::sort(curve, {}, &Point::first);
}

/// Three plateaus are near, far and DRAM, in that order. With two, the second is DRAM when it
/// lies within 10% of the DRAM stage's latency or above (the near partition and the whole L2
/// then give out together, and the step is the total capacity's only), else far.
Probe::ChaseLevels Probe::name_levels(const Plateaus& plateaus) const {
  ChaseLevels named;
  const std::vector<Plateau>& levels = plateaus.levels;
  named.near = levels.front();
  if (levels.size() >= 3) {
    named.far = levels[1];
    named.dram = levels[2];
    named.near_step = plateaus.steps[0];
    named.total_step = plateaus.steps[1];
  } else if (levels.size() == 2 && dram_ > 0 && levels[1].level >= 0.9 * dram_) {
    named.dram = levels[1];
    named.total_step = plateaus.steps[0];
  } else if (levels.size() == 2) {
    named.far = levels[1];
    named.near_step = plateaus.steps[0];
  }
  return named;
}

int Probe::side_of(int sm) const {
  const std::optional<SmPlacement>& placement = profile_.l2.sm_placement;
  if (!placement || sm < 0 || static_cast<std::size_t>(sm) >= placement->near_partition_by_sm.size()) return -1;
  return placement->near_partition_by_sm[static_cast<std::size_t>(sm)];
}

/// An SM near to the other partition (per the SM placement), searched from the middle of the id
/// range; without a placement, the SM three quarters up the ids.
int Probe::other_side_sm() const {
  const int home = side_of(home_sm_);
  for (std::size_t k = 0; home >= 0 && k < sm_ids_.size(); ++k) {
    const int sm = sm_ids_[(sm_ids_.size() / 2 + k) % sm_ids_.size()];
    if (side_of(sm) >= 0 && side_of(sm) != home) return sm;
  }
  return sm_ids_[sm_ids_.size() * 3 / 4];
}

/// Near and far plateau latency from SMs spread over the id range (both sides of the chip).
std::vector<Probe::ChaseSmLevels> Probe::chase_per_sm(double near_bytes, double far_bytes) {
  const std::size_t count = std::min<std::size_t>(sm_ids_.size(), quick() ? 4 : 12);
  std::vector<int> sms;
  for (std::size_t k = 0; k < count; ++k) sms.push_back(sm_ids_[k * sm_ids_.size() / count]);
  const std::vector<std::vector<Point>> curves = chase_curves({near_bytes, far_bytes}, sms);
  std::vector<ChaseSmLevels> levels;
  for (std::size_t k = 0; k < sms.size(); ++k) {
    levels.push_back({sms[k], side_of(sms[k]), curves[k][0].second, curves[k][1].second});
  }
  return levels;
}

/// "side 0: median m (min..max) of n SMs; ..." for the near or far latencies.
std::string Probe::per_sm_spread(const std::vector<ChaseSmLevels>& per_sm, bool far) const {
  std::ostringstream text;
  for (int side : {0, 1, -1}) {
    std::vector<double> values;
    for (const ChaseSmLevels& levels : per_sm) {
      if (levels.side == side) values.push_back(far ? levels.far_cycles : levels.near_cycles);
    }
    if (values.empty()) continue;
    text << (text.tellp() > 0 ? "; " : "") << (side < 0 ? std::string("side unknown") : "side " + std::to_string(side))
         << ": " << format_number(median(values)) << " (" << format_number(std::ranges::min(values)) << ".."
         << format_number(std::ranges::max(values)) << ") over " << values.size() << " SMs";
  }
  return text.str();
}

std::string Probe::describe_levels(const ChaseLevels& levels) {
  std::ostringstream text;
  const auto level = [&](const char* name, const std::optional<Plateau>& plateau) {
    if (!plateau) {
      text << name << " none";
      return;
    }
    text << name << ' ' << format_number(plateau->level) << " cycles (" << format_bytes(plateau->first_x) << ".."
         << format_bytes(plateau->last_x) << ", " << plateau->points << " points)";
  };
  level("near", levels.near);
  text << ", ";
  level("far", levels.far);
  text << ", ";
  level("DRAM", levels.dram);
  return text.str();
}

void Probe::l2_chase() {
  const std::vector<double> sizes = chase_sizes_bytes(quick());
  const int other = other_side_sm();
  const std::vector<int> sms = quick() ? std::vector<int>{home_sm_} : std::vector<int>{home_sm_, other};
  std::vector<std::vector<Point>> curves = chase_curves(sizes, sms);
  refine_chase_steps(curves[0]);
  add_curve("L2 full-cycle chase, SM " + std::to_string(home_sm_), kWorkingSetUnit, kLatencyUnit, curves[0]);
  std::ostringstream method;
  method << "full-cycle pointer chase: one thread on SM " << home_sm_ << " (pinned by %smid), ld.global.cg, one "
         << "pointer per 128 B node of a host-built random cyclic permutation over W = " << format_bytes(sizes.front())
         << ".." << format_bytes(sizes.back()) << " (" << curves[0].size() << " sizes"
         << (quick() ? "" : ", steps refined") << "), one warm-up lap, then clock64 around max(2 laps, "
         << (quick() ? kMinTimedHopsQuick : kMinTimedHops) << " hops); plateaus (6% tolerance): ";
  const std::optional<Plateaus> found = find_plateaus(curves[0]);
  if (!found) return; // the first-touch levels stay, with their confidence
  chase_ = name_levels(*found);
  method << describe_levels(chase_);
  if (curves.size() > 1) {
    add_curve("L2 full-cycle chase, SM " + std::to_string(other) + " (other side)", kWorkingSetUnit, kLatencyUnit,
              curves[1]);
    const std::optional<Plateaus> theirs = find_plateaus(curves[1]);
    method << "; SM " << other << " (other side): " << (theirs ? describe_levels(name_levels(*theirs)) : "no plateau");
  }
  if (chase_.near && chase_.far) {
    const double near_bytes = middle_size(curves[0], *chase_.near);
    const double far_bytes = middle_size(curves[0], *chase_.far);
    const std::vector<ChaseSmLevels> per_sm = chase_per_sm(near_bytes, far_bytes);
    std::vector<Point> near_curve;
    std::vector<Point> far_curve;
    for (const ChaseSmLevels& levels : per_sm) {
      near_curve.emplace_back(levels.sm, levels.near_cycles);
      far_curve.emplace_back(levels.sm, levels.far_cycles);
    }
    add_curve("L2 full-cycle chase per SM, W = " + format_bytes(near_bytes) + " (near plateau)", "SM id", kLatencyUnit,
              near_curve);
    add_curve("L2 full-cycle chase per SM, W = " + format_bytes(far_bytes) + " (far plateau)", "SM id", kLatencyUnit,
              far_curve);
    method << "; per-SM spread (near partition side per the SM placement), near at W = " << format_bytes(near_bytes)
           << ": " << per_sm_spread(per_sm, false) << "; far at W = " << format_bytes(far_bytes) << ": "
           << per_sm_spread(per_sm, true);
  }
  record_chase_latencies(chase_, method.str());
}

/// Near and far latency from the chase's plateaus, cross-checked by the first-touch test
/// (confidence from their agreement); the DRAM plateau cross-checks the DRAM latency stage.
void Probe::record_chase_latencies(const ChaseLevels& home, const std::string& method) {
  const auto record = [&](const std::optional<Plateau>& plateau, std::optional<double> other, Measured& field) {
    if (!plateau) return;
    std::string text = method;
    Confidence confidence = Confidence::medium;
    if (other) {
      text += "; cross-check by the first-touch test: " + format_number(*other) + " cycles (" +
              format_number(100 * (*other - plateau->level) / plateau->level) + "%). " + first_touch_method_;
      confidence = agreement_confidence(plateau->level, *other);
    } else {
      text += "; no first-touch levels to cross-check. " + partition_method_;
    }
    field = measured(plateau->level, {text, static_cast<std::int64_t>(plateau->points), 0.0, confidence});
  };
  record(home.near, first_touch_ ? std::optional<double>(first_touch_->low.median) : std::nullopt,
         profile_.l2.near_hit_latency_cycles);
  record(home.far, first_touch_ ? std::optional<double>(first_touch_->high.median) : std::nullopt,
         profile_.l2.far_hit_latency_cycles);
  if (home.near) l2_near_ = home.near->level;
  if (home.far) l2_far_ = home.far->level;
  // The hit/miss threshold sits between the slowest L2 level and DRAM: the chase's far plateau
  // when it found one (the first-touch test's slow class can be TLB misses or DRAM).
  if (!home.far && first_touch_ && first_touch_->high.median < dram_) l2_slowest_hit_ = first_touch_->high.median;
  else l2_slowest_hit_ = l2_far_;
  if (home.dram) {
    Provenance& dram = profile_.dram.latency_cycles.provenance;
    dram.method += "; cross-check by the full-cycle chase's DRAM plateau (" + format_bytes(home.dram->first_x) + ".." +
                   format_bytes(home.dram->last_x) + "): " + format_number(home.dram->level) + " cycles (" +
                   format_number(100 * (home.dram->level - dram_) / dram_) + "%)";
    dram.confidence = weakest(dram.confidence, agreement_confidence(dram_, home.dram->level));
  }
}

} // namespace cachewise::probe::detail
