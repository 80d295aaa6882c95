// cachewise::advisor — candidate spaces per family, device-limit filtering, ranking by the
// model's predicted time, and a one-line reason per candidate. Plain C++, no GPU needed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/model.hpp"
#include "cachewise/search_space.hpp"

namespace cachewise::advisor {

// ---------------------------------------------------------------------------------------
// Suggesting a layout for a built-in family.
// ---------------------------------------------------------------------------------------

/// The advisor's candidate space for a family (docs/advisor.md lists the values): tile sizes,
/// pads, block shapes, elements per thread, vector widths. `fixed` pins keys to one value
/// (e.g. copy's `stride`, stencil2d's `radius`); an unknown key throws InputError. The only
/// constraints are the advisor's own search policy (whole warps, no duplicate configs);
/// family rules and device limits are left to build_pattern and check_fits_device.
SearchSpace family_search_space(const ProblemSpec& problem, const DeviceProfile& profile, const Config& fixed = {});

/// Predicts one pattern: model::simulate by default; tests inject their own.
using Predictor = std::function<Prediction(const KernelPattern&, const DeviceProfile&, const SimulationOptions&)>;

struct SuggestOptions {
  std::size_t top = 5;
  Config fixed; ///< keys pinned by the user (--fix)
  /// Every candidate is predicted with `screening`; the best `refined` of them are predicted
  /// again with `refinement` (unless screening simulated them exactly, Prediction::sampled
  /// false) and ranked on that. Screening simulates 4 SMs' worth of blocks on a small budget
  /// (docs/advisor.md: its near-ties are reordered, so the refined set is generous).
  SimulationOptions screening{.work_budget = std::int64_t{1} << 13, .simulated_sm_count = 4};
  SimulationOptions refinement{};
  /// Unset: the profile calibration's screening_refined_candidates (docs/calibration.md).
  std::optional<std::size_t> refined;
  /// Candidates are predicted on this many threads (0: one per hardware thread); the
  /// predictor must then be safe to call concurrently (model simulate is).
  std::size_t threads = 0;
  Predictor predictor; ///< empty: model simulate
  /// Called after each simulation (screening and refinement alike) with how many are done and
  /// how many there will be, from the simulating threads (it must be thread-safe).
  std::function<void(std::size_t simulated, std::size_t total)> on_simulated;
};

/// The counters the suggest table shows, derived from a prediction's CUPTI-named metrics
/// (nullopt when the metric is absent, e.g. no shared-memory access).
struct CounterSummary {
  std::optional<double> load_sectors_per_request;  ///< global loads
  std::optional<double> store_sectors_per_request; ///< global stores
  std::optional<double> shared_load_ways; ///< shared-load wavefronts per conflict-free one: 1 = no bank conflict
  std::optional<double> shared_store_ways;
  std::optional<double> l1_hit_pct;
  std::optional<double> l2_hit_pct;
};
CounterSummary summarize(const Prediction& prediction);

/// What ptxas reported for a compiled candidate (a user kernel), from its -v output.
struct CompilerResources {
  std::int64_t registers_per_thread = 0;
  std::int64_t stack_frame_bytes = 0;
  std::int64_t spill_store_bytes = 0;
  std::int64_t spill_load_bytes = 0;
  std::int64_t static_shared_bytes = 0;
  friend bool operator==(const CompilerResources&, const CompilerResources&) = default;
};

/// A config with its pattern's resource use and its prediction.
struct Candidate {
  Config config;
  std::int64_t threads_per_block = 0;
  std::int64_t shared_bytes_per_block = 0;
  std::int64_t registers_per_thread = 0;
  int blocks_per_sm = 0;
  Prediction prediction;
  std::string reason;                        ///< one line naming the mechanism, from the numbers
  std::optional<CompilerResources> compiled; ///< user kernels only
  /// The predicted time's error band (the profile calibration's, docs/calibration.md); none
  /// when the calibration has no band.
  std::optional<TimeInterval> time_band;
  /// Not the best, but its band overlaps the best's: the model cannot tell them apart; measure.
  bool tie_with_best = false;
};

/// Where a config was rejected, in check order: build_pattern's family rules, the global
/// arrays against device memory, check_fits_device's limits, then residency (blocks_per_sm).
/// A compiled candidate (a user kernel) can also fail to compile, before any other check, and
/// be too long to trace (TraceLimitError), when admitted or when predicted, after every check.
enum class RejectionStage { compile, family_rules, device_memory, device_limits, occupancy, trace };
std::string to_string(RejectionStage stage);

struct RejectionCount {
  RejectionStage stage = RejectionStage::family_rules;
  std::string reason; ///< the model's message with numbers replaced by '#'
  std::int64_t count = 0;
  std::string message; ///< the first full message with this reason
  std::string example; ///< the config that got it
};

struct Suggestion {
  ProblemSpec problem;
  std::vector<Candidate> ranked;          ///< best first, at most `top`
  std::optional<Candidate> worst;         ///< the slowest feasible candidate, for contrast
  std::uint64_t space_size = 0;           ///< unconstrained product of the value lists
  std::int64_t enumerated = 0;            ///< configs left after the space's policy constraints
  std::int64_t feasible = 0;              ///< configs that built, fit the device and were predicted
  std::vector<RejectionCount> rejections; ///< most frequent first
  SimulationOptions screening;            ///< what every candidate was predicted with
  SimulationOptions refinement;           ///< what the best `refined` were predicted with again
  std::int64_t refined = 0;
  std::string calibration;                      ///< the profile calibration's name ("defaults" without one)
  std::optional<TimeErrorBand> time_error_band; ///< the band applied to every candidate, if any
  std::chrono::duration<double> elapsed{};
};

/// Enumerates the family's space, builds each config's pattern, drops those the model or the
/// device rejects (counted by reason), predicts the rest and ranks them: shortest predicted
/// time first, ties broken by fewer threads, then less shared memory, then fewer registers.
/// Throws InputError for a bad problem, an unknown family, or when no config is feasible
/// (naming the most frequent rejection).
Suggestion suggest(const ProblemSpec& problem, const DeviceProfile& profile, const SuggestOptions& options = {});

/// A candidate from any source (a family's pattern, a compiled user kernel) with its config
/// and resources filled in, and how to predict it (safe to call concurrently).
struct PredictableCandidate {
  Candidate candidate;
  std::function<Prediction(const SimulationOptions&)> predict;
};

struct Rejection {
  RejectionStage stage = RejectionStage::family_rules;
  Config config;
  std::string message;
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

/// Rejections counted by stage and reason (the message with its numbers replaced by '#'), each
/// with the first message and config that got it.
class RejectionTally {
public:
  void add(RejectionStage stage, const Config& config, const std::string& message);
  /// Adds the counts of `later`, tallied after this one: a reason both hold keeps this one's
  /// first message and config.
  void merge(const RejectionTally& later);
  std::int64_t total() const;
  std::vector<RejectionCount> sorted() const; ///< most frequent first

private:
  struct Entry {
    std::int64_t count = 0;
    std::string message;
    std::string example;
  };
  std::map<std::pair<RejectionStage, std::string>, Entry> by_reason_;
};

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

/// Runs run_one(0 .. count-1) on `threads` threads (0: one per hardware thread); the first
/// exception stops the rest and is rethrown.
void in_parallel(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& run_one);

/// Predicts and explains one custom pattern (from --pattern-file).
Suggestion suggest_pattern(const KernelPattern& pattern, const DeviceProfile& profile,
                           const SuggestOptions& options = {});

/// Sets the calibration's name, and each candidate's band and tie flag, from `profile`'s
/// calibration: the band of `family` (kAllFamiliesBand for a custom pattern).
void mark_error_bands(Suggestion& suggestion, const DeviceProfile& profile, std::string_view family);

/// Orders candidates best first (see suggest()).
bool ranks_before(const Candidate& a, const Candidate& b);
void rank_candidates(std::span<Candidate> candidates);

/// One line explaining `candidate` against `other`, a config differing in the parameters
/// that the text names, e.g. "pad=1 (vs 0) removes the 32-way bank conflict of shared
/// loads: 1.9x faster". The mechanism is the counter that differs most among those feeding
/// the slower one's bottleneck.
std::string explain_against(const Candidate& candidate, const Candidate& other);

/// One line explaining a candidate on its own numbers (no neighbour to compare with).
std::string explain_alone(const Candidate& candidate, const DeviceProfile& profile);

nlohmann::json suggestion_to_json(const Suggestion& suggestion);

/// "transpose n=4096 f32", with m and k only when set.
std::string describe(const ProblemSpec& problem);

} // namespace cachewise::advisor
