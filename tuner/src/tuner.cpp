// The tuning driver: visit candidates in the strategy's order, measure each (in a child
// process), journal every round, re-measure close contenders, pick the fastest.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "cachewise/tuner.hpp"
#include "journal.hpp"

namespace cachewise::tuner {
namespace {

/// Warm-up, then timed calls until the median's interval is tight or max_repeats is reached.
RoundRecord measure_round(const Measure& measure, const Config& config, int round, const MeasurementPolicy& policy) {
  RoundRecord record{config, round, true, {}, {}, false};
  std::int64_t iteration = 0;
  for (int i = 0; i < policy.warmup_runs; ++i) measure(config, iteration++);
  while (static_cast<int>(record.samples_ms.size()) < policy.max_repeats) {
    const double sample_ms = measure(config, iteration++);
    if (!std::isfinite(sample_ms) || sample_ms <= 0.0) {
      return {config, round, false, "returned a non-positive or non-finite time (" + std::to_string(sample_ms) + ")", {}, false};
    }
    record.samples_ms.push_back(sample_ms);
    if (static_cast<int>(record.samples_ms.size()) >= policy.min_repeats &&
        estimate_median(record.samples_ms, policy.confidence).ci_width_fraction() <= policy.max_ci_width_fraction) {
      record.converged = true;
      break;
    }
  }
  return record;
}

RoundRecord evaluate_round(const Measure& measure, const Config& config, int round, const Options& options) {
  if (options.isolation == Isolation::in_process) {
    try {
      return measure_round(measure, config, round, options.measurement);
    } catch (const std::exception& e) {
      return {config, round, false, std::string("threw: ") + e.what(), {}, false};
    }
  }
  const ChildOutcome outcome = run_in_child_process(
      [&] { return round_to_json(measure_round(measure, config, round, options.measurement)).dump(); },
      options.candidate_timeout);
  if (!outcome.ok) return {config, round, false, outcome.failure, {}, false};
  return round_from_json(nlohmann::json::parse(outcome.output));
}

nlohmann::json run_identity(const ProblemSpec& problem, const Strategy& strategy, const Options& options) {
  return {{"family", problem.family},
          {"n", problem.n},
          {"m", problem.m},
          {"k", problem.k},
          {"dtype", to_string(problem.dtype)},
          {"strategy", strategy.description()},
          {"budget", options.budget}};
}

std::optional<double> time_of(const Evaluation& evaluation) {
  return evaluation.ok ? std::optional(evaluation.time_ms.median) : std::nullopt;
}

/// The fastest successful evaluation so far.
std::optional<std::size_t> leader(const TuningResult& result) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < result.evaluations.size(); ++i) {
    const Evaluation& e = result.evaluations[i];
    if (e.ok && (!best || e.time_ms.median < result.evaluations[*best].time_ms.median)) best = i;
  }
  return best;
}

/// The measuring half of one tune() call: what it measures, and the journal it reads rounds
/// from and appends them to.
struct TuningRun {
  const Measure& measure;
  const Strategy& strategy;
  const Options& options;
  const std::function<void(const Progress&)>& progress;
  Journal* journal = nullptr;

  /// A round already in the journal is taken from it; anything else is measured and journaled.
  RoundRecord run_round(const Config& config, int round, bool& from_journal) const {
    if (journal) {
      if (const RoundRecord* done = journal->find(config, round)) {
        from_journal = true;
        return *done;
      }
    }
    from_journal = false;
    RoundRecord record = evaluate_round(measure, config, round, options);
    if (journal) journal->append(record);
    return record;
  }

  Evaluation first_evaluation(const Config& config) const {
    bool from_journal = false;
    const RoundRecord record = run_round(config, 0, from_journal);
    Evaluation evaluation;
    evaluation.config = config;
    evaluation.ok = record.ok;
    evaluation.failure = record.failure;
    evaluation.samples_ms = record.samples_ms;
    evaluation.converged = record.converged;
    evaluation.rounds = 1;
    evaluation.from_journal = from_journal;
    if (record.ok) evaluation.time_ms = estimate_median(record.samples_ms, options.measurement.confidence);
    if (strategy.kind == StrategyKind::model_ranked) evaluation.predicted = strategy.predict(config);
    return evaluation;
  }

  /// Measures candidates in `order` up to the budget: all at once, or for model_ranked a batch
  /// at a time until model_ranked_stop_reason says stop.
  void measure_in_order(const std::vector<Config>& candidates, const std::vector<std::size_t>& order,
                        TuningResult& result) const {
    const std::size_t budget = options.budget > 0 ? static_cast<std::size_t>(options.budget) : order.size();
    const std::size_t limit = std::min(budget, order.size());
    const bool model_ranked = strategy.kind == StrategyKind::model_ranked;
    const std::size_t step = model_ranked ? static_cast<std::size_t>(std::max(strategy.batch, 1)) : limit;
    while (result.evaluations.size() < limit) {
      const std::size_t batch_end = std::min(result.evaluations.size() + step, limit);
      for (std::size_t position = result.evaluations.size(); position < batch_end; ++position) {
        result.evaluations.push_back(first_evaluation(candidates[order[position]]));
        if (progress) progress({result.evaluations.back(), 0, result.evaluations.back().from_journal});
      }
      if (model_ranked && result.evaluations.size() < limit) {
        std::vector<std::optional<double>> times;
        for (const Evaluation& evaluation : result.evaluations) times.push_back(time_of(evaluation));
        if (auto reason = model_ranked_stop_reason(times, strategy.batch, options.measurement.max_ci_width_fraction / 2)) {
          result.stop_reason = *reason;
          break;
        }
      }
    }
    if (result.stop_reason.empty()) {
      result.stop_reason = limit < order.size() ? "budget of " + std::to_string(limit) + " reached"
                                                : "space exhausted (" + std::to_string(order.size()) + " candidates)";
    }
  }

  /// Noise-aware pick: candidates whose interval overlaps the leader's get fresh samples, for
  /// the policy's contender_rounds.
  void remeasure_contenders(TuningResult& result) const {
    const MeasurementPolicy& policy = options.measurement;
    for (int round = 1; round <= policy.contender_rounds; ++round) {
      const std::optional<std::size_t> best = leader(result);
      if (!best) break;
      const double leader_high = result.evaluations[*best].time_ms.ci_high;
      std::vector<std::size_t> contenders;
      for (std::size_t i = 0; i < result.evaluations.size(); ++i) {
        const Evaluation& e = result.evaluations[i];
        if (e.ok && e.time_ms.ci_low <= leader_high) contenders.push_back(i);
      }
      if (contenders.size() < 2) break;
      std::ranges::sort(contenders, {}, [&](std::size_t i) { return result.evaluations[i].time_ms.median; });
      contenders.resize(std::min(contenders.size(), static_cast<std::size_t>(std::max(policy.max_contenders, 2))));
      for (const std::size_t i : contenders) remeasure(result.evaluations[i], round);
    }
  }

  void remeasure(Evaluation& evaluation, int round) const {
    bool from_journal = false;
    const RoundRecord record = run_round(evaluation.config, round, from_journal);
    evaluation.rounds = round + 1;
    evaluation.from_journal = evaluation.from_journal && from_journal;
    if (!record.ok) {
      evaluation.ok = false;
      evaluation.failure = "failed when measured again: " + record.failure;
    } else {
      evaluation.samples_ms.insert(evaluation.samples_ms.end(), record.samples_ms.begin(), record.samples_ms.end());
      evaluation.converged = record.converged;
      evaluation.time_ms = estimate_median(evaluation.samples_ms, options.measurement.confidence);
    }
    if (progress) progress({evaluation, round, from_journal});
  }
};

} // namespace

Tuner::Tuner(ProblemSpec problem, advisor::SearchSpace space) : problem_(std::move(problem)), space_(std::move(space)) {}

void Tuner::add_parameter(std::string name, std::vector<std::int64_t> values) {
  space_.add_parameter(std::move(name), std::move(values));
}

void Tuner::add_constraint(std::vector<std::string> parameters, std::function<bool(const Config&)> rule,
                           std::string description) {
  space_.add_constraint(std::move(parameters), std::move(rule), std::move(description));
}

TuningResult Tuner::tune() {
  if (!measure_) throw InputError("tuner: no measure function set");
  const MeasurementPolicy& policy = options_.measurement;
  if (policy.min_repeats < 1 || policy.max_repeats < policy.min_repeats || policy.warmup_runs < 0) {
    throw InputError("tuner: repeats need 1 <= min_repeats <= max_repeats and warmup_runs >= 0");
  }
  const std::vector<Config> candidates = space_.enumerate();
  if (candidates.empty()) throw InputError("tuner: no candidate satisfies the constraints");
  const std::vector<std::size_t> order = visiting_order(candidates, strategy_);

  TuningResult result;
  result.problem = problem_;
  result.strategy = strategy_.description();
  result.space_size = static_cast<std::int64_t>(candidates.size());
  result.unconstrained_size = static_cast<std::int64_t>(
      std::min<std::uint64_t>(space_.unconstrained_size(), std::numeric_limits<std::int64_t>::max()));

  std::unique_ptr<Journal> journal;
  if (!options_.journal.empty()) {
    journal = std::make_unique<Journal>(options_.journal, run_identity(problem_, strategy_, options_));
  }
  TuningRun run{measure_, strategy_, options_, progress_, journal.get()};
  run.measure_in_order(candidates, order, result);
  run.remeasure_contenders(result);
  result.best = leader(result);
  return result;
}

} // namespace cachewise::tuner
