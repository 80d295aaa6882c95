#include "analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace cachewise::probe {
namespace {

/// Linear-interpolated quantile of sorted values.
double quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double weight = position - static_cast<double>(below);
  return sorted[below] * (1.0 - weight) + sorted[above] * weight;
}

double median_of(std::vector<double> values) { return summarize(std::move(values)).median; }

std::vector<Point> sorted_by_x(std::vector<Point> points) {
  std::ranges::sort(points, {}, &Point::first);
  return points;
}

int confidence_rank(Confidence confidence) {
  switch (confidence) {
  case Confidence::high: return 3;
  case Confidence::medium: return 2;
  case Confidence::low: return 1;
  case Confidence::assumed: return 0;
  }
  return 0;
}

} // namespace

Summary summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  std::ranges::sort(samples);
  Summary summary;
  summary.samples = static_cast<std::int64_t>(samples.size());
  summary.median = quantile(samples, 0.5);
  summary.p25 = quantile(samples, 0.25);
  summary.p75 = quantile(samples, 0.75);
  summary.spread = summary.median != 0.0 ? (summary.p75 - summary.p25) / std::abs(summary.median) : 0.0;
  return summary;
}

Confidence confidence_from_spread(double spread, double high_max, double medium_max) {
  if (spread <= high_max) return Confidence::high;
  if (spread <= medium_max) return Confidence::medium;
  return Confidence::low;
}

Confidence weakest(Confidence a, Confidence b) { return confidence_rank(a) <= confidence_rank(b) ? a : b; }

Provenance provenance_from(const std::string& method, const Summary& summary) {
  return {method, summary.samples, summary.spread, confidence_from_spread(summary.spread)};
}

std::optional<Rise> find_rise(const std::vector<Point>& unsorted, double threshold_fraction, double min_ratio,
                              std::size_t confirm) {
  const std::vector<Point> curve = sorted_by_x(unsorted);
  if (curve.size() < 3) return std::nullopt;
  // Levels from the ends: the first and last few points (at least one, at most three).
  const std::size_t edge = std::clamp<std::size_t>(curve.size() / 5, 1, 3);
  std::vector<double> head;
  std::vector<double> tail;
  for (std::size_t i = 0; i < edge; ++i) {
    head.push_back(curve[i].second);
    tail.push_back(curve[curve.size() - 1 - i].second);
  }
  const double base = median_of(head);
  const double top = median_of(tail);
  if (base <= 0.0 || top < base * min_ratio) return std::nullopt;
  const double threshold = base + threshold_fraction * (top - base);
  for (std::size_t i = 1; i < curve.size(); ++i) {
    const std::size_t end = std::min(curve.size(), i + confirm);
    const bool sustained =
        std::all_of(curve.begin() + static_cast<std::ptrdiff_t>(i), curve.begin() + static_cast<std::ptrdiff_t>(end),
                    [threshold](const Point& p) { return p.second > threshold; });
    if (sustained) {
      Rise rise;
      rise.last_flat_index = i - 1;
      rise.last_flat_x = curve[i - 1].first;
      rise.first_risen_x = curve[i].first;
      std::vector<double> flat;
      for (std::size_t j = 0; j < i; ++j) flat.push_back(curve[j].second);
      std::vector<double> risen;
      for (std::size_t j = i; j < curve.size(); ++j) risen.push_back(curve[j].second);
      rise.base_level = median_of(flat);
      rise.top_level = median_of(risen);
      return rise;
    }
  }
  return std::nullopt;
}

std::optional<Rise> find_drop(const std::vector<Point>& curve, double threshold_fraction, double min_ratio,
                              std::size_t confirm) {
  std::vector<Point> reciprocal;
  for (const auto& [x, y] : curve) {
    if (y <= 0.0) return std::nullopt;
    reciprocal.emplace_back(x, 1.0 / y);
  }
  std::optional<Rise> rise = find_rise(reciprocal, threshold_fraction, min_ratio, confirm);
  if (rise) {
    rise->base_level = 1.0 / rise->base_level;
    rise->top_level = 1.0 / rise->top_level;
  }
  return rise;
}

namespace {

bool within(double y, double level, double tolerance) { return std::abs(y / level - 1.0) <= tolerance; }

double level_of(const std::vector<Point>& curve, const std::vector<std::size_t>& run) {
  std::vector<double> ys;
  for (std::size_t i : run) ys.push_back(curve[i].second);
  return median_of(std::move(ys));
}

/// Runs of points (indices of the x-sorted curve) and the single outliers skipped inside them.
std::vector<std::vector<std::size_t>> flat_runs(const std::vector<Point>& curve, double tolerance,
                                                std::size_t min_points, std::vector<double>& outlier_x) {
  std::vector<std::vector<std::size_t>> runs{{0}};
  double level = curve[0].second;
  for (std::size_t j = 1; j < curve.size(); ++j) {
    std::vector<std::size_t>& run = runs.back();
    if (within(curve[j].second, level, tolerance)) {
      run.push_back(j);
      level = level_of(curve, run);
      continue;
    }
    const bool back_next = j + 1 < curve.size() && within(curve[j + 1].second, level, tolerance);
    if (run.size() >= min_points && back_next) {
      outlier_x.push_back(curve[j].first);
      continue;
    }
    runs.push_back({j});
    level = curve[j].second;
  }
  return runs;
}

Plateau plateau_of(const std::vector<Point>& curve, const std::vector<std::size_t>& run) {
  return {level_of(curve, run), curve[run.front()].first, curve[run.back()].first, run.size()};
}

} // namespace

std::optional<Plateaus> find_plateaus(const std::vector<Point>& unsorted, double tolerance, std::size_t min_points,
                                      double min_step_ratio, std::size_t max_levels) {
  const std::vector<Point> curve = sorted_by_x(unsorted);
  if (curve.empty()) return std::nullopt;
  for (const Point& point : curve) {
    if (!(point.second > 0.0)) throw std::invalid_argument("find_plateaus: latencies must be positive");
  }
  Plateaus result;
  std::vector<std::vector<std::size_t>> kept;
  for (std::vector<std::size_t>& run :
       flat_runs(curve, tolerance, std::max<std::size_t>(min_points, 1), result.outlier_x)) {
    if (run.size() >= min_points) kept.push_back(std::move(run));
  }
  if (kept.empty()) return std::nullopt;
  // Merge the closest neighbours while any two are within min_step_ratio or there are too many.
  for (;;) {
    std::size_t closest = 0;
    double closest_ratio = INFINITY;
    for (std::size_t k = 0; k + 1 < kept.size(); ++k) {
      const double ratio = std::max(level_of(curve, kept[k + 1]), level_of(curve, kept[k])) /
                           std::min(level_of(curve, kept[k + 1]), level_of(curve, kept[k]));
      if (ratio < closest_ratio) {
        closest_ratio = ratio;
        closest = k;
      }
    }
    if (kept.size() <= 1 || (closest_ratio >= min_step_ratio && kept.size() <= std::max<std::size_t>(max_levels, 1)))
      break;
    kept[closest].insert(kept[closest].end(), kept[closest + 1].begin(), kept[closest + 1].end());
    kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(closest) + 1);
  }
  for (const std::vector<std::size_t>& run : kept) result.levels.push_back(plateau_of(curve, run));
  for (std::size_t k = 0; k + 1 < kept.size(); ++k) {
    // The next point after the lower plateau that is not a skipped outlier.
    std::size_t next = kept[k].back() + 1;
    while (next < curve.size() && std::ranges::find(result.outlier_x, curve[next].first) != result.outlier_x.end())
      ++next;
    result.steps.push_back({curve[kept[k].back()].first, curve[std::min(next, curve.size() - 1)].first});
  }
  return result;
}

std::vector<double> grid(double low, double high, double step) {
  std::vector<double> values;
  if (step <= 0.0) return values;
  for (double x = low; x <= high + step * 1e-9; x += step) values.push_back(x);
  return values;
}

std::optional<Summary> capacity_from_hit_fractions(const std::vector<Point>& working_set_to_hit_fraction,
                                                   double min_working_set) {
  std::vector<double> estimates;
  for (const auto& [working_set, hit_fraction] : working_set_to_hit_fraction) {
    if (working_set >= min_working_set && hit_fraction > 0.05 && hit_fraction < 0.95) {
      estimates.push_back(working_set * hit_fraction);
    }
  }
  if (estimates.empty()) return std::nullopt;
  return summarize(std::move(estimates));
}

std::optional<HitCapacity> capacity_from_hit_curve(const std::vector<Point>& working_set_to_hit_fraction,
                                                   double plateau_end, double min_relative_hit,
                                                   double max_relative_hit) {
  std::vector<double> plateau;
  for (const auto& [working_set, hit_fraction] : working_set_to_hit_fraction) {
    if (working_set <= plateau_end) plateau.push_back(hit_fraction);
  }
  if (plateau.empty()) return std::nullopt;
  const double plateau_level = median_of(plateau);
  if (plateau_level <= 0.0) return std::nullopt;
  std::vector<double> estimates;
  for (const auto& [working_set, hit_fraction] : working_set_to_hit_fraction) {
    const double relative = hit_fraction / plateau_level;
    if (relative >= min_relative_hit && relative <= max_relative_hit) estimates.push_back(working_set * relative);
  }
  if (estimates.empty()) return std::nullopt;
  return HitCapacity{summarize(std::move(estimates)), plateau_level};
}

std::optional<Summary> near_capacity_from_hit_curves(const std::vector<Point>& working_set_to_hit_fraction,
                                                     const std::vector<Point>& working_set_to_near_fraction,
                                                     double plateau_hit_fraction, double min_relative_hit,
                                                     double max_relative_hit) {
  if (plateau_hit_fraction <= 0.0) return std::nullopt;
  std::vector<double> estimates;
  for (const auto& [working_set, hit_fraction] : working_set_to_hit_fraction) {
    const double relative = hit_fraction / plateau_hit_fraction;
    if (relative < min_relative_hit || relative > max_relative_hit) continue;
    const auto near = std::ranges::find(working_set_to_near_fraction, working_set, &Point::first);
    if (near != working_set_to_near_fraction.end())
      estimates.push_back(working_set * near->second / plateau_hit_fraction);
  }
  if (estimates.empty()) return std::nullopt;
  return summarize(std::move(estimates));
}

TwoClusters split_two_clusters(const std::vector<double>& samples) {
  std::vector<double> sorted = samples;
  std::ranges::sort(sorted);
  if (sorted.size() < 2 || sorted.front() == sorted.back()) {
    throw std::invalid_argument("split_two_clusters: need at least two distinct values");
  }
  // Two-means on a line: the best split is a cut of the sorted values; start at the midrange and
  // iterate the midpoint of the two means until it stops moving.
  double threshold = 0.5 * (sorted.front() + sorted.back());
  for (int iteration = 0; iteration < 100; ++iteration) {
    double low_sum = 0.0;
    double high_sum = 0.0;
    std::size_t low_count = 0;
    for (double v : sorted) {
      if (v <= threshold) {
        low_sum += v;
        ++low_count;
      } else {
        high_sum += v;
      }
    }
    if (low_count == 0 || low_count == sorted.size()) break;
    const double next =
        0.5 * (low_sum / static_cast<double>(low_count) + high_sum / static_cast<double>(sorted.size() - low_count));
    if (next == threshold) break;
    threshold = next;
  }
  const auto cut = std::ranges::upper_bound(sorted, threshold);
  std::vector<double> low(sorted.begin(), cut);
  std::vector<double> high(cut, sorted.end());
  TwoClusters clusters;
  clusters.low = summarize(low);
  clusters.high = summarize(high);
  clusters.threshold = 0.5 * (clusters.low.median + clusters.high.median);
  clusters.low_fraction = static_cast<double>(low.size()) / static_cast<double>(sorted.size());
  const double width = std::max({clusters.low.p75 - clusters.low.p25, clusters.high.p75 - clusters.high.p25,
                                 1e-9 * std::abs(clusters.high.median)});
  clusters.separation = (clusters.high.median - clusters.low.median) / width;
  return clusters;
}

std::optional<double> smallest_saturating_block(std::vector<Point> block_to_knee, double tolerance) {
  block_to_knee = sorted_by_x(std::move(block_to_knee));
  for (std::size_t i = 0; i + 1 < block_to_knee.size(); ++i) {
    if (block_to_knee[i].second <= 0.0) return std::nullopt;
    if (block_to_knee[i + 1].second <= (1.0 + tolerance) * block_to_knee[i].second) {
      // Saturated from the smallest block on: the line is at most that block, not known exactly.
      if (i == 0) return std::nullopt;
      return block_to_knee[i].first;
    }
  }
  return std::nullopt; // the knees never levelled off within the blocks tried
}

std::optional<double> fill_granularity(std::vector<Point> offset_to_latency, double miss_threshold) {
  offset_to_latency = sorted_by_x(std::move(offset_to_latency));
  for (std::size_t i = 0; i < offset_to_latency.size(); ++i) {
    if (offset_to_latency[i].second > miss_threshold) {
      if (i == 0) return std::nullopt;
      return offset_to_latency[i].first;
    }
  }
  return std::nullopt;
}

double pair_agreement(const std::vector<int>& classes, std::size_t distance) {
  std::size_t pairs = 0;
  std::size_t agree = 0;
  for (std::size_t a = 0; a + distance < classes.size(); a += 2 * distance) {
    ++pairs;
    if (classes[a] == classes[a + distance]) ++agree;
  }
  return pairs == 0 ? 1.0 : static_cast<double>(agree) / static_cast<double>(pairs);
}

std::optional<double> interleave_granularity(const std::vector<int>& classes, double spacing_bytes,
                                             double agreement_limit) {
  constexpr std::size_t kMinPairs = 8;
  for (std::size_t distance = 1; classes.size() >= distance * 2 * kMinPairs; distance *= 2) {
    if (pair_agreement(classes, distance) < agreement_limit) return static_cast<double>(distance) * spacing_bytes;
  }
  return std::nullopt;
}

double bank_conflict_degree(double stride_bytes, double width_bytes, double banks, int warp_size) {
  if (stride_bytes < width_bytes) {
    // Neighbouring lanes share a bank word (no conflict among them); the warp touches
    // warp * stride / width distinct words, spread over the banks.
    return std::max(1.0, warp_size * stride_bytes / width_bytes / banks);
  }
  // Lane i uses bank (i * stride / width) mod banks: banks / gcd(stride / width, banks) distinct banks.
  const auto step = static_cast<std::uint64_t>(stride_bytes / width_bytes);
  const std::uint64_t common = std::gcd(step, static_cast<std::uint64_t>(banks));
  return std::max(1.0, warp_size * static_cast<double>(common) / banks);
}

std::optional<BankAnalysis> analyze_banks(std::vector<Point> stride_to_cycles, int warp_size) {
  stride_to_cycles = sorted_by_x(std::move(stride_to_cycles));
  if (stride_to_cycles.size() < 3) return std::nullopt;
  const double base = stride_to_cycles.front().second;
  double highest = base;
  for (const auto& point : stride_to_cycles) highest = std::max(highest, point.second);
  // Conflicts must at least double the cost to count (a 32-way conflict costs many times more).
  if (highest < 2.0 * base) return std::nullopt;
  // Fit cycles = base + extra * (degree - 1) for each (width, banks) candidate; keep the best.
  std::optional<BankAnalysis> best;
  double best_error = INFINITY;
  for (double width : {4.0, 8.0, 16.0}) {
    for (double banks : {4.0, 8.0, 16.0, 32.0, 64.0, 128.0}) {
      double sum_d = 0, sum_y = 0, sum_dd = 0, sum_dy = 0;
      const auto n = static_cast<double>(stride_to_cycles.size());
      std::vector<double> degrees;
      for (const auto& [stride, cycles] : stride_to_cycles) {
        const double degree = bank_conflict_degree(stride, width, banks, warp_size) - 1.0;
        degrees.push_back(degree);
        sum_d += degree;
        sum_y += cycles;
        sum_dd += degree * degree;
        sum_dy += degree * cycles;
      }
      const double denominator = n * sum_dd - sum_d * sum_d;
      if (denominator <= 0) continue;
      const double extra = (n * sum_dy - sum_d * sum_y) / denominator;
      const double intercept = (sum_y - extra * sum_d) / n;
      if (extra <= 0) continue;
      double error = 0;
      for (std::size_t i = 0; i < degrees.size(); ++i) {
        const double residual = stride_to_cycles[i].second - (intercept + extra * degrees[i]);
        error += residual * residual;
      }
      if (error < best_error * (1 - 1e-9)) {
        best_error = error;
        best = BankAnalysis{width, banks, extra};
      }
    }
  }
  return best;
}

EvictionSetResult reduce_eviction_set(std::uint64_t target, std::vector<std::uint64_t> candidates,
                                      const EvictionOracle& evicts, const EvictionSetOptions& options) {
  EvictionSetResult result;
  // The majority of up to `votes` calls, stopping once it is decided; nullopt when out of calls or time.
  auto decide = [&](const std::vector<std::uint64_t>& lines) -> std::optional<bool> {
    const int votes = std::max(1, options.votes);
    int yes = 0;
    int no = 0;
    while (2 * yes <= votes && 2 * no < votes) {
      if (result.oracle_calls >= options.max_oracle_calls) {
        result.stopped = "oracle-call limit (" + std::to_string(options.max_oracle_calls) + ") reached";
        return std::nullopt;
      }
      if (options.out_of_time && options.out_of_time()) {
        result.stopped = "time limit reached";
        return std::nullopt;
      }
      ++result.oracle_calls;
      (evicts(target, lines) ? yes : no) += 1;
    }
    return 2 * yes > votes;
  };
  auto note_progress = [&](std::size_t lines) {
    result.progress.emplace_back(static_cast<double>(result.oracle_calls), static_cast<double>(lines));
  };

  std::vector<std::uint64_t>& current = candidates;
  note_progress(current.size());
  const std::optional<bool> evicts_at_all = decide(current);
  result.candidates_evict = evicts_at_all.value_or(false);
  if (!result.candidates_evict) {
    if (evicts_at_all) result.stopped = "the candidate set does not evict the target";
    result.lines = std::move(current);
    return result;
  }
  std::vector<std::vector<std::uint64_t>> dropped; // groups dropped so far, latest last
  std::size_t groups = 2;
  while (!current.empty()) {
    groups = std::min(groups, current.size());
    // Split into `groups` contiguous chunks of nearly equal size; test dropping each in turn.
    std::vector<std::vector<std::uint64_t>> chunks(groups);
    for (std::size_t i = 0; i < current.size(); ++i) chunks[i * groups / current.size()].push_back(current[i]);
    std::size_t dropped_groups = 0;
    std::vector<bool> kept(groups, true);
    for (std::size_t k = 0; k < groups; ++k) {
      std::vector<std::uint64_t> rest;
      for (std::size_t j = 0; j < groups; ++j) {
        if (j != k && kept[j]) rest.insert(rest.end(), chunks[j].begin(), chunks[j].end());
      }
      if (rest.empty()) continue;
      const std::optional<bool> still = decide(rest);
      if (!still) {
        result.lines = std::move(current);
        note_progress(result.lines.size());
        return result;
      }
      if (*still) {
        current = std::move(rest);
        kept[k] = false;
        dropped.push_back(std::move(chunks[k]));
        ++dropped_groups;
      }
    }
    note_progress(current.size());
    // An evicting subset of at most max_ways lines meets at most max_ways groups; every other
    // group can go. Fewer drops than that: no such subset is left (eviction needs more lines
    // than one set holds), or a false "evicts" dropped a needed line (checked below).
    const bool too_few_dropped = groups > options.max_ways && dropped_groups + options.max_ways < groups;
    if (!too_few_dropped) {
      if (dropped_groups > 0) continue;
      if (groups < current.size()) {
        groups = std::min(2 * groups, current.size());
        continue;
      }
    }
    // No single line can go, or too few groups could: minimal or beyond max_ways if the set still
    // evicts; if not, a false "evicts" dropped too much.
    const std::optional<bool> confirmed = decide(current);
    if (!confirmed) break;
    if (*confirmed) {
      if (too_few_dropped) {
        result.stopped = "no evicting subset of at most " + std::to_string(options.max_ways) + " lines (" +
                         std::to_string(dropped_groups) + " of " + std::to_string(groups) + " groups could go; " +
                         std::to_string(current.size()) + " lines left)";
      } else {
        result.minimal = true;
      }
      break;
    }
    if (dropped.empty() || result.backtracks >= options.max_backtracks) {
      result.stopped = dropped.empty() ? "the candidate set stopped evicting the target"
                                       : "the reduced set stopped evicting the target after " +
                                             std::to_string(result.backtracks) + " backtracks";
      break;
    }
    ++result.backtracks;
    current.insert(current.end(), dropped.back().begin(), dropped.back().end());
    dropped.pop_back();
    groups = 2;
  }
  result.lines = std::move(current);
  return result;
}

std::optional<WaysVote> ways_from_minimal_sets(const std::vector<std::size_t>& sizes, std::size_t min_agreeing) {
  std::map<std::size_t, std::size_t> counts;
  for (std::size_t size : sizes) ++counts[size];
  WaysVote vote;
  vote.sets = sizes.size();
  for (const auto& [size, count] : counts) {
    if (count > vote.agreeing) {
      vote.ways = static_cast<double>(size);
      vote.agreeing = count;
    }
  }
  if (vote.agreeing < std::max<std::size_t>(min_agreeing, 1) || 2 * vote.agreeing <= vote.sets) return std::nullopt;
  return vote;
}

EvictionThreshold eviction_threshold(const std::vector<double>& hit_cycles, const std::vector<double>& evicted_cycles,
                                     double min_ratio) {
  EvictionThreshold result;
  result.hit = summarize(hit_cycles);
  result.evicted = summarize(evicted_cycles);
  result.threshold = 0.5 * (result.hit.median + result.evicted.p25);
  result.separated = result.evicted.p25 >= min_ratio * result.hit.p75;
  return result;
}

TlbReach tlb_reach(const std::vector<StrideCurve>& curves, double threshold_fraction, double min_ratio) {
  if (curves.empty()) throw std::invalid_argument("tlb_reach: no curves");
  TlbReach reach;
  const StrideCurve* smallest = nullptr;
  std::size_t smallest_index = 0;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    if (curves[i].region_to_latency.empty()) throw std::invalid_argument("tlb_reach: empty curve");
    reach.steps.push_back(find_rise(curves[i].region_to_latency, threshold_fraction, min_ratio));
    if (!smallest || curves[i].stride_bytes < smallest->stride_bytes) {
      smallest = &curves[i];
      smallest_index = i;
    }
  }
  if (const std::optional<Rise>& step = reach.steps[smallest_index]) {
    reach.reach_bytes = step->last_flat_x;
    reach.lower_bound = false;
    reach.miss_penalty_cycles = step->top_level - step->base_level;
    for (std::size_t i = 0; i < curves.size(); ++i) {
      if (reach.steps[i] && reach.steps[i]->last_flat_x == step->last_flat_x) {
        reach.entry_covers_at_least_bytes = std::max(reach.entry_covers_at_least_bytes, curves[i].stride_bytes);
      }
    }
    for (std::size_t i = 0; i < curves.size(); ++i) {
      const bool steps_later = !reach.steps[i] || reach.steps[i]->last_flat_x > step->last_flat_x;
      if (steps_later && curves[i].stride_bytes > reach.entry_covers_at_least_bytes &&
          (reach.entry_covers_less_than_bytes == 0 || curves[i].stride_bytes < reach.entry_covers_less_than_bytes)) {
        reach.entry_covers_less_than_bytes = curves[i].stride_bytes;
      }
    }
  } else {
    reach.reach_bytes = std::ranges::max_element(smallest->region_to_latency, {}, &Point::first)->first;
  }
  return reach;
}

ReplacementGuess classify_replacement(int line0_kept, int line1_kept, int trials) {
  ReplacementGuess guess;
  std::ostringstream text;
  text << "fill all ways, re-touch line 0, insert one more: line 0 kept " << line0_kept << "/" << trials
       << ", line 1 kept " << line1_kept << "/" << trials;
  guess.fingerprint = text.str();
  if (trials <= 0) return guess;
  const double kept0 = static_cast<double>(line0_kept) / trials;
  const double kept1 = static_cast<double>(line1_kept) / trials;
  constexpr double kMostly = 0.9;
  constexpr double kRarely = 0.1;
  if (kept0 >= kMostly && kept1 <= kRarely) {
    guess.policy = ReplacementPolicy::lru; // the least recently used line (1) went
  } else if (kept0 <= kRarely && kept1 >= kMostly) {
    guess.policy = ReplacementPolicy::fifo; // the oldest inserted line (0) went despite its re-touch
  } else if (kept0 > kRarely && kept0 < kMostly && kept1 > kRarely && kept1 < kMostly) {
    guess.policy = ReplacementPolicy::random;
  }
  return guess;
}

PartitionSides partition_sides(const std::vector<int>& home_classes,
                               const std::vector<std::vector<int>>& classes_by_sm) {
  PartitionSides sides;
  for (const std::vector<int>& classes : classes_by_sm) {
    if (classes.size() != home_classes.size() || classes.empty()) {
      throw std::invalid_argument("partition_sides: every SM needs a class for each of the home SM's addresses");
    }
    std::size_t differing = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) differing += classes[i] != home_classes[i] ? 1 : 0;
    const double share = static_cast<double>(differing) / static_cast<double>(classes.size());
    sides.side.push_back(share > 0.5 ? 1 : 0);
    sides.ambiguity = std::max(sides.ambiguity, std::min(share, 1.0 - share));
  }
  return sides;
}

} // namespace cachewise::probe
