// validate --spec S --kernel-tuner-cache FILE: read the cache, match its configurations to the
// spec's candidates, rank the candidates with the front end, print the comparison.
#include "validate_cache.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

#include "cachewise/frontend/spec_expressions.hpp"
#include "cachewise/tuner/cache_comparison.hpp"
#include "common.hpp"
#include "progress.hpp"

namespace cachewise::cli {
namespace {

/// Reasons listed one line each, the most frequent first; the rest counted.
constexpr std::size_t kReasonsShown = 12;

std::string fixed(double value, int precision) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

void print_unmatched(const tuner::CacheMatch& match) {
  if (match.unmatched.empty()) return;
  std::map<std::string, std::vector<const tuner::KernelTunerEntry*>> by_reason;
  for (const tuner::UnmatchedEntry& unmatched : match.unmatched) by_reason[unmatched.reason].push_back(unmatched.entry);
  std::vector<std::pair<std::string, std::vector<const tuner::KernelTunerEntry*>>> reasons(by_reason.begin(),
                                                                                           by_reason.end());
  std::ranges::stable_sort(reasons, std::greater<>{}, [](const auto& reason) { return reason.second.size(); });
  std::cout << "\nnot expressible by the spec: " << match.unmatched.size() << " cached configurations\n";
  for (std::size_t i = 0; i < std::min(kReasonsShown, reasons.size()); ++i) {
    const auto& [reason, entries] = reasons[i];
    std::cout << "  " << reason << ": " << entries.size()
              << (entries.size() == 1 ? " configuration (" : " configurations, e.g. ") << entries.front()->key
              << (entries.size() == 1 ? ")" : "") << '\n';
  }
  if (reasons.size() > kReasonsShown) std::cout << "  and " << reasons.size() - kReasonsShown << " more reasons\n";
}

void print_comparison(const tuner::KernelTunerCache& cache, const std::string& cache_file, const std::string& subject,
                      const LoadedProfile& loaded, const tuner::CacheMatch& match,
                      const tuner::RankingComparison& comparison) {
  const std::size_t failed = static_cast<std::size_t>(
      std::ranges::count_if(cache.entries, [](const auto& e) { return !e.time_ms.has_value(); }));
  std::cout << "Kernel Tuner cache " << cache_file << ": " << cache.kernel_name << " on " << cache.device_name
            << ", problem_size " << cache.problem_size << ", " << cache.entries.size() << " configurations (" << failed
            << " failed or skipped)" << (cache.complete ? "" : ", unfinished (no closing braces)") << '\n'
            << "ranked: " << subject << " on the profile of " << loaded.profile.device.name << " ("
            << loaded.path.string() << ", " << loaded.source << ")\n";
  for (const std::string& ignored : match.ignored_parameters)
    std::cout << "cache parameter " << ignored << " (one value throughout): not in the spec, ignored\n";
  std::cout << "compared: " << comparison.candidates.size() << " candidates ranked by the model and in the cache, "
            << comparison.measured << " with a measured time; " << comparison.ranked_not_cached
            << " ranked candidates not in the cache\n\n";

  std::size_t width = 6;
  for (const tuner::ComparedCandidate& c : comparison.candidates) width = std::max(width, c.config.to_string().size());
  std::cout << std::left << std::setw(7) << "pred #" << std::setw(static_cast<int>(width) + 2) << "config" << std::right
            << std::setw(12) << "pred µs" << std::setw(12) << "meas µs" << std::setw(8) << "meas #" << '\n';
  for (const tuner::ComparedCandidate& c : comparison.candidates) {
    std::cout << std::left << std::setw(7) << c.predicted_rank << std::setw(static_cast<int>(width) + 2)
              << c.config.to_string() << std::right << std::setw(11) << fixed(c.predicted_us, 1) << std::setw(12)
              << (c.measured_ms ? fixed(*c.measured_ms * 1e3, 1) : c.error) << std::setw(8)
              << (c.measured_ms ? std::to_string(c.measured_rank) : "-") << '\n';
  }
  const tuner::ComparedCandidate& best = comparison.candidates[comparison.best];
  const tuner::ComparedCandidate& top = comparison.candidates.front();
  std::cout << "\nbest measured: " << best.config.to_string() << " " << fixed(*best.measured_ms * 1e3, 1)
            << " µs, predicted rank " << best.predicted_rank << '\n'
            << "top-1/best: "
            << (comparison.top1_over_best
                    ? fixed(*comparison.top1_over_best, 3) + " (" + top.config.to_string() + ")"
                    : "- (the model's first, " + top.config.to_string() + ", failed in the cache: " + top.error + ")")
            << '\n'
            << "best of the predicted top 3/best: " << fixed(comparison.best_of_top3_over_best, 3) << '\n'
            << "Spearman (predicted vs measured time, " << comparison.measured << " candidates): "
            << (comparison.spearman ? fixed(*comparison.spearman, 3) : std::string("- (fewer than 2, or a constant)"))
            << '\n'
            << "evaluations in model order to reach " << fixed(comparison.within, 2)
            << "x the best: " << comparison.evaluations_to_within << " of " << comparison.candidates.size() << '\n';
  if (!comparison.not_ranked.empty()) {
    std::cout << "\ncached candidates the model did not rank (it rejected them: see advisor suggest): "
              << comparison.not_ranked.size() << '\n';
    for (const Config& config : comparison.not_ranked) std::cout << "  " << config.to_string() << '\n';
  }
  print_unmatched(match);
}

} // namespace

void run_validate_cache(const KernelOptions& kernel, const std::string& cache_file, const std::string& profile,
                        bool json) {
  const tuner::KernelTunerCache cache =
      tuner::load_kernel_tuner_cache(cache_file); // a bad file fails before the ranking
  const frontend::KernelSpec spec = kernel_spec_from_options(kernel);
  frontend::validate_kernel_spec(spec);
  // A define with an integer value fixes a Kernel Tuner parameter of that name (--define read_only=0).
  std::vector<tuner::FixedSetting> fixed;
  for (const frontend::Define& define : spec.defines) {
    std::int64_t value = 0;
    const char* end = define.value.data() + define.value.size();
    if (!define.value.empty() && std::from_chars(define.value.data(), end, value).ptr == end)
      fixed.push_back({define.name, value});
  }
  const tuner::CacheMatch match =
      tuner::match_cache_to_space(cache, frontend::SpecExpressions(spec).search_space(), fixed);
  if (match.matched.empty()) {
    throw InputError(cache_file + ": none of its " + std::to_string(cache.entries.size()) +
                     " configurations is a candidate of the spec" +
                     (match.unmatched.empty()
                          ? std::string()
                          : " (" + match.unmatched.front().entry->key + ": " + match.unmatched.front().reason + ")"));
  }
  const std::string function = frontend::parse_entry_name(spec.entry).function;
  if (!cache.kernel_name.empty() && cache.kernel_name != function)
    warn("the cache measured kernel " + cache.kernel_name + ", the spec's entry is " + function);
  const LoadedProfile loaded = load_profile_for_cli(profile);
  if (!cache.device_name.empty() && cache.device_name != loaded.profile.device.name) {
    warn("measured on " + cache.device_name + ", predicted on the profile of " + loaded.profile.device.name);
  }
  advisor::SuggestOptions suggest;
  suggest.top = std::numeric_limits<std::size_t>::max();
  Progress progress(false, !json);
  const KernelRanking ranking = rank_kernel(kernel, loaded.profile, suggest, progress);
  std::vector<tuner::PredictedTime> predicted;
  for (const advisor::Candidate& candidate : ranking.suggestion.ranked)
    predicted.push_back({candidate.config, candidate.prediction.time_us});
  const tuner::RankingComparison comparison = tuner::compare_ranking(predicted, match);
  if (!json) return print_comparison(cache, cache_file, ranking.subject, loaded, match, comparison);
  nlohmann::json output = tuner::comparison_to_json(comparison);
  output["kernel"] = ranking.subject;
  output["profile"] = profile_json(loaded);
  output["cache"] = {{"file", cache_file},
                     {"device_name", cache.device_name},
                     {"kernel_name", cache.kernel_name},
                     {"problem_size", cache.problem_size},
                     {"configurations", cache.entries.size()},
                     {"complete", cache.complete},
                     {"ignored_parameters", match.ignored_parameters}};
  output["not_expressible"] = nlohmann::json::array();
  for (const tuner::UnmatchedEntry& unmatched : match.unmatched)
    output["not_expressible"].push_back({{"key", unmatched.entry->key}, {"reason", unmatched.reason}});
  print_json(output);
}

} // namespace cachewise::cli
