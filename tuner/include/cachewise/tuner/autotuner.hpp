// cachewise::tuner::Tuner: measures a search space's candidates with an injected timer, in the
// order a strategy gives, and picks the fastest.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/model/problem.hpp"
#include "cachewise/model/search_space.hpp"
#include "cachewise/tuner/execution.hpp"
#include "cachewise/tuner/options.hpp"
#include "cachewise/tuner/results.hpp"
#include "cachewise/tuner/strategy.hpp"

namespace cachewise::tuner {

class Tuner {
public:
  /// `problem` names the run (journal, header, results); the space may be empty and filled
  /// with add_parameter / add_constraint.
  explicit Tuner(ProblemSpec problem, SearchSpace space = {});

  void add_parameter(std::string name, std::vector<std::int64_t> values);
  void add_constraint(std::vector<std::string> parameters, std::function<bool(const Config&)> rule,
                      std::string description);
  const SearchSpace& space() const { return space_; }

  void set_measure(Measure measure) { measure_ = std::move(measure); }
  void set_strategy(Strategy strategy) { strategy_ = std::move(strategy); }
  void set_options(Options options) { options_ = std::move(options); }
  /// Where rounds run; unset: local_executor(measure, options) at tune().
  void set_executor(std::shared_ptr<RoundExecutor> executor) { executor_ = std::move(executor); }
  const Measure& measure() const { return measure_; }
  const Options& options() const { return options_; }
  void on_progress(std::function<void(const Progress&)> callback) { progress_ = std::move(callback); }

  /// Throws InputError for an empty space, a missing Measure, a model_ranked strategy without
  /// Predict, or a journal written for another problem or strategy.
  TuningResult tune();

private:
  ProblemSpec problem_;
  SearchSpace space_;
  Measure measure_;
  Strategy strategy_;
  Options options_;
  std::shared_ptr<RoundExecutor> executor_;
  std::function<void(const Progress&)> progress_;
};

} // namespace cachewise::tuner
