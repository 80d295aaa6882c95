// cachewise::validation of a built-in family: its real kernel run for each config (the given
// one, the advisor's top K or its whole space), checked against the CPU reference, timed (CUDA
// events, warm-up, median), its counters read (CUPTI) beside the model's prediction, and the
// predicted top-1 and the measured best timed again in alternation. GPU only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cachewise/advisor.hpp"
#include "cachewise/kernels.hpp"
#include "cachewise/model.hpp"

namespace cachewise::validation {

/// The counters the model predicts, named as CUPTI names them.
const std::vector<std::string>& compared_counters();
/// compared_counters(), then those read beside them with no prediction: what one counter pass reads.
const std::vector<std::string>& counters_read();

struct PatternValidationOptions {
  std::string config; ///< one config; else the advisor's `top` best, else (`all`) every feasible one
  std::string fix;    ///< keys pinned for top/all
  std::size_t top = 0;
  bool all = false;
  std::size_t counters = 3; ///< with `all`: rows checked and counted besides the measured best and predicted worst
  int repeats = 15;
  std::int64_t work_budget = SimulationOptions{}.work_budget;
  std::int64_t checked_points = 4096;
  bool no_counters = false; ///< time and check only, no CUPTI
};

/// A config whose launch failed: reported and left out of the comparison.
struct LaunchFailure {
  std::string config;
  std::size_t predicted_rank = 0;
  std::string error;
};

/// The predicted top-1 and the sweep's best timed again, in alternation: the best of a sweep is
/// the fastest of many noisy medians, so its own median is biased low (the winner's curse).
struct Confirmation {
  double top1_ms = 0.0; ///< median over the rounds of each round's median
  double best_ms = 0.0;
  int rounds = 0;
};

struct PatternRow {
  advisor::Candidate candidate;
  std::size_t predicted_rank = 0; ///< 1-based
  kernels::Timing timing;
  /// Against the CPU reference and counters, for the rows that are profiled.
  std::optional<double> max_relative_error;
  bool correct = false;
  std::optional<std::map<std::string, double>> measured;
};

struct PatternValidation {
  ProblemSpec problem;
  std::string device; ///< the local device's name
  double copy_gb_per_s = 0.0;
  std::vector<PatternRow> rows; ///< in predicted order; at least one
  std::vector<LaunchFailure> failures;
  double pass_baseline_bytes = 0.0;
  Confirmation confirmation;
};

const PatternRow& fastest_row(const std::vector<PatternRow>& rows);

/// Throws InputError for a config that does not fit, NoDeviceError without a GPU, and
/// std::runtime_error when no config could be launched.
PatternValidation validate_pattern(const ProblemSpec& problem, const DeviceProfile& profile,
                                   const PatternValidationOptions& options);

/// What `advisor validate --json` prints (and `advisor tune --convergence-from` reads) but
/// "cachewise_version"; `profile_path` names the profile.
nlohmann::json pattern_validation_to_json(const PatternValidation& validation, const std::string& profile_path);

} // namespace cachewise::validation
