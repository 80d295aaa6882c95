// A Kernel Tuner cache against a parameter space and the model: which cached configurations
// are candidates of the space (and why the others are not), how the model's ranking of the
// candidates compares with their measured times, and the measurements as tuning rounds, so a
// run resumes from them (advisor validate/tune --kernel-tuner-cache).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/model/search_space.hpp"
#include "cachewise/tuner/execution.hpp"
#include "cachewise/tuner/kernel_tuner_cache.hpp"
#include "cachewise/tuner/options.hpp"

namespace cachewise::tuner {

struct MatchedEntry {
  Config config;
  const KernelTunerEntry* entry = nullptr;
};

struct UnmatchedEntry {
  const KernelTunerEntry* entry = nullptr;
  std::string reason; ///< "block_size_x=48 is not among the spec's values (16, 32, 64)"
};

struct CacheMatch {
  std::vector<MatchedEntry> matched;
  std::vector<UnmatchedEntry> unmatched; ///< what the space cannot express
  /// Cache parameters the space does not have but that hold one value in every entry
  /// ("use_cmem=1"): left out of the match.
  std::vector<std::string> ignored_parameters;
};

/// A setting outside the space's parameters that the kernel is built with (a spec's define).
struct FixedSetting {
  std::string name;
  std::int64_t value = 0;
};

/// Each entry as a config of `space`, matched by parameter name. An entry is unmatched when a
/// value is not an integer or not among the space's values, a constraint rejects it, it sets a
/// `fixed` name to another value, or it sets a parameter the space lacks (and `fixed` does not
/// name) that takes several values in the cache. Throws InputError when a parameter of the space
/// with several values is not in the cache.
CacheMatch match_cache_to_space(const KernelTunerCache& cache, const SearchSpace& space,
                                const std::vector<FixedSetting>& fixed = {});

/// The cache's matched entries as first-round records of `device_name`: a measured entry with
/// its "times" (its "time" alone when it has none), a failed one as "Kernel Tuner: <error>".
std::vector<RoundRecord> cached_rounds(const CacheMatch& match, const std::string& device_name,
                                       const MeasurementPolicy& policy);

/// One candidate of the model's ranking, best first.
struct PredictedTime {
  Config config;
  double time_us = 0.0;
};

struct ComparedCandidate {
  Config config;
  std::size_t predicted_rank = 0; ///< 1-based, in the model's whole ranking
  double predicted_us = 0.0;
  std::optional<double> measured_ms; ///< empty: the cache records a failure (error)
  std::string error;
  std::size_t measured_rank = 0; ///< 1-based among the measured; 0 when it failed
};

struct RankingComparison {
  std::vector<ComparedCandidate> candidates; ///< ranked by the model and in the cache, in model order
  std::vector<Config> not_ranked;            ///< matched entries the model did not rank (it rejected them)
  std::size_t ranked_not_cached = 0;         ///< ranked candidates the cache has no entry for
  std::size_t measured = 0;                  ///< candidates with a measured time: what the figures are over
  std::size_t best = 0;                      ///< index into candidates of the fastest measured
  std::optional<double> top1_over_best;      ///< the first candidate's time / the best; empty when it failed
  double best_of_top3_over_best = 0.0;       ///< the fastest of the first three measured / the best
  std::optional<double> spearman;            ///< predicted vs measured time; empty below 2 candidates or for a constant
  double within = 1.01;
  std::size_t evaluations_to_within =
      0; ///< candidates in model order, failures included, until one is within `within` x the best
};

/// Throws InputError when no matched entry with a measured time is among `ranked`.
RankingComparison compare_ranking(const std::vector<PredictedTime>& ranked, const CacheMatch& match,
                                  double within = 1.01);

/// Spearman's rank correlation of two equally long samples, ties given their average rank;
/// empty below 2 values or when either sample is constant.
std::optional<double> spearman_correlation(const std::vector<double>& x, const std::vector<double>& y);

nlohmann::json comparison_to_json(const RankingComparison& comparison);

} // namespace cachewise::tuner
