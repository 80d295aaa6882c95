// cachewise::advisor::CandidateRanking — rank_pool()'s ranking fed batch by batch, for a source
// of many candidates (a kernel spec's space).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cachewise/advisor/candidate_pool.hpp"
#include "cachewise/advisor/rejection_tally.hpp"
#include "cachewise/advisor/suggest_options.hpp"
#include "cachewise/advisor/suggestion.hpp"
#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// rank_pool's ranking fed batch by batch, so that a source of many candidates (a kernel spec's
/// space) need not hold them all: each batch is screened when it arrives, and only the
/// candidates the ranking can still need stay whole (with their predict functions and
/// predictions). The rest leave a record of their config and predicted times (about 60 bytes
/// and 8 a parameter), from which the best's contrast (the slowest config differing from it in
/// one parameter) is found; when that one was dropped, `rebuild` makes it again and it is
/// predicted again (predictions are deterministic). Ranks, rejections and reasons equal
/// rank_pool's over the same candidates in the same order.
class CandidateRanking {
public:
  /// `expected`: at most how many candidates the batches hold. `keep_all`: every candidate
  /// stays whole (rank_pool); otherwise, when the refined set (max(refined, top)) spans
  /// `expected`, each batch is refined as it arrives and the best `top` by refined prediction
  /// stay whole, else the best 2 x max(refined, top) by screening do, refined at finish().
  CandidateRanking(const DeviceProfile& profile, const SuggestOptions& options, std::size_t expected,
                   bool keep_all = false);
  ~CandidateRanking();
  CandidateRanking(const CandidateRanking&) = delete;
  CandidateRanking& operator=(const CandidateRanking&) = delete;

  /// Predicts the batch (in parallel, options.threads); a candidate too long to trace is
  /// rejected (stage trace). Any other error is kept and rethrown by finish(); later batches
  /// are then not predicted.
  void screen(std::vector<PredictableCandidate> batch);
  std::size_t held() const;      ///< candidates held whole now
  std::size_t peak_held() const; ///< the most held whole at once, a batch being screened included
  std::size_t screened() const;  ///< candidates predicted so far, those too long to trace included

  /// Refines, ranks and explains: rank_pool's result for the candidates screened, with
  /// `admission` the rejections before screening and `enumerated` the configs those and the
  /// screened candidates came from.
  Suggestion finish(const ProblemSpec& problem, const std::string& subject, std::uint64_t space_size,
                    const RejectionTally& admission, std::int64_t enumerated,
                    const std::function<PredictableCandidate(const Config&)>& rebuild = {});

private:
  struct State;
  std::unique_ptr<State> state_;
};

} // namespace cachewise::advisor
