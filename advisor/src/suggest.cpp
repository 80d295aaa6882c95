// suggest(): enumerate the family's space, let the model build and check each config, predict
// the survivors (screening all with a small work budget, then refining the best), rank and
// explain.
#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include "cachewise/advisor.hpp"
#include "cachewise/model.hpp"
#include "cachewise/model/families/device_pattern.hpp"

namespace cachewise::advisor {

std::string describe(const ProblemSpec& problem) {
  std::string text = problem.family + " n=" + std::to_string(problem.n);
  if (problem.m != 0) text += " m=" + std::to_string(problem.m);
  if (problem.k != 0) text += " k=" + std::to_string(problem.k);
  return text + " " + to_string(problem.dtype);
}

namespace {

/// "tile (8) must be a multiple of block_x (16)" -> "tile (#) must be a multiple of block_x (#)",
/// so rejections group by rule rather than by value. Digits inside a word ("stencil3d",
/// "block_x2") are part of a name and stay.
std::string reason_without_numbers(std::string_view message) {
  auto is_word = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  std::string reason;
  for (std::size_t i = 0; i < message.size();) {
    if (!is_digit(message[i])) {
      reason += message[i++];
      continue;
    }
    std::size_t end = i;
    while (end < message.size() && is_digit(message[end])) ++end;
    const bool in_word = (i > 0 && is_word(message[i - 1])) || (end < message.size() && is_word(message[end]));
    reason += in_word ? std::string(message.substr(i, end - i)) : std::string("#");
    i = end;
  }
  return reason;
}

/// When nothing is feasible, the rejections of the furthest check any config reached say
/// most about the problem: e.g. "arrays need ... bytes" rather than the rules of some tiles.
[[noreturn]] void throw_nothing_feasible(const std::string& subject, const DeviceProfile& profile,
                                         const std::vector<RejectionCount>& rejections, std::int64_t total) {
  if (rejections.empty()) throw InputError(subject + ": the search space is empty");
  const RejectionStage furthest = std::ranges::max(rejections, {}, &RejectionCount::stage).stage;
  std::vector<RejectionCount> at_furthest;
  std::ranges::copy_if(rejections, std::back_inserter(at_furthest), [&](const auto& r) { return r.stage == furthest; });
  const RejectionCount& most = at_furthest.front(); // sorted by count already
  if (at_furthest.size() == 1) throw InputError(subject + ": " + most.message);
  throw InputError("no config of " + subject + " fits " + profile.device.name + " (" + std::to_string(total) +
                   " rejected; most often " + most.example + ": " + most.message + ")");
}

/// Sum of the global arrays' bytes, or a message when it overflows 64 bits or exceeds the
/// device memory. Shared arrays live on chip and are checked by check_fits_device.
std::optional<std::string> global_memory_problem(const KernelPattern& pattern, const DeviceProfile& profile) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t total_bytes = 0;
  for (const ArrayDecl& array : pattern.arrays) {
    if (array.space != MemorySpace::global) continue;
    std::int64_t bytes = array.element_bytes;
    for (std::int64_t extent : array.extents) {
      if (extent > 0 && bytes > kMax / extent) return "array '" + array.name + "' overflows 64-bit byte counts";
      bytes *= extent;
    }
    if (total_bytes > kMax - bytes) return "arrays overflow 64-bit byte counts";
    total_bytes += bytes;
  }
  if (profile.device.global_memory_bytes > 0 && total_bytes > profile.device.global_memory_bytes) {
    return "arrays need " + std::to_string(total_bytes) + " bytes, the device has " +
           std::to_string(profile.device.global_memory_bytes);
  }
  return std::nullopt;
}

Predictor predictor_or_model(const SuggestOptions& options) {
  if (options.predictor) return options.predictor;
  return [](const KernelPattern& pattern, const DeviceProfile& profile, const SimulationOptions& simulation) {
    return simulate(pattern, profile, simulation);
  };
}

/// Builds and checks one config; a rejection when the model or device says no.
void admit(const ProblemSpec& problem, const Config& config, const DeviceProfile& profile, const Predictor& predict,
           CandidatePool& pool) {
  auto reject = [&](RejectionStage stage, std::string message) {
    pool.rejected.push_back({stage, config, std::move(message)});
  };
  try {
    auto pattern = std::make_shared<const KernelPattern>(build_pattern(problem, config, profile.calibration));
    if (const auto problem_text = global_memory_problem(*pattern, profile))
      return reject(RejectionStage::device_memory, *problem_text);
    try {
      check_fits_device(*pattern, profile);
    } catch (const InputError& error) {
      return reject(RejectionStage::device_limits, error.what());
    }
    const int resident_blocks = blocks_per_sm(*pattern, profile);
    if (resident_blocks == 0) return reject(RejectionStage::occupancy, "no block can be resident on an SM");
    PredictableCandidate admitted;
    admitted.candidate.config = config;
    admitted.candidate.threads_per_block = pattern->block.count();
    admitted.candidate.shared_bytes_per_block = shared_bytes_per_block(*pattern);
    admitted.candidate.registers_per_thread = pattern->registers_per_thread;
    admitted.candidate.blocks_per_sm = resident_blocks;
    admitted.predict = [pattern, &profile, predict](const SimulationOptions& simulation) {
      return predict(*pattern, profile, simulation);
    };
    pool.admitted.push_back(std::move(admitted));
  } catch (const InputError& error) {
    reject(RejectionStage::family_rules, error.what());
  }
}

/// Whether two configs of one space differ in exactly one parameter.
bool differ_in_one(const Config& a, const Config& b) {
  int differences = 0;
  for (const auto& [key, value] : a.values()) differences += !b.has(key) || b.get(key) != value ? 1 : 0;
  return differences == 1;
}

/// The reasons: the best's against `contrast` (else the worst, else on its own numbers), the
/// others' against the best.
void explain_ranked(Suggestion& suggestion, const Candidate* contrast, const DeviceProfile& profile) {
  Candidate& best = suggestion.ranked.front();
  if (contrast == nullptr && suggestion.worst && !(suggestion.worst->config == best.config))
    contrast = &*suggestion.worst;
  best.reason = contrast != nullptr ? explain_against(best, *contrast) : explain_alone(best, profile);
  for (std::size_t i = 1; i < suggestion.ranked.size(); ++i) {
    suggestion.ranked[i].reason = explain_against(suggestion.ranked[i], best);
  }
  if (suggestion.worst) suggestion.worst->reason = explain_against(*suggestion.worst, best);
}

/// ranks_before's key: times equal to the nanosecond count as ties; ties go to the config using less.
using RankKey = std::tuple<long long, std::int64_t, std::int64_t, std::int64_t, std::string>;
RankKey rank_key(double time_us, std::int64_t threads_per_block, std::int64_t shared_bytes_per_block,
                 std::int64_t registers_per_thread, const Config& config) {
  return {std::llround(time_us * 1000.0), threads_per_block, shared_bytes_per_block,
          registers_per_thread * threads_per_block, config.to_string()};
}

} // namespace

bool ranks_before(const Candidate& a, const Candidate& b) {
  auto key = [](const Candidate& c) {
    return rank_key(c.prediction.time_us, c.threads_per_block, c.shared_bytes_per_block, c.registers_per_thread,
                    c.config);
  };
  return key(a) < key(b);
}

void rank_candidates(std::span<Candidate> candidates) { std::ranges::sort(candidates, ranks_before); }

void mark_error_bands(Suggestion& suggestion, const DeviceProfile& profile, std::string_view family) {
  const Calibration& calibration = profile.calibration;
  suggestion.calibration = calibration.name;
  suggestion.time_error_band = time_error_band(calibration, family);
  auto mark = [&](Candidate& candidate) {
    candidate.time_band = time_interval(calibration, family, candidate.prediction.time_us);
  };
  for (Candidate& candidate : suggestion.ranked) mark(candidate);
  if (suggestion.worst) mark(*suggestion.worst);
  if (suggestion.ranked.empty() || !suggestion.ranked.front().time_band) return;
  const double best_high_us = suggestion.ranked.front().time_band->high_us;
  for (std::size_t i = 1; i < suggestion.ranked.size(); ++i) {
    suggestion.ranked[i].tie_with_best = suggestion.ranked[i].time_band->low_us <= best_high_us;
  }
}

Suggestion suggest(const ProblemSpec& problem, const DeviceProfile& profile, const SuggestOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.top == 0) throw InputError("--top must be at least 1");
  family_info(problem.family); // unknown family: throws naming the valid ones
  if (problem.n <= 0) throw InputError("n must be positive, got " + std::to_string(problem.n));
  if (problem.m < 0) throw InputError("m must not be negative, got " + std::to_string(problem.m));
  if (problem.k < 0) throw InputError("k must not be negative, got " + std::to_string(problem.k));

  const SearchSpace space = family_search_space(problem, profile, options.fixed);
  CandidatePool pool;
  pool.problem = problem;
  pool.subject = describe(problem);
  pool.space_size = space.unconstrained_size();
  const Predictor predict = predictor_or_model(options);
  for (const Config& config : space.enumerate()) admit(problem, config, profile, predict, pool);
  Suggestion suggestion = rank_pool(std::move(pool), profile, options);
  suggestion.elapsed = std::chrono::steady_clock::now() - start;
  return suggestion;
}

void RejectionTally::add(RejectionStage stage, const Config& config, const std::string& message) {
  Entry& entry = by_reason_[{stage, reason_without_numbers(message)}];
  if (entry.count++ == 0) {
    entry.message = message;
    entry.example = config.to_string();
  }
}

void RejectionTally::merge(const RejectionTally& later) {
  for (const auto& [key, entry] : later.by_reason_) {
    Entry& mine = by_reason_[key];
    if (mine.count == 0) {
      mine.message = entry.message;
      mine.example = entry.example;
    }
    mine.count += entry.count;
  }
}

std::int64_t RejectionTally::total() const {
  std::int64_t sum = 0;
  for (const auto& [key, entry] : by_reason_) sum += entry.count;
  return sum;
}

std::vector<RejectionCount> RejectionTally::sorted() const {
  std::vector<RejectionCount> counts;
  for (const auto& [key, entry] : by_reason_)
    counts.push_back({key.first, key.second, entry.count, entry.message, entry.example});
  std::ranges::stable_sort(counts, std::greater{}, &RejectionCount::count);
  return counts;
}

struct CandidateRanking::State {
  /// A candidate held whole, with its screened time (its prediction may be the refined one).
  struct Whole {
    PredictableCandidate predictable;
    double screened_time_us = 0.0;
  };
  /// A dropped candidate: its config (its shape's keys and words, its values) and times.
  struct Record {
    std::uint32_t shape = 0;
    std::size_t values_at = 0;
    double screened_time_us = 0.0;
    double time_us = 0.0; ///< what it ranks by: refined when each batch is refined
    std::int64_t threads_per_block = 0;
    std::int64_t shared_bytes_per_block = 0;
    std::int64_t registers_per_thread = 0;
  };
  /// A candidate too long to trace when refined as its batch arrived: tallied at finish() in
  /// screening order, the order rank_pool refines in.
  struct LateRejection {
    RankKey screened;
    Rejection rejection;
  };

  State(const DeviceProfile& profile_, const SuggestOptions& options_) : profile(profile_), options(options_) {}

  const DeviceProfile& profile;
  SuggestOptions options;
  std::size_t refine_target = 0; ///< max(refined, top); 0: nothing is refined
  bool refine_each = false;
  bool keep_all = false;
  std::size_t kept = 0; ///< whole candidates left after a compaction
  std::vector<Whole> whole;
  std::vector<Config> shapes; ///< the recorded configs' keys and words, values 0
  std::vector<std::int64_t> values;
  std::vector<Record> records;
  std::optional<Candidate> worst; ///< the last in the final order of those held or recorded
  RejectionTally screening_rejections;
  RejectionTally refinement_rejections;
  std::vector<LateRejection> late_rejections;
  std::size_t handed = 0;
  std::size_t peak = 0;
  std::atomic<std::size_t> simulated{0};
  std::atomic<std::size_t> planned{0};
  std::exception_ptr failure;

  void count_one() {
    const std::size_t done = ++simulated;
    if (options.on_simulated) options.on_simulated(done, planned);
  }

  /// Predicts items[first ..] (count of them); the message of each one too long to trace.
  std::vector<std::optional<std::string>> predict(std::vector<Whole>& items, std::size_t first, std::size_t count,
                                                  bool refining) {
    std::vector<std::optional<std::string>> too_long(count);
    in_parallel(count, options.threads, [&](std::size_t i) {
      Candidate& candidate = items[first + i].predictable.candidate;
      // An unsampled screening prediction is already exact: refining cannot change it.
      if (!refining || candidate.prediction.sampled) {
        try {
          candidate.prediction =
              items[first + i].predictable.predict(refining ? options.refinement : options.screening);
        } catch (const TraceLimitError& error) {
          too_long[i] = error.what();
        }
      }
      count_one();
    });
    if (!refining) {
      for (std::size_t i = 0; i < count; ++i)
        items[first + i].screened_time_us = items[first + i].predictable.candidate.prediction.time_us;
    }
    return too_long;
  }

  /// Drops from items[first .. first + count) those too long to trace, tallied (or, refining
  /// each batch, kept for finish()); returns how many stay.
  std::size_t drop_too_long(std::vector<Whole>& items, std::size_t first, std::size_t count,
                            const std::vector<std::optional<std::string>>& too_long, RejectionTally* tally) {
    std::size_t kept_count = first;
    for (std::size_t i = first; i < first + count; ++i) {
      const Candidate& candidate = items[i].predictable.candidate;
      if (const std::optional<std::string>& message = too_long[i - first]) {
        if (tally != nullptr) {
          tally->add(RejectionStage::trace, candidate.config, *message);
        } else {
          late_rejections.push_back(
              {rank_key(items[i].screened_time_us, candidate.threads_per_block, candidate.shared_bytes_per_block,
                        candidate.registers_per_thread, candidate.config),
               {RejectionStage::trace, candidate.config, *message}});
        }
      } else if (kept_count++ != i) {
        items[kept_count - 1] = std::move(items[i]);
      }
    }
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(kept_count),
                items.begin() + static_cast<std::ptrdiff_t>(first + count));
    return kept_count - first;
  }

  void record(const Whole& dropped) {
    const Candidate& candidate = dropped.predictable.candidate;
    Config shape;
    for (const auto& [key, value] : candidate.config.values()) {
      if (const std::string* word = candidate.config.word(key)) {
        shape.set_word(key, value, *word);
      } else {
        shape.set(key, 0);
      }
    }
    auto found = std::ranges::find(shapes, shape);
    if (found == shapes.end()) found = shapes.insert(shapes.end(), std::move(shape));
    records.push_back({static_cast<std::uint32_t>(found - shapes.begin()), values.size(), dropped.screened_time_us,
                       candidate.prediction.time_us, candidate.threads_per_block, candidate.shared_bytes_per_block,
                       candidate.registers_per_thread});
    for (const auto& [key, value] : candidate.config.values()) values.push_back(value);
  }

  Config config_of(const Record& record) const {
    Config config = shapes[record.shape];
    std::size_t at = record.values_at;
    for (const auto& [key, value] : shapes[record.shape].values()) {
      if (config.word(key) == nullptr) config.set(key, values[at]);
      ++at;
    }
    return config;
  }

  /// Keeps the best `kept` whole and records the rest, once twice as many are held.
  void compact() {
    if (keep_all || whole.size() <= kept || whole.size() - kept <= kept) return;
    const auto before = [](const Whole& a, const Whole& b) {
      return ranks_before(a.predictable.candidate, b.predictable.candidate);
    };
    std::ranges::nth_element(whole, whole.begin() + static_cast<std::ptrdiff_t>(kept), before);
    for (std::size_t i = kept; i < whole.size(); ++i) record(whole[i]);
    whole.erase(whole.begin() + static_cast<std::ptrdiff_t>(kept), whole.end());
  }

  /// The slowest candidate differing from `best` in one parameter, first in screening order
  /// among equals (rank_pool's order): held whole, or rebuilt and predicted again.
  std::optional<Candidate> contrast_of(const Candidate& best,
                                       const std::function<PredictableCandidate(const Config&)>& rebuild) const {
    struct Neighbour {
      RankKey screened;
      double time_us = 0.0;
      const Candidate* whole = nullptr;
      Config config;
    };
    std::vector<Neighbour> neighbours;
    for (const Whole& held : whole) {
      const Candidate& candidate = held.predictable.candidate;
      if (!differ_in_one(best.config, candidate.config)) continue;
      neighbours.push_back(
          {rank_key(held.screened_time_us, candidate.threads_per_block, candidate.shared_bytes_per_block,
                    candidate.registers_per_thread, candidate.config),
           candidate.prediction.time_us,
           &candidate,
           {}});
    }
    for (const Record& dropped : records) {
      Config config = config_of(dropped);
      if (!differ_in_one(best.config, config)) continue;
      neighbours.push_back({rank_key(dropped.screened_time_us, dropped.threads_per_block,
                                     dropped.shared_bytes_per_block, dropped.registers_per_thread, config),
                            dropped.time_us, nullptr, std::move(config)});
    }
    std::ranges::sort(neighbours, {}, &Neighbour::screened);
    const Neighbour* slowest = nullptr;
    for (const Neighbour& neighbour : neighbours) {
      if (slowest == nullptr || neighbour.time_us > slowest->time_us) slowest = &neighbour;
    }
    if (slowest == nullptr) return std::nullopt;
    if (slowest->whole != nullptr) return *slowest->whole;
    if (!rebuild)
      throw std::logic_error("CandidateRanking: a dropped candidate is the best's contrast and there is no rebuild");
    PredictableCandidate again = rebuild(slowest->config);
    again.candidate.prediction = again.predict(options.screening);
    if (refine_each && again.candidate.prediction.sampled)
      again.candidate.prediction = again.predict(options.refinement);
    return std::move(again.candidate);
  }
};

CandidateRanking::CandidateRanking(const DeviceProfile& profile, const SuggestOptions& options, std::size_t expected,
                                   bool keep_all)
    : state_(std::make_unique<State>(profile, options)) {
  State& state = *state_;
  const std::size_t refined =
      options.refined.value_or(static_cast<std::size_t>(profile.calibration.screening_refined_candidates.value));
  state.refine_target = refined == 0 ? 0 : std::max(refined, options.top);
  state.keep_all = keep_all;
  state.refine_each = !keep_all && state.refine_target >= expected && expected > 0;
  const std::size_t most =
      std::max(state.refine_target, options.top); // the tuner asks for every candidate (top: SIZE_MAX)
  state.kept = state.refine_each ? options.top : most <= std::numeric_limits<std::size_t>::max() / 2 ? 2 * most : most;
  state.planned = expected + std::min(expected, state.refine_target);
}

CandidateRanking::~CandidateRanking() = default;

std::size_t CandidateRanking::held() const { return state_->whole.size(); }
std::size_t CandidateRanking::peak_held() const { return state_->peak; }
std::size_t CandidateRanking::screened() const { return state_->handed; }

void CandidateRanking::screen(std::vector<PredictableCandidate> batch) {
  State& state = *state_;
  state.handed += batch.size();
  state.peak = std::max(state.peak, state.whole.size() + batch.size());
  if (state.failure) return;
  try {
    std::vector<State::Whole> items;
    items.reserve(batch.size());
    for (PredictableCandidate& candidate : batch) items.push_back({std::move(candidate), 0.0});
    batch.clear();
    const auto too_long = state.predict(items, 0, items.size(), false);
    state.drop_too_long(items, 0, items.size(), too_long, &state.screening_rejections);
    if (state.refine_each) {
      const auto too_long_refined = state.predict(items, 0, items.size(), true);
      state.drop_too_long(items, 0, items.size(), too_long_refined, nullptr);
    }
    for (State::Whole& item : items) {
      if (!state.worst || ranks_before(*state.worst, item.predictable.candidate))
        state.worst = item.predictable.candidate;
      state.whole.push_back(std::move(item));
    }
    state.compact();
  } catch (...) {
    state.failure = std::current_exception();
  }
}

Suggestion CandidateRanking::finish(const ProblemSpec& problem, const std::string& subject, std::uint64_t space_size,
                                    const RejectionTally& admission, std::int64_t enumerated,
                                    const std::function<PredictableCandidate(const Config&)>& rebuild) {
  State& state = *state_;
  const SuggestOptions& options = state.options;
  if (options.top == 0) throw InputError("--top must be at least 1");
  if (state.failure) std::rethrow_exception(state.failure);
  Suggestion suggestion;
  suggestion.problem = problem;
  suggestion.space_size = space_size;
  suggestion.enumerated = enumerated;
  suggestion.screening = options.screening;
  suggestion.refinement = options.refinement;
  RejectionTally rejections = admission;
  auto tally = [&] {
    suggestion.rejections = rejections.sorted();
    if (state.whole.empty()) throw_nothing_feasible(subject, state.profile, suggestion.rejections, rejections.total());
  };
  rejections.merge(state.screening_rejections);
  tally();

  // Screened candidates, then the most promising refined with the (costlier) refinement
  // options. Refined predictions are ranked among themselves, ahead of the rest: a screened
  // and a refined prediction of different configs are never compared. A candidate too long to
  // trace (TraceLimitError) is rejected alone, when screened or refined; the next best screened
  // one is refined in its place.
  const auto before = [](const State::Whole& a, const State::Whole& b) {
    return ranks_before(a.predictable.candidate, b.predictable.candidate);
  };
  std::ranges::sort(state.whole, before);
  std::size_t refine = 0;
  if (state.refine_each) {
    std::ranges::sort(state.late_rejections, {}, &State::LateRejection::screened);
    for (const State::LateRejection& late : state.late_rejections) {
      state.refinement_rejections.add(late.rejection.stage, late.rejection.config, late.rejection.message);
    }
    refine = state.whole.size() + state.records.size();
  } else {
    refine = std::min({state.refine_target, state.handed, state.whole.size() + state.records.size()});
    refine = std::min(refine, state.whole.size()); // only those held whole can be refined
    // Of a shortlist that leaves candidates out, those screened at `margin` times the `top`-th
    // screened time or more cannot reach the shown ranks (docs/advisor.md): they keep their
    // screened predictions. A shortlist of every candidate is refined whole, as when streamed.
    const double margin = state.refine_target < state.handed
                              ? options.refine_margin.value_or(state.profile.calibration.screening_refine_margin.value)
                              : 0.0;
    std::size_t shortlist = refine;
    const auto within_margin = [&] {
      suggestion.refine_cut_us.reset();
      if (margin <= 0 || shortlist <= options.top) return shortlist;
      const double cut_us = margin * state.whole[options.top - 1].screened_time_us;
      std::size_t within = options.top;
      while (within < shortlist && state.whole[within].screened_time_us < cut_us) ++within;
      if (within < shortlist) suggestion.refine_cut_us = cut_us;
      return within;
    };
    refine = within_margin();
    std::size_t done_refining = 0;
    while (done_refining < refine) {
      state.planned = state.simulated + (refine - done_refining); // those too long to trace leave the count
      const auto too_long = state.predict(state.whole, done_refining, refine - done_refining, true);
      done_refining += state.drop_too_long(state.whole, done_refining, refine - done_refining, too_long,
                                           &state.refinement_rejections);
      shortlist = std::min(shortlist, state.whole.size()); // past the last, none to refine in their place
      refine = within_margin();
    }
  }
  rejections.merge(state.refinement_rejections);
  tally();
  suggestion.refined = static_cast<std::int64_t>(refine);

  std::vector<Candidate> ranked;
  for (const State::Whole& held : state.whole) ranked.push_back(held.predictable.candidate);
  rank_candidates(std::span(ranked).first(std::min(refine, ranked.size())));
  suggestion.feasible = static_cast<std::int64_t>(state.whole.size() + state.records.size());
  if (suggestion.feasible > 1) suggestion.worst = state.records.empty() ? ranked.back() : *state.worst;
  ranked.resize(std::min(ranked.size(), options.top));
  suggestion.ranked = std::move(ranked);
  const std::optional<Candidate> contrast = state.contrast_of(suggestion.ranked.front(), rebuild);
  explain_ranked(suggestion, contrast ? &*contrast : nullptr, state.profile);
  // A built-in family's problem has its sizes; a compiled user kernel's has none: the band
  // over every family's held-out residuals.
  mark_error_bands(suggestion, state.profile, problem.n > 0 ? std::string_view(problem.family) : kAllFamiliesBand);
  return suggestion;
}

Suggestion rank_pool(CandidatePool pool, const DeviceProfile& profile, const SuggestOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RejectionTally admission;
  for (const Rejection& rejection : pool.rejected) admission.add(rejection.stage, rejection.config, rejection.message);
  const auto enumerated = static_cast<std::int64_t>(pool.admitted.size() + pool.rejected.size());
  CandidateRanking ranking(profile, options, pool.admitted.size(), true);
  ranking.screen(std::move(pool.admitted));
  Suggestion suggestion = ranking.finish(pool.problem, pool.subject, pool.space_size, admission, enumerated);
  suggestion.elapsed = std::chrono::steady_clock::now() - start;
  return suggestion;
}

Suggestion suggest_pattern(const KernelPattern& pattern, const DeviceProfile& profile, const SuggestOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  validate_pattern(pattern);
  if (const auto problem_text = global_memory_problem(pattern, profile)) throw InputError(*problem_text);
  check_fits_device(pattern, profile);
  Suggestion suggestion;
  suggestion.problem.family = pattern.name;
  suggestion.space_size = 1;
  suggestion.enumerated = 1;
  suggestion.feasible = 1;
  Candidate candidate;
  candidate.threads_per_block = pattern.block.count();
  candidate.shared_bytes_per_block = shared_bytes_per_block(pattern);
  candidate.registers_per_thread = pattern.registers_per_thread;
  candidate.blocks_per_sm = blocks_per_sm(pattern, profile);
  if (candidate.blocks_per_sm == 0)
    throw InputError("pattern '" + pattern.name + "': no block can be resident on an SM");
  candidate.prediction = predictor_or_model(options)(pattern, profile, options.refinement);
  suggestion.refinement = options.refinement;
  suggestion.refined = 1;
  candidate.reason = explain_alone(candidate, profile);
  suggestion.ranked.push_back(std::move(candidate));
  mark_error_bands(suggestion, profile, kAllFamiliesBand);
  suggestion.elapsed = std::chrono::steady_clock::now() - start;
  return suggestion;
}

} // namespace cachewise::advisor
