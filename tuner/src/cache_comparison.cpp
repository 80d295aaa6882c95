// Kernel Tuner measurements against a parameter space and the model's ranking.
#include "cachewise/tuner/cache_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

#include "cachewise/tuner/statistics.hpp"

namespace cachewise::tuner {
namespace {

std::string value_list(const std::vector<std::int64_t>& values) {
  std::string text;
  for (const std::int64_t value : values) text += (text.empty() ? "" : ", ") + std::to_string(value);
  return text;
}

/// Why `entry` is not a candidate of `space`, or empty when it is one (then `config` is set).
std::string express(const KernelTunerEntry& entry, const std::vector<std::string>& cache_parameters,
                    const SearchSpace& space, const std::vector<FixedSetting>& fixed,
                    const std::set<std::string>& ignored, Config& config) {
  for (const auto& [name, values] : space.parameters()) {
    const auto position = std::ranges::find(cache_parameters, name);
    if (position == cache_parameters.end()) {
      config.set(name, values.front()); // one value: match_cache_to_space checked
      continue;
    }
    const auto i = static_cast<std::size_t>(position - cache_parameters.begin());
    const std::string setting = name + "=" + entry.value_texts[i];
    if (!entry.values[i]) return setting + " is not an integer";
    if (std::ranges::find(values, *entry.values[i]) == values.end()) {
      return setting + " is not among the spec's values (" + value_list(values) + ")";
    }
    config.set(name, *entry.values[i]);
  }
  for (std::size_t i = 0; i < cache_parameters.size(); ++i) {
    const std::string& name = cache_parameters[i];
    const bool in_space =
        std::ranges::any_of(space.parameters(), [&](const auto& parameter) { return parameter.first == name; });
    if (in_space) continue;
    const std::string setting = name + "=" + entry.value_texts[i];
    if (const auto set = std::ranges::find(fixed, name, &FixedSetting::name); set != fixed.end()) {
      if (entry.values[i] != set->value) return setting + ": the spec fixes " + name + "=" + std::to_string(set->value);
    } else if (!ignored.contains(name)) {
      return setting + ": the spec has no parameter " + name;
    }
  }
  for (const SearchSpace::Constraint& constraint : space.constraints()) {
    if (!constraint.holds(config)) return "breaks the spec's constraint " + constraint.description;
  }
  return {};
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::ranges::stable_sort(order, {}, [&](std::size_t i) { return values[i]; });
  std::vector<double> ranks(values.size());
  for (std::size_t begin = 0; begin < order.size();) {
    std::size_t end = begin + 1;
    while (end < order.size() && values[order[end]] == values[order[begin]]) ++end;
    // Positions begin..end-1 (ranks begin+1..end) share their mean.
    const double rank = (static_cast<double>(begin + 1) + static_cast<double>(end)) / 2.0;
    for (std::size_t k = begin; k < end; ++k) ranks[order[k]] = rank;
    begin = end;
  }
  return ranks;
}

} // namespace

CacheMatch match_cache_to_space(const KernelTunerCache& cache, const SearchSpace& space,
                                const std::vector<FixedSetting>& fixed) {
  const std::vector<std::string>& names = cache.parameters;
  for (const auto& [name, values] : space.parameters()) {
    if (values.size() > 1 && std::ranges::find(names, name) == names.end()) {
      std::string known;
      for (const std::string& cached : names) known += (known.empty() ? "" : ", ") + cached;
      throw InputError("the spec's parameter " + name + " (" + value_list(values) +
                       ") is not in the cache's tune_params_keys (" + known + ")");
    }
  }
  CacheMatch match;
  std::set<std::string> ignored;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const bool in_space =
        std::ranges::any_of(space.parameters(), [&](const auto& parameter) { return parameter.first == names[i]; });
    const bool is_fixed = std::ranges::find(fixed, names[i], &FixedSetting::name) != fixed.end();
    if (in_space || is_fixed || cache.entries.empty()) continue;
    const std::string& first = cache.entries.front().value_texts[i];
    const bool one_value =
        std::ranges::all_of(cache.entries, [&](const KernelTunerEntry& e) { return e.value_texts[i] == first; });
    if (one_value) {
      ignored.insert(names[i]);
      match.ignored_parameters.push_back(names[i] + "=" + first);
    }
  }
  for (const KernelTunerEntry& entry : cache.entries) {
    Config config;
    std::string reason = express(entry, names, space, fixed, ignored, config);
    if (reason.empty()) {
      match.matched.push_back({std::move(config), &entry});
    } else {
      match.unmatched.push_back({&entry, std::move(reason)});
    }
  }
  return match;
}

std::vector<RoundRecord> cached_rounds(const CacheMatch& match, const std::string& device_name,
                                       const MeasurementPolicy& policy) {
  std::vector<RoundRecord> rounds;
  for (const MatchedEntry& matched : match.matched) {
    RoundRecord record;
    record.config = matched.config;
    record.round = 0;
    record.device.name = device_name;
    if (matched.entry->time_ms) {
      record.ok = true;
      record.samples_ms =
          matched.entry->times_ms.empty() ? std::vector<double>{*matched.entry->time_ms} : matched.entry->times_ms;
      const MedianEstimate estimate = estimate_median(record.samples_ms, policy.confidence);
      record.converged = estimate.ci_width_fraction() <= policy.max_ci_width_fraction;
    } else {
      record.failure = "Kernel Tuner: " + matched.entry->error;
    }
    rounds.push_back(std::move(record));
  }
  return rounds;
}

std::optional<double> spearman_correlation(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return std::nullopt;
  const std::vector<double> rx = average_ranks(x);
  const std::vector<double> ry = average_ranks(y);
  // Pearson's correlation of the ranks (exact with ties, unlike 1 - 6 sum d^2 / (n (n^2 - 1))).
  const double mean = (static_cast<double>(x.size()) + 1.0) / 2.0;
  double sxy = 0.0, sxx = 0.0, syy = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0.0 || syy == 0.0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

RankingComparison compare_ranking(const std::vector<PredictedTime>& ranked, const CacheMatch& match, double within) {
  std::map<std::string, const KernelTunerEntry*> cached;
  for (const MatchedEntry& matched : match.matched) cached[matched.config.to_string()] = matched.entry;
  RankingComparison comparison;
  comparison.within = within;
  std::set<std::string> ranked_keys;
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const std::string key = ranked[i].config.to_string();
    ranked_keys.insert(key);
    const auto found = cached.find(key);
    if (found == cached.end()) {
      ++comparison.ranked_not_cached;
      continue;
    }
    comparison.candidates.push_back(
        {ranked[i].config, i + 1, ranked[i].time_us, found->second->time_ms, found->second->error, 0});
  }
  for (const MatchedEntry& matched : match.matched) {
    if (!ranked_keys.contains(matched.config.to_string())) comparison.not_ranked.push_back(matched.config);
  }
  std::vector<std::size_t> measured;
  for (std::size_t i = 0; i < comparison.candidates.size(); ++i) {
    if (comparison.candidates[i].measured_ms) measured.push_back(i);
  }
  if (measured.empty())
    throw InputError("no cached configuration with a measured time is among the candidates the model ranked");
  comparison.measured = measured.size();
  std::vector<std::size_t> by_time = measured;
  std::ranges::stable_sort(by_time, {}, [&](std::size_t i) { return *comparison.candidates[i].measured_ms; });
  for (std::size_t rank = 0; rank < by_time.size(); ++rank)
    comparison.candidates[by_time[rank]].measured_rank = rank + 1;
  comparison.best = by_time.front();
  const double best_ms = *comparison.candidates[comparison.best].measured_ms;
  if (comparison.candidates.front().measured_ms)
    comparison.top1_over_best = *comparison.candidates.front().measured_ms / best_ms;
  double top3_ms = *comparison.candidates[measured.front()].measured_ms;
  for (std::size_t k = 1; k < std::min<std::size_t>(3, measured.size()); ++k)
    top3_ms = std::min(top3_ms, *comparison.candidates[measured[k]].measured_ms);
  comparison.best_of_top3_over_best = top3_ms / best_ms;
  std::vector<double> predicted_us, measured_ms;
  for (const std::size_t i : measured) {
    predicted_us.push_back(comparison.candidates[i].predicted_us);
    measured_ms.push_back(*comparison.candidates[i].measured_ms);
  }
  comparison.spearman = spearman_correlation(predicted_us, measured_ms);
  for (std::size_t i = 0; i < comparison.candidates.size(); ++i) {
    const std::optional<double>& time = comparison.candidates[i].measured_ms;
    if (time && *time <= within * best_ms) {
      comparison.evaluations_to_within = i + 1;
      break;
    }
  }
  return comparison;
}

nlohmann::json comparison_to_json(const RankingComparison& comparison) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const ComparedCandidate& candidate : comparison.candidates) {
    nlohmann::json row = {{"config", candidate.config.to_string()},
                          {"predicted_rank", candidate.predicted_rank},
                          {"predicted_us", candidate.predicted_us}};
    if (candidate.measured_ms) {
      row["measured_us"] = *candidate.measured_ms * 1e3;
      row["measured_rank"] = candidate.measured_rank;
    } else {
      row["error"] = candidate.error;
    }
    candidates.push_back(std::move(row));
  }
  nlohmann::json not_ranked = nlohmann::json::array();
  for (const Config& config : comparison.not_ranked) not_ranked.push_back(config.to_string());
  const ComparedCandidate& best = comparison.candidates[comparison.best];
  return {{"candidates", candidates},
          {"not_ranked", not_ranked},
          {"ranked_not_cached", comparison.ranked_not_cached},
          {"measured", comparison.measured},
          {"best",
           {{"config", best.config.to_string()},
            {"measured_us", *best.measured_ms * 1e3},
            {"predicted_rank", best.predicted_rank}}},
          {"top1_over_best", comparison.top1_over_best ? nlohmann::json(*comparison.top1_over_best) : nlohmann::json()},
          {"best_of_top3_over_best", comparison.best_of_top3_over_best},
          {"spearman", comparison.spearman ? nlohmann::json(*comparison.spearman) : nlohmann::json()},
          {"within", comparison.within},
          {"evaluations_to_within", comparison.evaluations_to_within}};
}

} // namespace cachewise::tuner
