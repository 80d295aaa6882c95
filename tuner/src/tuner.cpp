// The tuning driver: visit candidates in the strategy's order, measure each (in a child
// process), journal every round, re-measure close contenders, pick the fastest.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>

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

} // namespace

std::string Strategy::description() const {
  switch (kind) {
  case StrategyKind::exhaustive:
    return "exhaustive";
  case StrategyKind::random:
    return "random (seed " + std::to_string(seed) + ")";
  case StrategyKind::model_ranked:
    return "model-ranked (batch " + std::to_string(batch) + ")";
  }
  return {};
}

StrategyKind parse_strategy_kind(std::string_view text) {
  if (text == "exhaustive") return StrategyKind::exhaustive;
  if (text == "random") return StrategyKind::random;
  if (text == "model") return StrategyKind::model_ranked;
  throw InputError("unknown strategy '" + std::string(text) + "' (valid: exhaustive, random, model)");
}

std::vector<std::size_t> visiting_order(const std::vector<Config>& candidates, const Strategy& strategy) {
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (strategy.kind == StrategyKind::random) {
    // Fisher-Yates on mt19937_64, whose output the standard fixes (std::shuffle's is not).
    std::mt19937_64 generator(strategy.seed);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[generator() % i]);
  } else if (strategy.kind == StrategyKind::model_ranked) {
    if (!strategy.predict) throw InputError("model-ranked strategy needs a prediction function");
    std::vector<double> predicted(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) predicted[i] = strategy.predict(candidates[i]);
    std::ranges::stable_sort(order, {}, [&](std::size_t i) { return predicted[i]; });
  }
  return order;
}

std::optional<std::string> model_ranked_stop_reason(const std::vector<std::optional<double>>& times_ms, int batch,
                                                    double noise_fraction) {
  const std::size_t batch_size = static_cast<std::size_t>(std::max(batch, 1));
  const auto clearly_faster = [&](double a, double b) { return a < b * (1.0 - noise_fraction); };
  if (times_ms.size() <= batch_size) {
    for (std::size_t i = 0; i < times_ms.size(); ++i) {
      for (std::size_t j = i + 1; j < times_ms.size(); ++j) {
        if (times_ms[i] && times_ms[j] && clearly_faster(*times_ms[j], *times_ms[i])) return std::nullopt;
      }
    }
    if (std::ranges::none_of(times_ms, [](const auto& t) { return t.has_value(); })) return std::nullopt;
    return "measured order agrees with the prediction";
  }
  const std::size_t batch_start = times_ms.size() - std::min(batch_size, times_ms.size());
  std::optional<double> leader_before;
  for (std::size_t i = 0; i < batch_start; ++i) {
    if (times_ms[i] && (!leader_before || *times_ms[i] < *leader_before)) leader_before = times_ms[i];
  }
  if (!leader_before) return std::nullopt;
  for (std::size_t i = batch_start; i < times_ms.size(); ++i) {
    if (times_ms[i] && clearly_faster(*times_ms[i], *leader_before)) return std::nullopt;
  }
  return "widening found nothing faster than the leader";
}

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
  // A round already in the journal is taken from it; anything else is measured and journaled.
  const auto run_round = [&](const Config& config, int round, bool& from_journal) {
    if (journal) {
      if (const RoundRecord* done = journal->find(config, round)) {
        from_journal = true;
        return *done;
      }
    }
    from_journal = false;
    RoundRecord record = evaluate_round(measure_, config, round, options_);
    if (journal) journal->append(record);
    return record;
  };

  const std::size_t budget = options_.budget > 0 ? static_cast<std::size_t>(options_.budget) : order.size();
  const std::size_t limit = std::min(budget, order.size());
  const std::size_t step = strategy_.kind == StrategyKind::model_ranked ? static_cast<std::size_t>(std::max(strategy_.batch, 1))
                                                                        : limit;
  while (result.evaluations.size() < limit) {
    const std::size_t batch_end = std::min(result.evaluations.size() + step, limit);
    for (std::size_t position = result.evaluations.size(); position < batch_end; ++position) {
      const Config& config = candidates[order[position]];
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
      if (record.ok) evaluation.time_ms = estimate_median(record.samples_ms, policy.confidence);
      if (strategy_.kind == StrategyKind::model_ranked) evaluation.predicted = strategy_.predict(config);
      result.evaluations.push_back(std::move(evaluation));
      if (progress_) progress_({result.evaluations.back(), 0, from_journal});
    }
    if (strategy_.kind == StrategyKind::model_ranked && result.evaluations.size() < limit) {
      std::vector<std::optional<double>> times;
      for (const Evaluation& evaluation : result.evaluations) times.push_back(time_of(evaluation));
      if (auto reason = model_ranked_stop_reason(times, strategy_.batch, policy.max_ci_width_fraction / 2)) {
        result.stop_reason = *reason;
        break;
      }
    }
  }
  if (result.stop_reason.empty()) {
    result.stop_reason = limit < order.size() ? "budget of " + std::to_string(limit) + " reached"
                                              : "space exhausted (" + std::to_string(order.size()) + " candidates)";
  }

  // Noise-aware pick: candidates whose interval overlaps the leader's get fresh samples.
  const auto leader = [&]() -> std::optional<std::size_t> {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < result.evaluations.size(); ++i) {
      const Evaluation& e = result.evaluations[i];
      if (e.ok && (!best || e.time_ms.median < result.evaluations[*best].time_ms.median)) best = i;
    }
    return best;
  };
  for (int round = 1; round <= policy.contender_rounds; ++round) {
    const std::optional<std::size_t> best = leader();
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
    for (const std::size_t i : contenders) {
      Evaluation& evaluation = result.evaluations[i];
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
        evaluation.time_ms = estimate_median(evaluation.samples_ms, policy.confidence);
      }
      if (progress_) progress_({evaluation, round, from_journal});
    }
  }
  result.best = leader();
  return result;
}

} // namespace cachewise::tuner
