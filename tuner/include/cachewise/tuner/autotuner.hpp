// cachewise::tuner::Tuner: measures a search space's candidates with an injected timer, in the
// order a strategy gives, and picks the fastest.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/problem.hpp"
#include "cachewise/search_space.hpp"
#include "cachewise/tuner/options.hpp"
#include "cachewise/tuner/results.hpp"
#include "cachewise/tuner/strategy.hpp"

namespace cachewise::tuner {

/// Runs the kernel once with `config` and returns its time in milliseconds; throws (any
/// std::exception) when the config cannot run. `iteration` counts this evaluation's calls from
/// 0, warm-ups included. Realistic cache state is the caller's job: rotate input buffers by
/// `iteration % buffer_sets` so a timed launch does not find its data left in L2 by the
/// previous one. With child-process isolation, every evaluation runs in a fresh child: state
/// created inside the callable (a CUDA context, device buffers) lives only for that candidate.
using Measure = std::function<double(const Config& config, std::int64_t iteration)>;

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

} // namespace cachewise::tuner
