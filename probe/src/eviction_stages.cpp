// Stages: L1 and L2 ways and replacement from minimal eviction sets.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <sstream>

#include "probe_stages.hpp"

namespace cachewise::probe::detail {

std::size_t Probe::chain_length_for(const EvictionLevel& level, std::size_t lines) const {
  if (!level.parallel_walk) return std::max<std::size_t>(lines, 1);
  return std::max<std::size_t>(1, (lines + gpu::kMaxWalkers - 1) / gpu::kMaxWalkers);
}

/// Cycles of the probe load after (optionally) loading `target` and walking `lines` `walks` times.
std::uint32_t Probe::eviction_probe(const EvictionLevel& level, const Offsets& lines, std::size_t chain_length,
                                    std::optional<std::uint64_t> target, std::uint64_t probe, int walks) {
  gpu::write_chains(*buffer_, lines, chain_length);
  if (level.flush_l2_first) flush_l2();
  gpu::EvictionTest test;
  test.op = level.op;
  test.has_target = target.has_value();
  test.target = target.value_or(0);
  test.probe = probe;
  test.chain_length = chain_length;
  test.walks = walks;
  test.sm = home_sm_;
  return gpu::eviction_test_cycles(*buffer_, lines, test);
}

/// The oracle's cycles for `target` after walking `lines` (twice, as in the reduction).
std::uint32_t Probe::eviction_oracle_cycles(const EvictionLevel& level, std::uint64_t target, const Offsets& lines) {
  return eviction_probe(level, lines, chain_length_for(level, lines.size()), target, target + kProbeWord, 2);
}

/// Threshold of one target from its own hit and evicted probe times (see eviction_threshold).
EvictionThreshold Probe::calibrate_target(const EvictionLevel& level, std::uint64_t target, const Offsets& candidates,
                                          std::vector<Point>& calibration_curve, double x) {
  std::vector<double> hits;
  std::vector<double> evicted;
  for (int r = 0; r < kCalibrationRuns; ++r) {
    hits.push_back(eviction_oracle_cycles(level, target, {}));
    evicted.push_back(eviction_oracle_cycles(level, target, candidates));
    calibration_curve.emplace_back(x, hits.back());
    calibration_curve.emplace_back(x + 0.5, evicted.back());
  }
  return eviction_threshold(hits, evicted);
}

/// One target's calibration (2x the capacity as candidates, 4x when 2x does not evict) and
/// reduction; `index` names it in the curves.
Probe::EvictionTarget Probe::search_target(const EvictionLevel& level, std::uint64_t line,
                                           const Offsets& all_candidates, std::size_t index,
                                           const EvictionSetOptions& options, std::vector<Point>& calibration) {
  EvictionTarget target;
  target.line = line;
  Offsets candidates;
  for (double factor : {2.0, 4.0}) {
    target.candidates = static_cast<std::size_t>(factor * level.capacity_bytes / kNode);
    candidates = sample(all_candidates, target.candidates);
    target.calibration = calibrate_target(level, target.line, candidates, calibration, static_cast<double>(index));
    if (target.calibration.separated) break; // else 4x the capacity, once
  }
  if (target.calibration.separated) {
    const double threshold = target.calibration.threshold;
    const EvictionOracle oracle = [&](std::uint64_t probed, const Offsets& lines) {
      return eviction_oracle_cycles(level, probed, lines) > threshold;
    };
    target.result = reduce_eviction_set(target.line, candidates, oracle, options);
    add_curve(std::string(level.label) + " eviction-set reduction, target " + std::to_string(index) +
                  ": lines left vs oracle calls",
              "oracle calls", "lines", target.result.progress);
  } else {
    target.result.stopped =
        "the candidate set does not evict the target (probe p25 after walking it under 1.3x "
        "the just-loaded p75)";
  }
  return target;
}

/// Minimal eviction sets for up to `level.targets` targets (stopping once enough agree), then
/// the replacement fingerprint on them.
Probe::EvictionFindings Probe::find_eviction_sets(const EvictionLevel& level) {
  EvictionFindings findings;
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(level.budget_s));
  const auto out_of_time = [deadline] { return std::chrono::steady_clock::now() > deadline; };
  const std::string label = level.label;
  const auto largest_count = static_cast<std::size_t>(4 * level.capacity_bytes / kNode);
  const Offsets pool =
      sample(contiguous(level.region, level.span, kNode), largest_count + static_cast<std::size_t>(level.targets));
  const Offsets target_lines(pool.end() - level.targets, pool.end());
  const Offsets all_candidates(pool.begin(), pool.end() - level.targets);

  EvictionSetOptions options;
  options.max_oracle_calls = level.max_calls_per_target;
  options.out_of_time = out_of_time;
  std::vector<Point> calibration;
  std::vector<Point> sizes;
  std::vector<std::size_t> minimal_sizes;
  auto enough = [&] {
    const std::optional<WaysVote> vote = ways_from_minimal_sets(minimal_sizes);
    return vote && vote->agreeing >= level.enough_agreeing;
  };
  for (std::size_t t = 0; t < target_lines.size() && !out_of_time() && !enough(); ++t) {
    EvictionTarget target = search_target(level, target_lines[t], all_candidates, t, options, calibration);
    if (target.result.minimal) minimal_sizes.push_back(target.result.lines.size());
    sizes.emplace_back(static_cast<double>(t),
                       target.result.minimal ? static_cast<double>(target.result.lines.size()) : 0.0);
    findings.targets.push_back(std::move(target));
  }
  add_curve(label +
                " eviction test calibration: probe cycles per target (x = target: line just loaded; target + "
                "0.5: after walking the whole candidate set)",
            "target", "cycles (probe load, timing overhead included)", calibration);
  add_curve(label + " minimal eviction set size per target (0: none found)", "target", "lines", sizes);
  findings.ways = ways_from_minimal_sets(minimal_sizes);
  findings.method = eviction_method(level, options, findings, out_of_time() && !enough());
  if (!findings.ways) {
    findings.method += "; no size shared by at least 2 minimal sets and more than half of them (" +
                       std::to_string(minimal_sizes.size()) + " minimal sets): ways not written";
  }
  if (findings.ways) findings.replacement = replacement_fingerprint(level, findings);
  return findings;
}

/// The eviction-set search's method text with the per-target outcomes.
std::string Probe::eviction_method(const EvictionLevel& level, const EvictionSetOptions& options,
                                   const EvictionFindings& findings, bool ran_out) const {
  std::ostringstream method;
  method << "minimal eviction sets by group testing (hash-agnostic): random 128 B lines of a "
         << format_bytes(static_cast<double>(level.span)) << " region, 2x " << level.capacity_source << " ("
         << format_bytes(level.capacity_bytes) << ") as candidates (4x when 2x does not evict); oracle = one block on "
         << "SM " << home_sm_ << ": " << (level.op == CacheOp::ca ? "ld.global.ca" : "ld.global.cg")
         << " of the target, the candidates walked twice by "
         << (level.parallel_walk ? "1024 threads (one pointer cycle each)" : "one thread (one pointer cycle)")
         << (level.flush_l2_first ? " after evicting L2" : "")
         << ", then the target's line timed; threshold per target midway between its probe just loaded and the p25 "
            "after walking all candidates ("
         << kCalibrationRuns << " runs each); answers = majority of 3; groups dropped while the rest still evicts, "
         << "doubling the group count when none can go, until no single line can go; a target is given up when a "
            "pass over more than "
         << options.max_ways << " groups drops too few for a set of at most " << options.max_ways
         << " lines; targets in a fixed order until " << level.enough_agreeing << " minimal sets agree (at most "
         << level.targets << "). Per target (hit / evicted cycles; candidates -> result, oracle calls):";
  for (const EvictionTarget& target : findings.targets) {
    const EvictionSetResult& result = target.result;
    method << " [" << format_number(target.calibration.hit.median, 0) << " / "
           << format_number(target.calibration.evicted.p25, 0) << "; " << target.candidates << "->"
           << (result.minimal ? std::to_string(result.lines.size()) : "none (" + result.stopped + ")") << ", "
           << result.oracle_calls
           << (result.backtracks > 0 ? ", " + std::to_string(result.backtracks) + " backtracks" : "") << "]";
  }
  if (ran_out) method << "; time budget (" << format_number(level.budget_s, 0) << " s) ran out";
  return method.str();
}

/// The eviction fingerprint on the minimal sets of the ways found: lines 0..W-1 = a minimal set,
/// line W = its target (all in one set); fill 0..W-1, re-touch 0, insert W, then time line 0 or 1.
ReplacementGuess Probe::replacement_fingerprint(const EvictionLevel& level, EvictionFindings& findings) {
  std::vector<const EvictionTarget*> usable;
  for (const EvictionTarget& target : findings.targets) {
    if (target.result.minimal && static_cast<double>(target.result.lines.size()) == findings.ways->ways) {
      usable.push_back(&target);
    }
  }
  const int trials = quick() ? 4 : 8;
  findings.fingerprint_trials = trials;
  int kept[2] = {0, 0};
  std::vector<Point> probes[2];
  for (int line = 0; line < 2; ++line) {
    for (int trial = 0; trial < trials; ++trial) {
      const EvictionTarget& target = *usable[static_cast<std::size_t>(trial) % usable.size()];
      const Offsets& set = target.result.lines;
      Offsets sequence = set;
      sequence.push_back(set[0] + 8); // the re-touch: another word of line 0, so the cycle stays simple
      sequence.push_back(target.line);
      const std::uint32_t cycles = eviction_probe(level, sequence, sequence.size(), std::nullopt,
                                                  set[static_cast<std::size_t>(line)] + kProbeWord, 1);
      if (cycles < target.calibration.threshold) ++kept[line];
      probes[line].emplace_back(trial, cycles);
    }
    add_curve(std::string(level.label) + " replacement fingerprint: probe cycles of line " + std::to_string(line) +
                  " per trial",
              "trial", "cycles (probe load, timing overhead included)", probes[line]);
  }
  return classify_replacement(kept[0], kept[1], trials);
}

/// Writes ways and replacement from the eviction-set findings (or says why there are none).
void Probe::record_eviction_findings(const EvictionFindings& findings, std::optional<Measured>& ways,
                                     Replacement& replacement) {
  if (!findings.ways) {
    replacement = {ReplacementPolicy::unknown, "no associativity found", low(findings.method)};
    return;
  }
  const WaysVote& vote = *findings.ways;
  // High: at least 3 sets, and every target tried gave that size; medium: a majority of at least 2.
  Confidence confidence =
      vote.agreeing >= 3 && vote.agreeing == findings.targets.size() ? Confidence::high : Confidence::medium;
  // Random replacement needs more lines than ways to evict reliably: the set size overstates them.
  if (findings.replacement.policy == ReplacementPolicy::random) confidence = Confidence::low;
  std::ostringstream method;
  method << findings.method << "; ways = most common minimal size (" << vote.agreeing << " of " << vote.sets
         << " minimal sets, " << findings.targets.size() << " targets tried), the associativity for LRU/FIFO-like "
         << "policies";
  ways = measured(vote.ways, {method.str(), static_cast<std::int64_t>(vote.sets), 0.0, confidence});
  replacement = {findings.replacement.policy,
                 findings.replacement.fingerprint,
                 {"eviction fingerprint on the minimal eviction sets (lines 0..W-1 = a minimal set, line W = its "
                  "target): fill, re-touch line 0, insert line W, time line 0 or line 1 with the same oracle kernel "
                  "and the target's threshold",
                  2 * findings.fingerprint_trials, 0.0,
                  findings.replacement.policy == ReplacementPolicy::unknown ? Confidence::low : Confidence::medium}};
}

void Probe::l1_ways() {
  EvictionLevel level;
  level.label = "L1";
  level.op = CacheOp::ca;
  level.region = kEvictionSetRegion;
  level.span = 64 * kMiB;
  level.capacity_bytes = profile_.l1.capacity_bytes.value;
  level.capacity_source = "the measured capacity";
  level.targets = quick() ? 4 : 6;
  level.enough_agreeing = quick() ? 2 : 3;
  level.budget_s = quick() ? 3 : 10;
  level.max_calls_per_target = quick() ? 3000 : 8000;
  const EvictionFindings findings = find_eviction_sets(level);
  record_eviction_findings(findings, profile_.l1.ways, profile_.l1.replacement);
}

void Probe::l2_ways() {
  if (quick()) {
    profile_.l2.replacement = {ReplacementPolicy::unknown, "not tested in --quick mode", low("skipped (--quick)")};
    return;
  }
  EvictionLevel level;
  level.label = "L2";
  level.op = CacheOp::cg;
  level.region = kEvictionSetRegion + 64 * kMiB;
  level.span = 768 * kMiB;
  // The reported size, not the measured one: above the single-SM capacity the sweep sees, so 2x
  // it overfills every set, and the candidates do not move with that measurement.
  level.capacity_bytes = static_cast<double>(l2_reported());
  level.capacity_source = "the driver-reported size";
  level.parallel_walk = true;
  level.flush_l2_first = true;
  level.targets = 6;
  level.enough_agreeing = 3;
  level.budget_s = 18;
  level.max_calls_per_target = 6000;
  EvictionFindings findings = find_eviction_sets(level);
  // Two partitions may each hold a copy of a far line: say so where the reduction fails.
  if (!findings.ways) {
    findings.method += "; L2 has " + std::to_string(profile_.l2.partitions) +
                       " partitions (a line far from the SM may also be copied into its near one, so eviction from "
                       "one SM's view need not follow one set)";
  }
  record_eviction_findings(findings, profile_.l2.ways, profile_.l2.replacement);
}

} // namespace cachewise::probe::detail
