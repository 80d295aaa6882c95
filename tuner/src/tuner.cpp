// The tuning driver: visit candidates in the strategy's order, measure each (in a child
// process, on one GPU or several at once), journal every round, re-measure close contenders
// on one device, pick the fastest.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "cachewise/tuner/autotuner.hpp"
#include "journal.hpp"

namespace cachewise::tuner {
namespace {

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

/// The measuring half of one tune() call: where rounds run, and the journal it reads rounds
/// from and appends them to.
struct TuningRun {
  RoundExecutor& executor;
  const Strategy& strategy;
  const Options& options;
  const std::function<void(const Progress&)>& progress;
  Journal* journal = nullptr;
  /// Options::known_rounds by (config, round).
  std::map<std::pair<std::string, int>, const RoundRecord*> known;

  const RoundRecord* recorded(const Config& config, int round) const {
    if (const RoundRecord* journaled = journal ? journal->find(config, round) : nullptr) return journaled;
    const auto found = known.find({config.to_string(), round});
    return found == known.end() ? nullptr : found->second;
  }

  /// A journaled (or known) round of this run's device model is taken from the journal (a time from
  /// another model is not comparable: measured again); the rest go to the executor together
  /// and are journaled as each finishes. `done(i, record, from_journal)` per config.
  void run_rounds(const std::vector<Config>& configs, int round, bool referee,
                  const std::function<void(std::size_t, const RoundRecord&, bool)>& done) const {
    std::vector<RoundRequest> requests;
    std::vector<std::size_t> positions;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const RoundRecord* journaled = recorded(configs[i], round);
      if (journaled && (journaled->device.name.empty() || journaled->device.name == executor.model())) {
        done(i, *journaled, true);
      } else {
        requests.push_back({configs[i], round});
        positions.push_back(i);
      }
    }
    executor.run(requests, referee, [&](std::size_t request, RoundRecord record) {
      if (journal) journal->append(record);
      done(positions[request], record, false);
    });
  }

  Evaluation first_evaluation(const RoundRecord& record, bool from_journal) const {
    Evaluation evaluation;
    evaluation.config = record.config;
    evaluation.ok = record.ok;
    evaluation.failure = record.failure;
    evaluation.samples_ms = record.samples_ms;
    evaluation.converged = record.converged;
    evaluation.rounds = 1;
    evaluation.from_journal = from_journal;
    evaluation.device = record.device;
    if (record.ok) evaluation.time_ms = estimate_median(record.samples_ms, options.measurement.confidence);
    if (strategy.kind == StrategyKind::model_ranked) evaluation.predicted = strategy.predict(record.config);
    return evaluation;
  }

  /// Measures candidates in `order` up to the budget: all at once, or for model_ranked a batch
  /// at a time until model_ranked_stop_reason says stop. A batch's candidates run in parallel
  /// where the executor has several devices; results keep the visiting order.
  void measure_in_order(const std::vector<Config>& candidates, const std::vector<std::size_t>& order,
                        TuningResult& result) const {
    const std::size_t budget = options.budget > 0 ? static_cast<std::size_t>(options.budget) : order.size();
    const std::size_t limit = std::min(budget, order.size());
    const bool model_ranked = strategy.kind == StrategyKind::model_ranked;
    const std::size_t step = model_ranked ? static_cast<std::size_t>(std::max(strategy.batch, 1)) : limit;
    while (result.evaluations.size() < limit) {
      const std::size_t batch_begin = result.evaluations.size();
      const std::size_t batch_end = std::min(batch_begin + step, limit);
      std::vector<Config> batch;
      for (std::size_t position = batch_begin; position < batch_end; ++position)
        batch.push_back(candidates[order[position]]);
      result.evaluations.resize(batch_end);
      run_rounds(batch, 0, false, [&](std::size_t i, const RoundRecord& record, bool from_journal) {
        Evaluation& evaluation = result.evaluations[batch_begin + i];
        evaluation = first_evaluation(record, from_journal);
        if (progress) progress({evaluation, 0, from_journal});
      });
      if (model_ranked && result.evaluations.size() < limit) {
        std::vector<std::optional<double>> times;
        for (const Evaluation& evaluation : result.evaluations) times.push_back(time_of(evaluation));
        if (auto reason =
                model_ranked_stop_reason(times, strategy.batch, options.measurement.max_ci_width_fraction / 2)) {
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
  /// the policy's contender_rounds, all on the executor's referee device.
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
      std::vector<Config> configs;
      for (const std::size_t i : contenders) configs.push_back(result.evaluations[i].config);
      run_rounds(configs, round, true, [&](std::size_t i, const RoundRecord& record, bool from_journal) {
        remeasure(result.evaluations[contenders[i]], record, round, from_journal);
      });
    }
  }

  /// Samples of one device merge; a re-measurement on another device replaces the earlier
  /// ones, so every contender's final time comes from the referee.
  void remeasure(Evaluation& evaluation, const RoundRecord& record, int round, bool from_journal) const {
    evaluation.rounds = round + 1;
    evaluation.from_journal = evaluation.from_journal && from_journal;
    if (!record.ok) {
      evaluation.ok = false;
      evaluation.failure = "failed when measured again: " + record.failure;
    } else {
      if (!same_device(evaluation.device, record.device)) evaluation.samples_ms.clear();
      evaluation.device = record.device;
      evaluation.samples_ms.insert(evaluation.samples_ms.end(), record.samples_ms.begin(), record.samples_ms.end());
      evaluation.converged = record.converged;
      evaluation.time_ms = estimate_median(evaluation.samples_ms, options.measurement.confidence);
    }
    if (progress) progress({evaluation, round, from_journal});
  }
};

} // namespace

Tuner::Tuner(ProblemSpec problem, SearchSpace space) : problem_(std::move(problem)), space_(std::move(space)) {}

void Tuner::add_parameter(std::string name, std::vector<std::int64_t> values) {
  space_.add_parameter(std::move(name), std::move(values));
}

void Tuner::add_constraint(std::vector<std::string> parameters, std::function<bool(const Config&)> rule,
                           std::string description) {
  space_.add_constraint(std::move(parameters), std::move(rule), std::move(description));
}

TuningResult Tuner::tune() {
  if (!measure_ && !executor_) throw InputError("tuner: no measure function set");
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
  std::shared_ptr<RoundExecutor> executor =
      executor_ ? executor_ : std::shared_ptr<RoundExecutor>(local_executor(measure_, options_));
  TuningRun run{*executor, strategy_, options_, progress_, journal.get(), {}};
  for (const RoundRecord& record : options_.known_rounds)
    run.known[{record.config.to_string(), record.round}] = &record;
  run.measure_in_order(candidates, order, result);
  run.remeasure_contenders(result);
  result.best = leader(result);
  return result;
}

} // namespace cachewise::tuner
