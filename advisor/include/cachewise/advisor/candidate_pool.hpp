// cachewise::advisor::CandidatePool — candidates from any source (a family's patterns, a user
// kernel's compiled configs) handed to the advisor's ranking, and rank_pool() that ranks them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cachewise/advisor/candidate.hpp"
#include "cachewise/advisor/rejection.hpp"
#include "cachewise/advisor/suggest_options.hpp"
#include "cachewise/advisor/suggestion.hpp"
#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// A candidate from any source (a family's pattern, a compiled user kernel) with its config
/// and resources filled in, and how to predict it (safe to call concurrently).
struct PredictableCandidate {
  Candidate candidate;
  std::function<Prediction(const SimulationOptions&)> predict;
};

/// What a source of candidates hands to the ranking: the feasible and the rejected configs.
struct CandidatePool {
  ProblemSpec problem; ///< what Suggestion::problem reports
  std::string subject; ///< names the problem in errors ("transpose n=4096 f32")
  std::uint64_t space_size = 0;
  std::vector<PredictableCandidate> admitted;
  std::vector<Rejection> rejected;
};

/// The second half of suggest(), for candidates from any source: screens every admitted
/// candidate, refines the best, ranks and explains them, and tallies the rejections. A
/// candidate whose predict throws TraceLimitError is rejected (stage trace) and the next best
/// screened one is refined in its place. Throws InputError naming the most frequent rejection
/// when nothing is left to rank.
Suggestion rank_pool(CandidatePool pool, const DeviceProfile& profile, const SuggestOptions& options = {});

} // namespace cachewise::advisor
