// cachewise::tuner — autotuning by measurement, with the timer injected, so the same code
// tunes real kernels on a GPU (the CLI passes a CUDA-event timer) and fake workloads in tests.
//
//   tuner::Tuner tuner(problem, advisor_space);          // or add_parameter / add_constraint
//   tuner.set_measure([&](const Config& c, std::int64_t iteration) { return run_once_ms(c, iteration); });
//   tuner.set_strategy(tuner::Strategy::model_ranked(predicted_time));
//   tuner.set_options({.journal = "tune.jsonl"});
//   tuner::TuningResult result = tuner.tune();
//   tuner::save_results_json(result, "tune.json");
//
// Every candidate is measured in a forked child process by default, so a kernel that crashes,
// hangs or poisons its CUDA context marks that candidate failed and the run goes on. Results
// are appended to a JSON-lines journal as they arrive (fsync per line): a killed run, started
// again with the same journal, skips what is done. Plain C++20 (POSIX); no CUDA.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/advisor.hpp"

namespace cachewise::tuner {

// ---------------------------------------------------------------------------------------
// What the caller injects.
// ---------------------------------------------------------------------------------------

/// Runs the kernel once with `config` and returns its time in milliseconds; throws (any
/// std::exception) when the config cannot run. `iteration` counts this evaluation's calls from
/// 0, warm-ups included. Realistic cache state is the caller's job: rotate input buffers by
/// `iteration % buffer_sets` so a timed launch does not find its data left in L2 by the
/// previous one. With child-process isolation, every evaluation runs in a fresh child: state
/// created inside the callable (a CUDA context, device buffers) lives only for that candidate.
using Measure = std::function<double(const Config& config, std::int64_t iteration)>;

/// Predicted time of a config (any unit: only the order matters), for the model-ranked strategy.
using Predict = std::function<double(const Config& config)>;

// ---------------------------------------------------------------------------------------
// Strategy and options.
// ---------------------------------------------------------------------------------------

enum class StrategyKind { exhaustive, random, model_ranked };

struct Strategy {
  StrategyKind kind = StrategyKind::exhaustive;
  std::uint64_t seed = 1; ///< random: the visiting order is a seeded shuffle of the space
  Predict predict;        ///< model_ranked: candidates are visited by ascending prediction
  int batch = 3;          ///< model_ranked: measure this many, then widen by this many

  static Strategy exhaustive() { return {}; }
  static Strategy random(std::uint64_t seed) { return {StrategyKind::random, seed, {}, 3}; }
  /// Measures the `batch` best-predicted candidates. If their measured order contradicts the
  /// predicted one (a candidate predicted slower is faster beyond noise: half the policy's
  /// max_ci_width_fraction), widens by `batch`, and keeps widening while each new batch
  /// beats the leader found before it (model_ranked_stop_reason).
  static Strategy model_ranked(Predict predict, int batch = 3) {
    return {StrategyKind::model_ranked, 1, std::move(predict), batch};
  }
  /// "exhaustive", "random (seed 7)", "model-ranked (batch 3)".
  std::string description() const;
};

/// Parses "exhaustive", "random", "model" (CLI spelling); throws InputError naming the valid ones.
StrategyKind parse_strategy_kind(std::string_view text);

/// When a candidate's timing is trustworthy enough.
struct MeasurementPolicy {
  int warmup_runs = 3;  ///< untimed calls first (code load, clocks, TLB)
  int min_repeats = 10; ///< timed calls before the confidence interval is looked at
  int max_repeats = 100;
  /// Stop repeating once the median's confidence interval is at most this fraction of the
  /// median wide (0.02: the interval spans 2% of the median).
  double max_ci_width_fraction = 0.02;
  double confidence = 0.95;
  /// Rounds of re-measuring the candidates whose interval overlaps the leader's before the
  /// pick; each round merges fresh samples (from a fresh child) into the old ones.
  int contender_rounds = 1;
  int max_contenders = 8;
};

enum class Isolation {
  child_process, ///< fork per evaluation: crashes, hangs and poisoned contexts stay in the child
  in_process,    ///< call the Measure directly: faster, for callables known to be safe
};

struct Options {
  MeasurementPolicy measurement;
  Isolation isolation = Isolation::child_process;
  std::chrono::milliseconds candidate_timeout{60'000}; ///< per evaluation (child_process only)
  std::int64_t budget = 0;        ///< most candidates measured (contenders excluded); 0 = no cap
  std::filesystem::path journal;  ///< JSON lines; empty = none. An existing one is resumed.
};

// ---------------------------------------------------------------------------------------
// Results.
// ---------------------------------------------------------------------------------------

/// Median and its distribution-free confidence interval (order statistics of the binomial).
struct MedianEstimate {
  double median = 0.0;
  double ci_low = 0.0;  ///< -inf when too few samples for the confidence asked
  double ci_high = 0.0; ///< +inf likewise
  double ci_width_fraction() const; ///< (ci_high - ci_low) / median
};

/// Throws InputError for an empty sample or a confidence outside (0, 1).
MedianEstimate estimate_median(std::vector<double> samples, double confidence = 0.95);

/// One candidate: its measurement or why it failed.
struct Evaluation {
  Config config;
  bool ok = false;
  /// Why it failed: "threw: <what>", "exited with code 3", "killed by signal 11 (Segmentation
  /// fault)", "timed out after 2000 ms", "returned a non-positive or non-finite time".
  std::string failure;
  std::vector<double> samples_ms; ///< timed samples of every round, warm-ups excluded
  MedianEstimate time_ms;         ///< over samples_ms
  bool converged = false;         ///< the last round reached max_ci_width_fraction
  int rounds = 0;                 ///< 1 + contender re-measurements
  std::optional<double> predicted; ///< model_ranked only
  bool from_journal = false;      ///< every round of it was read from the journal
};

struct TuningResult {
  ProblemSpec problem;
  std::string strategy;
  std::int64_t space_size = 0;         ///< candidates satisfying the constraints
  std::int64_t unconstrained_size = 0; ///< product of the parameter value counts
  std::vector<Evaluation> evaluations; ///< in the order the strategy visited them
  std::optional<std::size_t> best;     ///< index into evaluations; empty when all failed
  std::string stop_reason;             ///< e.g. "space exhausted", "budget of 8 reached"
  const Evaluation* best_evaluation() const { return best ? &evaluations[*best] : nullptr; }
};

/// Reported after each evaluation (measured or read from the journal).
struct Progress {
  const Evaluation& evaluation;
  int round = 0; ///< 0 = first measurement, 1.. = contender re-measurement
  bool from_journal = false;
};

// ---------------------------------------------------------------------------------------
// The tuner.
// ---------------------------------------------------------------------------------------

class Tuner {
public:
  /// `problem` names the run (journal, header, results); the space may be empty and filled
  /// with add_parameter / add_constraint.
  explicit Tuner(ProblemSpec problem, advisor::SearchSpace space = {});

  void add_parameter(std::string name, std::vector<std::int64_t> values);
  void add_constraint(std::vector<std::string> parameters, std::function<bool(const Config&)> rule,
                      std::string description);
  const advisor::SearchSpace& space() const { return space_; }

  void set_measure(Measure measure) { measure_ = std::move(measure); }
  void set_strategy(Strategy strategy) { strategy_ = std::move(strategy); }
  void set_options(Options options) { options_ = std::move(options); }
  void on_progress(std::function<void(const Progress&)> callback) { progress_ = std::move(callback); }

  /// Throws InputError for an empty space, a missing Measure, a model_ranked strategy without
  /// Predict, or a journal written for another problem or strategy.
  TuningResult tune();

private:
  ProblemSpec problem_;
  advisor::SearchSpace space_;
  Measure measure_;
  Strategy strategy_;
  Options options_;
  std::function<void(const Progress&)> progress_;
};

// ---------------------------------------------------------------------------------------
// Strategy planning, separated from measuring so it can be replayed on recorded times.
// ---------------------------------------------------------------------------------------

/// The order a strategy visits `candidates` in, before any measurement: all of them
/// (exhaustive, model_ranked sorted by prediction, ties kept in space order) or a seeded
/// shuffle (random; the same seed gives the same order on every platform).
std::vector<std::size_t> visiting_order(const std::vector<Config>& candidates, const Strategy& strategy);

/// The model-ranked widening rule. `times_ms` are the measured times of the first candidates
/// in predicted order (nullopt = failed), a whole number of batches. Returns why to stop, or
/// nothing to measure the next batch. After the first batch: stop when its measured order
/// agrees with the predicted one (no candidate predicted slower is faster by more than
/// `noise_fraction`). After a widening batch: stop when it found nothing faster than the
/// leader before it (again beyond `noise_fraction`).
std::optional<std::string> model_ranked_stop_reason(const std::vector<std::optional<double>>& times_ms, int batch,
                                                    double noise_fraction);

// ---------------------------------------------------------------------------------------
// Process isolation (also for CUDA callers: CUDA cannot be used in a child forked after the
// parent initialised it, so a parent that forks candidates must do even its device queries
// through this).
// ---------------------------------------------------------------------------------------

struct ChildOutcome {
  bool ok = false;
  std::string output;  ///< what `work` returned (ok only)
  std::string failure; ///< as in Evaluation::failure
};

/// Runs `work` in a forked child and returns its string, or why it failed: an exception, a
/// signal, a nonzero exit or the timeout (the child is then killed). The child dies with the
/// parent (Linux PR_SET_PDEATHSIG).
ChildOutcome run_in_child_process(const std::function<std::string()>& work, std::chrono::milliseconds timeout);

// ---------------------------------------------------------------------------------------
// Output.
// ---------------------------------------------------------------------------------------

nlohmann::json results_to_json(const TuningResult& result);
/// Writes results_to_json atomically (temporary file, then rename).
void save_results_json(const TuningResult& result, const std::filesystem::path& path);

/// One size bucket of a generated header.
struct TunedEntry {
  ProblemSpec problem;
  Config config;
  bool measured = false; ///< false: the advisor's static (model-predicted) recommendation
  double time_ms = 0.0;  ///< measured median, or the model's predicted time
  std::string note;      ///< one line for the comment: samples, interval, candidates evaluated
};

/// The entry for a finished run; throws InputError when every candidate failed.
TunedEntry tuned_entry(const TuningResult& result);

struct HeaderInfo {
  std::string device_name;  ///< the measured device, or the profile's device for a static header
  std::string profile;      ///< profile file used to rank candidates
  std::string strategy;
  std::string generated_by; ///< the command line that produced it
};

/// A self-contained C++17 header: namespace cachewise_tuned::<family>_<dtype> with a constexpr
/// struct per size bucket, `config_for(n)` returning the bucket closest to n on a log scale,
/// the device name, times and profile in comments, and the macro
/// CACHEWISE_TUNED_<FAMILY>_<DTYPE>_FROM_MEASUREMENT (1 measured, 0 static recommendation).
/// Throws InputError for no entries, mixed families/dtypes/keys, or duplicate sizes.
std::string render_header(std::vector<TunedEntry> entries, const HeaderInfo& info);

/// Writes `text` atomically (temporary file in the same folder, then rename).
void write_text_file(const std::filesystem::path& path, const std::string& text);

// ---------------------------------------------------------------------------------------
// Convergence: how many evaluations each strategy needs to reach a fraction of the best.
// ---------------------------------------------------------------------------------------

struct ConvergenceReport {
  std::int64_t candidates = 0;      ///< measured successfully in the exhaustive run
  double best_ms = 0.0;
  double fraction = 0.99;
  std::int64_t good_candidates = 0; ///< with best_ms / time >= fraction
  /// Position (1-based) in predicted order of the first good candidate: what model-ranked
  /// needs at the least.
  std::int64_t model_evaluations_to_good = 0;
  /// Expected draws without replacement until the first good one: (N + 1) / (good + 1).
  double random_expected_evaluations = 0.0;
  /// What the model-ranked widening rule spends on these times, and the fraction of the best
  /// it ends with (best_ms / its best).
  std::int64_t model_strategy_evaluations = 0;
  double model_strategy_fraction_of_best = 0.0;
};

/// From an exhaustive run with predictions (Evaluation::predicted set on successes); throws
/// InputError when none succeeded or a prediction is missing.
ConvergenceReport convergence(const TuningResult& exhaustive, double fraction = 0.99, int batch = 3,
                              double noise_fraction = 0.01);
nlohmann::json convergence_to_json(const ConvergenceReport& report);

} // namespace cachewise::tuner
