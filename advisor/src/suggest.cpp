// suggest(): enumerate the family's space, let the model build and check each config, predict
// the survivors (screening all with a small work budget, then refining the best), rank and
// explain.
#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include "cachewise/advisor.hpp"
#include "cachewise/device_pattern.hpp"

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

class RejectionTally {
public:
  void add(RejectionStage stage, const Config& config, const std::string& message) {
    Entry& entry = by_reason_[{stage, reason_without_numbers(message)}];
    if (entry.count++ == 0) {
      entry.message = message;
      entry.example = config.to_string();
    }
  }
  std::int64_t total() const {
    std::int64_t sum = 0;
    for (const auto& [key, entry] : by_reason_) sum += entry.count;
    return sum;
  }
  /// Most frequent first.
  std::vector<RejectionCount> sorted() const {
    std::vector<RejectionCount> counts;
    for (const auto& [key, entry] : by_reason_) counts.push_back({key.first, key.second, entry.count, entry.message, entry.example});
    std::ranges::stable_sort(counts, std::greater{}, &RejectionCount::count);
    return counts;
  }

private:
  struct Entry {
    std::int64_t count = 0;
    std::string message;
    std::string example;
  };
  std::map<std::pair<RejectionStage, std::string>, Entry> by_reason_;
};

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
  auto reject = [&](RejectionStage stage, std::string message) { pool.rejected.push_back({stage, config, std::move(message)}); };
  try {
    auto pattern = std::make_shared<const KernelPattern>(build_pattern(problem, config, profile.calibration));
    if (const auto problem_text = global_memory_problem(*pattern, profile)) return reject(RejectionStage::device_memory, *problem_text);
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
    admitted.predict = [pattern, &profile, predict](const SimulationOptions& simulation) { return predict(*pattern, profile, simulation); };
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

void explain_ranked(Suggestion& suggestion, const std::vector<Candidate>& all, const DeviceProfile& profile) {
  if (suggestion.ranked.empty()) return;
  Candidate& best = suggestion.ranked.front();
  // The best config's reason: the single change that would cost it the most.
  const Candidate* contrast = nullptr;
  for (const Candidate& other : all) {
    if (differ_in_one(best.config, other.config) &&
        (contrast == nullptr || other.prediction.time_us > contrast->prediction.time_us)) {
      contrast = &other;
    }
  }
  if (contrast == nullptr && suggestion.worst && !(suggestion.worst->config == best.config)) contrast = &*suggestion.worst;
  best.reason = contrast != nullptr ? explain_against(best, *contrast) : explain_alone(best, profile);
  // The others: what they lose against the best.
  for (std::size_t i = 1; i < suggestion.ranked.size(); ++i) {
    suggestion.ranked[i].reason = explain_against(suggestion.ranked[i], best);
  }
  if (suggestion.worst) suggestion.worst->reason = explain_against(*suggestion.worst, best);
}

} // namespace

void in_parallel(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& run_one) {
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  threads = std::min(threads, count);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        run_one(i);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = count;
      }
    }
  };
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  pool.clear(); // joins
  if (failure) std::rethrow_exception(failure);
}

bool ranks_before(const Candidate& a, const Candidate& b) {
  // Times equal to the nanosecond count as ties; ties go to the config using less.
  auto key = [](const Candidate& c) {
    return std::tuple{std::llround(c.prediction.time_us * 1000.0), c.threads_per_block, c.shared_bytes_per_block,
                      c.registers_per_thread * c.threads_per_block, c.config.to_string()};
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

Suggestion rank_pool(CandidatePool pool, const DeviceProfile& profile, const SuggestOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.top == 0) throw InputError("--top must be at least 1");
  Suggestion suggestion;
  suggestion.problem = pool.problem;
  suggestion.space_size = pool.space_size;
  suggestion.enumerated = static_cast<std::int64_t>(pool.admitted.size() + pool.rejected.size());
  std::vector<PredictableCandidate>& admitted = pool.admitted;
  auto tally = [&] {
    RejectionTally rejections;
    for (const Rejection& rejection : pool.rejected) rejections.add(rejection.stage, rejection.config, rejection.message);
    suggestion.rejections = rejections.sorted();
    if (admitted.empty()) throw_nothing_feasible(pool.subject, profile, suggestion.rejections, rejections.total());
  };
  tally();

  // Screen every candidate, then refine the most promising with the (costlier) refinement
  // options. Refined predictions are ranked among themselves, ahead of the rest: a screened
  // and a refined prediction of different configs are never compared. A candidate too long to
  // trace (TraceLimitError) is rejected alone, when screened or refined; the next best screened
  // one is refined in its place.
  suggestion.screening = options.screening;
  suggestion.refinement = options.refinement;
  const std::size_t refined = options.refined.value_or(
      static_cast<std::size_t>(profile.calibration.screening_refined_candidates.value));
  std::size_t refine = refined == 0 ? 0 : std::min(admitted.size(), std::max(refined, options.top));
  std::atomic<std::size_t> simulated{0};
  std::size_t planned = admitted.size() + refine;
  auto count_one = [&] {
    const std::size_t done = ++simulated;
    if (options.on_simulated) options.on_simulated(done, planned);
  };
  // Predicts admitted[first ..] (count of them) and drops those too long to trace; returns how many stay.
  auto predict_range = [&](std::size_t first, std::size_t count, bool refining) {
    std::vector<std::optional<std::string>> too_long(count);
    in_parallel(count, options.threads, [&](std::size_t i) {
      PredictableCandidate& candidate = admitted[first + i];
      // An unsampled screening prediction is already exact: refining cannot change it.
      if (!refining || candidate.candidate.prediction.sampled) {
        try {
          candidate.candidate.prediction = candidate.predict(refining ? options.refinement : options.screening);
        } catch (const TraceLimitError& error) {
          too_long[i] = error.what();
        }
      }
      count_one();
    });
    std::size_t kept = first;
    for (std::size_t i = first; i < first + count; ++i) {
      if (const std::optional<std::string>& message = too_long[i - first]) {
        pool.rejected.push_back({RejectionStage::trace, admitted[i].candidate.config, *message});
      } else if (kept++ != i) {
        admitted[kept - 1] = std::move(admitted[i]);
      }
    }
    admitted.erase(admitted.begin() + static_cast<std::ptrdiff_t>(kept), admitted.begin() + static_cast<std::ptrdiff_t>(first + count));
    return kept - first;
  };
  predict_range(0, admitted.size(), false);
  tally();
  std::ranges::sort(admitted, [](const auto& a, const auto& b) { return ranks_before(a.candidate, b.candidate); });
  refine = std::min(refine, admitted.size());
  std::size_t done_refining = 0;
  while (done_refining < refine) {
    planned = simulated + (refine - done_refining); // those too long to trace leave the count
    done_refining += predict_range(done_refining, refine - done_refining, true);
    refine = std::min(refine, admitted.size()); // past the last, none to refine in their place
  }
  tally();
  suggestion.refined = static_cast<std::int64_t>(refine);

  std::vector<Candidate> all;
  for (PredictableCandidate& evaluated : admitted) all.push_back(std::move(evaluated.candidate));
  std::vector<Candidate> ranked = all;
  rank_candidates(std::span(ranked).first(refine));

  suggestion.feasible = static_cast<std::int64_t>(ranked.size());
  if (ranked.size() > 1) suggestion.worst = ranked.back();
  ranked.resize(std::min(ranked.size(), options.top));
  suggestion.ranked = std::move(ranked);
  explain_ranked(suggestion, all, profile);
  // A built-in family's problem has its sizes; a compiled user kernel's has none: the band
  // over every family's held-out residuals.
  mark_error_bands(suggestion, profile, pool.problem.n > 0 ? std::string_view(pool.problem.family) : kAllFamiliesBand);
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
  if (candidate.blocks_per_sm == 0) throw InputError("pattern '" + pattern.name + "': no block can be resident on an SM");
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
