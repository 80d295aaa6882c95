// One-line reasons, derived from the predicted time terms and counters: compare a candidate
// with another, name the time term whose difference accounts for most of the gap, and the
// counters that differ most in the direction of the time difference (preferring those that
// feed that term), with their numbers.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <tuple>

#include "cachewise/advisor.hpp"
#include "cachewise/model/profile/calibration.hpp"
#include "cachewise/advisor/notes.hpp"
#include "metric_names.hpp"

namespace cachewise::advisor {
namespace {

std::optional<double> metric_if_present(const Prediction& prediction, std::string_view name) {
  const auto found = prediction.metrics.find(name);
  if (found == prediction.metrics.end() || !std::isfinite(found->second)) return std::nullopt;
  return found->second;
}

std::optional<double> quotient(std::optional<double> numerator, std::optional<double> denominator) {
  if (!numerator || !denominator || *denominator <= 0) return std::nullopt;
  return *numerator / *denominator;
}

/// Text for a value: whole numbers and values from 100 up without decimals, smaller ones to
/// two or three significant digits.
std::string number(double value) {
  char text[32];
  if (std::abs(value) >= 100 || std::abs(value - std::round(value)) < 0.05) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, std::abs(value) < 10 ? "%.2g" : "%.3g", value);
  }
  return text;
}

std::string times(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, ratio < 9.95 ? "%.1fx" : "%.0fx", ratio);
  return text;
}

enum class Kind { count, rate_pct, level };

/// A measurable cause of a time difference and how to say it.
struct Mechanism {
  const char* bottlenecks; ///< bottleneck names this counter feeds, space separated
  Kind kind;
  bool higher_is_better;
  std::optional<double> (*value)(const Candidate&);
  std::string (*better)(double self, double other, double ratio); ///< self wins on it
  std::string (*worse)(double self, double other, double ratio);  ///< self loses on it
};

std::string instead(const char* what, double self, double other) {
  return number(self) + " " + what + " instead of " + number(other);
}

std::string conflict_better(const char* op, double self, double other) {
  if (self < 1.05) return "removes the " + number(other) + "-way bank conflict of shared " + op;
  return "cuts the bank conflict of shared " + std::string(op) + " from " + number(other) + "-way to " + number(self) +
         "-way";
}

std::string conflict_worse(const char* op, double self, double other) {
  return number(self) + "-way bank conflict on shared " + op + " (vs " + number(other) + "-way)";
}

const std::vector<Mechanism>& mechanisms() {
  using namespace metric_names;
  static const std::vector<Mechanism> list = {
      {"shared", Kind::level, false, [](const Candidate& c) { return summarize(c.prediction).shared_load_ways; },
       [](double s, double o, double) { return conflict_better("loads", s, o); },
       [](double s, double o, double) { return conflict_worse("loads", s, o); }},
      {"shared", Kind::level, false, [](const Candidate& c) { return summarize(c.prediction).shared_store_ways; },
       [](double s, double o, double) { return conflict_better("stores", s, o); },
       [](double s, double o, double) { return conflict_worse("stores", s, o); }},
      {"dram l2 l1 latency", Kind::level, false,
       [](const Candidate& c) { return summarize(c.prediction).load_sectors_per_request; },
       [](double s, double o, double) { return instead("sectors per load request", s, o); },
       [](double s, double o, double) { return instead("sectors per load request", s, o); }},
      {"dram l2 l1 latency", Kind::level, false,
       [](const Candidate& c) { return summarize(c.prediction).store_sectors_per_request; },
       [](double s, double o, double) { return instead("sectors per store request", s, o); },
       [](double s, double o, double) { return instead("sectors per store request", s, o); }},
      {"l1 latency issue", Kind::count, false,
       [](const Candidate& c) { return metric_if_present(c.prediction, kGlobalLoadRequests); },
       [](double, double, double r) { return times(r) + " fewer global load requests"; },
       [](double, double, double r) { return times(r) + " the global load requests"; }},
      {"l1 latency issue", Kind::count, false,
       [](const Candidate& c) { return metric_if_present(c.prediction, kGlobalStoreRequests); },
       [](double, double, double r) { return times(r) + " fewer global store requests"; },
       [](double, double, double r) { return times(r) + " the global store requests"; }},
      {"dram", Kind::count, false, [](const Candidate& c) { return metric_if_present(c.prediction, kDramReadBytes); },
       [](double, double, double r) { return times(r) + " less DRAM read traffic"; },
       [](double, double, double r) { return times(r) + " the DRAM read traffic"; }},
      {"dram", Kind::count, false, [](const Candidate& c) { return metric_if_present(c.prediction, kDramWriteBytes); },
       [](double, double, double r) { return times(r) + " less DRAM write traffic"; },
       [](double, double, double r) { return times(r) + " the DRAM write traffic"; }},
      {"l2", Kind::count, false,
       [](const Candidate& c) -> std::optional<double> {
         const auto read = metric_if_present(c.prediction, kL2ReadSectors);
         const auto write = metric_if_present(c.prediction, kL2WriteSectors);
         if (!read && !write) return std::nullopt;
         return read.value_or(0) + write.value_or(0);
       },
       [](double, double, double r) { return times(r) + " fewer L2 sector accesses"; },
       [](double, double, double r) { return times(r) + " the L2 sector accesses"; }},
      {"l1 l2", Kind::rate_pct, true, [](const Candidate& c) { return summarize(c.prediction).l1_hit_pct; },
       [](double s, double o, double) { return "L1 hit rate " + number(s) + "% instead of " + number(o) + "%"; },
       [](double s, double o, double) { return "L1 hit rate " + number(s) + "% instead of " + number(o) + "%"; }},
      {"dram", Kind::rate_pct, true, [](const Candidate& c) { return summarize(c.prediction).l2_hit_pct; },
       [](double s, double o, double) { return "L2 hit rate " + number(s) + "% instead of " + number(o) + "%"; },
       [](double s, double o, double) { return "L2 hit rate " + number(s) + "% instead of " + number(o) + "%"; }},
      {"dram", Kind::level, true,
       [](const Candidate& c) -> std::optional<double> {
         if (c.prediction.spread_write_fraction <= 0) return std::nullopt;
         return c.prediction.spread_write_run_bytes;
       },
       [](double s, double o, double) {
         return "writes " + number(s) + " B of each output row at a time instead of " + number(o) + " B";
       },
       [](double s, double o, double) {
         return "writes only " + number(s) + " B of each output row at a time instead of " + number(o) + " B";
       }},
      {"latency", Kind::level, true,
       [](const Candidate& c) -> std::optional<double> {
         if (c.blocks_per_sm <= 0) return std::nullopt;
         return static_cast<double>(c.blocks_per_sm);
       },
       [](double s, double o, double) { return instead("resident blocks per SM", s, o); },
       [](double s, double o, double) { return "only " + instead("resident blocks per SM", s, o); }},
  };
  return list;
}

/// How many times better the better of the two values is (>= 1). Rates compare misses.
double advantage(Kind kind, double a, double b) {
  if (kind == Kind::rate_pct) {
    constexpr double kMinMissPct = 0.5; // a 100% hit rate still compares as a finite ratio
    a = std::max(100.0 - a, kMinMissPct);
    b = std::max(100.0 - b, kMinMissPct);
  }
  const double low = std::min(a, b);
  const double high = std::max(a, b);
  if (high <= 0) return 1.0;
  if (low <= 0) return std::numeric_limits<double>::infinity();
  return high / low;
}

/// "pad=1 (vs 0)" or "block_x=16,block_y=16 (vs 32,8)"; empty when the configs are equal.
std::string difference(const Config& self, const Config& other) {
  std::string mine;
  std::string theirs;
  for (const auto& [key, value] : self.values()) {
    const bool present = other.has(key);
    if (present && other.get(key) == value) continue;
    if (!mine.empty()) {
      mine += ',';
      theirs += ',';
    }
    mine.append(key).append("=").append(self.text(key)); // a word (T=float) as the word
    theirs.append(present ? other.text(key) : "unset");
  }
  if (mine.empty()) return {};
  return mine + " (vs " + theirs + ")";
}

std::string speed(double self_us, double other_us) {
  const double ratio = self_us < other_us ? other_us / self_us : self_us / other_us;
  const char* direction = self_us < other_us ? "faster" : "slower";
  char text[48];
  if (ratio < 1.1) {
    std::snprintf(text, sizeof text, "%.0f%% %s", (ratio - 1.0) * 100.0, direction);
  } else {
    std::snprintf(text, sizeof text, "%s %s", times(ratio).c_str(), direction);
  }
  return text;
}

/// A time term (Prediction::time_terms_us), how reasons name it, and the bottleneck label
/// whose counters feed it.
struct TimeTerm {
  const char* key;
  const char* shown;
  const char* bottleneck;
};

constexpr TimeTerm kTimeTerms[] = {
    {"dram", "DRAM time", "dram"},
    {"l2", "L2 time", "l2"},
    {"l1", "L1 time", "l1"},
    {"exposed_latency", "exposed load latency", "latency"},
    {"latency", "load latency chain", "latency"},
    {"blocks", "block dispatch", "blocks"},
    {"compute", "FMA issue", "issue"},
    {"issue", "instruction issue", "issue"},
    {"shared", "shared-memory time", "shared"},
    {"constant", "constant-cache time", "constant"},
    {"atomics", "same-address atomics", "atomics"},
};

/// The term whose difference accounts for most of the gap: the one the slower candidate spends
/// the most more time in. None when the predictions carry no terms or none is larger.
const TimeTerm* widest_term(const Prediction& slower, const Prediction& faster) {
  const TimeTerm* widest = nullptr;
  double widest_us = 0;
  for (const TimeTerm& term : kTimeTerms) {
    const auto slow = slower.time_terms_us.find(term.key);
    const auto fast = faster.time_terms_us.find(term.key);
    if (slow == slower.time_terms_us.end() || fast == faster.time_terms_us.end()) continue;
    if (slow->second - fast->second > widest_us) {
      widest_us = slow->second - fast->second;
      widest = &term;
    }
  }
  return widest;
}

bool feeds(const Mechanism& mechanism, const std::string& bottleneck) {
  const std::string list = std::string(" ") + mechanism.bottlenecks + " ";
  return !bottleneck.empty() && list.find(" " + bottleneck + " ") != std::string::npos;
}

/// The first resource (in tie-break order) the two use differently, e.g. "threads per block
/// 512 vs 256"; empty when they use the same.
std::string resource_difference(const Candidate& self, const Candidate& other, bool& self_uses_more) {
  const std::tuple<const char*, std::int64_t, std::int64_t> resources[] = {
      {"threads per block", self.threads_per_block, other.threads_per_block},
      {"shared bytes per block", self.shared_bytes_per_block, other.shared_bytes_per_block},
      {"registers per block", self.registers_per_thread * self.threads_per_block,
       other.registers_per_thread * other.threads_per_block}};
  for (const auto& [name, mine, theirs] : resources) {
    if (mine == theirs) continue;
    self_uses_more = mine > theirs;
    return std::string(name) + " " + std::to_string(mine) + " vs " + std::to_string(theirs);
  }
  return {};
}

/// Times within 0.5%: what separates them in the ranking is resources, not speed.
std::string near_tie(const Candidate& self, const Candidate& other) {
  const double self_us = self.prediction.time_us;
  const double other_us = other.prediction.time_us;
  bool self_uses_more = false;
  const std::string resources = resource_difference(self, other, self_uses_more);
  if (std::llround(self_us * 1000.0) == std::llround(other_us * 1000.0)) {
    if (resources.empty()) return "same predicted time (" + number(self_us) + " µs) and resources";
    return "same predicted time (" + number(self_us) + " µs); ranked " + (self_uses_more ? "lower" : "higher") +
           " for " + resources;
  }
  char times_text[64];
  std::snprintf(times_text, sizeof times_text, "within 0.5%% (%.3f vs %.3f µs)", self_us, other_us);
  return resources.empty() ? std::string(times_text) : std::string(times_text) + "; " + resources;
}

/// Wavefronts per conflict-free wavefront: 32 for a warp whose 32 lanes hit one bank.
std::optional<double> conflict_ways(const Prediction& p, std::string_view wavefronts_metric,
                                    std::string_view conflicts_metric) {
  const auto wavefronts = metric_if_present(p, wavefronts_metric);
  const auto conflicts = metric_if_present(p, conflicts_metric);
  if (!wavefronts || !conflicts) return std::nullopt;
  return quotient(wavefronts, *wavefronts - *conflicts);
}

} // namespace

CounterSummary summarize(const Prediction& p) {
  using namespace metric_names;
  return {quotient(metric_if_present(p, kGlobalLoadSectors), metric_if_present(p, kGlobalLoadRequests)),
          quotient(metric_if_present(p, kGlobalStoreSectors), metric_if_present(p, kGlobalStoreRequests)),
          conflict_ways(p, kSharedLoadWavefronts, kSharedLoadBankConflicts),
          conflict_ways(p, kSharedStoreWavefronts, kSharedStoreBankConflicts),
          metric_if_present(p, kL1HitRate),
          metric_if_present(p, kL2HitRate)};
}

std::string explain_against(const Candidate& self, const Candidate& other) {
  const std::string diff = difference(self.config, other.config);
  const std::string subject = diff.empty() ? "same config" : diff;
  const double self_us = self.prediction.time_us;
  const double other_us = other.prediction.time_us;
  if (self_us <= 0 || other_us <= 0 || std::abs(self_us - other_us) <= 0.005 * std::max(self_us, other_us)) {
    return subject + ": " + near_tie(self, other);
  }
  const bool self_faster = self_us < other_us;
  const Prediction& slower = self_faster ? other.prediction : self.prediction;
  const Prediction& faster = self_faster ? self.prediction : other.prediction;
  // Counters are ranked by whether they feed the term that differs most, else the slower
  // one's bottleneck.
  const TimeTerm* term = widest_term(slower, faster);
  const std::string bottleneck = term != nullptr ? term->bottleneck : slower.bottleneck;

  struct Finding {
    const Mechanism* mechanism;
    double self_value;
    double other_value;
    double ratio;
  };
  constexpr double kNotable = 1.1; // a counter must differ by 10% to be named
  constexpr double kSupporting = 1.5;
  std::vector<Finding> findings;
  for (const Mechanism& mechanism : mechanisms()) {
    const auto s = mechanism.value(self);
    const auto o = mechanism.value(other);
    if (!s || !o) continue;
    const double ratio = advantage(mechanism.kind, *s, *o);
    if (ratio < kNotable) continue;
    const bool self_wins = mechanism.higher_is_better == (*s > *o);
    if (self_wins != self_faster) continue; // it works against the time difference
    findings.push_back({&mechanism, *s, *o, ratio});
  }
  // Strongest counter feeding the bottleneck first, then the strongest of the others.
  std::ranges::stable_sort(findings, [&](const Finding& a, const Finding& b) {
    const bool a_feeds = feeds(*a.mechanism, bottleneck);
    const bool b_feeds = feeds(*b.mechanism, bottleneck);
    if (a_feeds != b_feeds) return a_feeds;
    return a.ratio > b.ratio;
  });
  auto say = [&](const Finding& f) {
    return self_faster ? f.mechanism->better(f.self_value, f.other_value, f.ratio)
                       : f.mechanism->worse(f.self_value, f.other_value, f.ratio);
  };
  std::string because;
  if (!findings.empty()) {
    because = say(findings.front());
    const auto supporting = std::ranges::find_if(findings.begin() + 1, findings.end(), [&](const Finding& f) {
      return f.ratio >= kSupporting && f.mechanism != findings.front().mechanism;
    });
    if (supporting != findings.end()) because += ", " + say(*supporting);
  }
  if (term != nullptr) {
    const double self_term_us = self.prediction.time_terms_us.at(term->key);
    const double other_term_us = other.prediction.time_terms_us.at(term->key);
    const std::string gap =
        std::string(term->shown) + " " + number(self_term_us) + " vs " + number(other_term_us) + " µs";
    because = because.empty() ? gap : gap + " (" + because + ")";
  } else if (because.empty()) {
    because = "bottleneck " + self.prediction.bottleneck + " vs " + other.prediction.bottleneck;
  }
  return subject + ": " + because + "; " + speed(self_us, other_us);
}

std::string explain_alone(const Candidate& candidate, const DeviceProfile& profile) {
  const Prediction& p = candidate.prediction;
  std::string text = "bottleneck " + (p.bottleneck.empty() ? std::string("unknown") : p.bottleneck);
  const double dram_gb_per_s = profile.dram.read_bandwidth_gb_per_s.value;
  if (p.achieved_bandwidth_gb_per_s > 0 && dram_gb_per_s > 0) {
    text += ", " + number(p.achieved_bandwidth_gb_per_s) + " GB/s useful (" +
            number(100.0 * p.achieved_bandwidth_gb_per_s / dram_gb_per_s) + "% of DRAM read bandwidth)";
  }
  // Where the issue slots bound the time, the FLOP rate is the headline (a GEMM, a convolution).
  const int clock_mhz = std::max(profile.device.sm_clock_mhz_after, profile.device.sm_clock_mhz_before);
  const double peak_gflop_per_s =
      f32_flops_per_sm_cycle(profile.device.compute_capability_major, profile.device.compute_capability_minor) *
      profile.device.sm_count * clock_mhz / 1.0e3;
  if ((p.bottleneck == "compute" || p.bottleneck == "issue") && p.achieved_gflop_per_s > 0 && peak_gflop_per_s > 0) {
    text += ", " + number(p.achieved_gflop_per_s) + " GFLOP/s (" +
            number(100.0 * p.achieved_gflop_per_s / peak_gflop_per_s) + "% of FP32 peak)";
  }
  const CounterSummary counters = summarize(p);
  if (counters.load_sectors_per_request)
    text += ", " + number(*counters.load_sectors_per_request) + " sectors per load request";
  if (counters.store_sectors_per_request)
    text += ", " + number(*counters.store_sectors_per_request) + " per store request";
  for (const auto& [ways, op] :
       {std::pair{counters.shared_load_ways, "loads"}, {counters.shared_store_ways, "stores"}}) {
    if (ways && *ways >= 1.05) text += ", " + number(*ways) + "-way bank conflict on shared " + op;
  }
  if (candidate.blocks_per_sm > 0)
    text += ", up to " + std::to_string(candidate.blocks_per_sm) + " resident blocks per SM";
  if (const auto idle = idle_sm_warning(p.grid_blocks, profile.device.sm_count)) text += " (" + *idle + ")";
  return text;
}

} // namespace cachewise::advisor
