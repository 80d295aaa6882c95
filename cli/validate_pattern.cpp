// `advisor validate --pattern F --n N [--config C | --top K | --all]`: runs the family's real
// kernel for each config, checks it against the CPU reference, times it (CUDA events, warm-up,
// median) and reads its counters (CUPTI), and prints them beside the model's prediction.
#include "validate_pattern.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include "cachewise/advisor.hpp"
#include "cachewise/model.hpp"
#include "cachewise/model/families/device_pattern.hpp"
#include "cachewise/cupti.hpp"
#include "cachewise/kernels.hpp"
#include "cachewise/tuner.hpp"
#include "common.hpp"
#include "evicted_pass.hpp"
#include "validate_kernel.hpp"

namespace cachewise::cli {
namespace {

/// The counters the model predicts, named as CUPTI names them.
const std::vector<std::string> kCompared = {
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sector_hit_rate.pct",
    "lts__t_sector_hit_rate.pct",
    "lts__t_sectors_op_read.sum",
    "lts__t_sectors_op_write.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__inst_executed.sum",
};

/// Read beside them, with no prediction: data-bank conflicts from arbitration between L1's
/// clients (global and shared traffic share the data banks). No access pattern causes them; on
/// the H200 they bound how far the shared-memory conflict counters exceed the pattern's own
/// conflicts (docs/validation-h200.md).
const std::vector<std::string> kMeasuredOnly = {"l1tex__data_bank_conflicts_type_arbitration.sum"};

/// kCompared, then kMeasuredOnly: what one counter pass reads.
const std::vector<std::string> kCountersRead = [] {
  std::vector<std::string> names = kCompared;
  names.insert(names.end(), kMeasuredOnly.begin(), kMeasuredOnly.end());
  return names;
}();

/// A config whose launch failed: it is reported and left out of the comparison.
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

constexpr int kConfirmationRounds = 5;

struct Row {
  advisor::Candidate candidate;
  std::size_t predicted_rank = 0; ///< 1-based
  kernels::Timing timing;
  /// Against the CPU reference and counters, for the rows rows_to_profile picks.
  std::optional<double> max_relative_error;
  bool correct = false;
  std::optional<std::map<std::string, double>> measured;
};

const Row& fastest_row(const std::vector<Row>& rows) {
  return *std::ranges::min_element(rows, {}, [](const Row& row) { return row.timing.median_ms; });
}

std::vector<advisor::Candidate> candidates_for(const ValidateOptions& options, const ProblemSpec& problem,
                                               const DeviceProfile& profile) {
  if (!options.config.empty()) {
    advisor::Candidate candidate;
    candidate.config = Config::parse(options.config);
    const KernelPattern pattern = build_pattern(problem, candidate.config, profile.calibration);
    check_fits_device(pattern, profile);
    SimulationOptions simulation;
    simulation.work_budget = options.work_budget;
    candidate.prediction = simulate(pattern, profile, simulation);
    candidate.threads_per_block = pattern.block.count();
    candidate.shared_bytes_per_block = shared_bytes_per_block(pattern);
    candidate.blocks_per_sm = candidate.prediction.blocks_per_sm;
    return {candidate};
  }
  advisor::SuggestOptions suggest_options;
  suggest_options.top = options.all ? std::numeric_limits<std::size_t>::max() : options.top;
  suggest_options.fixed = Config::parse(options.fix);
  suggest_options.refinement.work_budget = options.work_budget;
  return advisor::suggest(problem, profile, suggest_options).ranked;
}

/// Rows checked against the CPU and profiled: with --all the predicted top `counters`, the
/// measured best and the predicted worst (copying a large output to the host for every
/// config of a sweep would cost more than the sweep); otherwise every row.
std::vector<std::size_t> rows_to_profile(const ValidateOptions& options, const std::vector<Row>& rows) {
  std::vector<std::size_t> chosen;
  if (!options.all) {
    for (std::size_t i = 0; i < rows.size(); ++i) chosen.push_back(i);
    return chosen;
  }
  for (std::size_t i = 0; i < std::min(options.counters, rows.size()); ++i) chosen.push_back(i);
  chosen.push_back(static_cast<std::size_t>(&fastest_row(rows) - rows.data()));
  chosen.push_back(rows.size() - 1);
  std::ranges::sort(chosen);
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  return chosen;
}

/// Times the top-1 and the best `rounds` times each, one after the other (each time as the
/// sweep timed them: warm-up, then the repeats' median), so both see the same drift.
Confirmation confirm_top1_and_best(const ProblemSpec& problem, const std::vector<Row>& rows,
                                   kernels::Workload& workload, const kernels::TimingOptions& timing) {
  const Row& top = rows.front();
  const Row& best = fastest_row(rows);
  std::vector<double> top_ms;
  std::vector<double> best_ms;
  for (int round = 0; round < kConfirmationRounds; ++round) {
    top_ms.push_back(kernels::time_kernel(problem, top.candidate.config, workload, timing).median_ms);
    best_ms.push_back(&best == &top ? top_ms.back()
                                    : kernels::time_kernel(problem, best.candidate.config, workload, timing).median_ms);
  }
  return {tuner::estimate_median(top_ms).median, tuner::estimate_median(best_ms).median, kConfirmationRounds};
}

nlohmann::json metrics_json(const std::map<std::string, double>& metrics) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, value] : metrics) json[name] = value;
  return json;
}

nlohmann::json report_json(const ProblemSpec& problem, const LoadedProfile& loaded, double copy_gb_per_s,
                           const std::vector<Row>& rows, const std::vector<LaunchFailure>& failures,
                           double pass_baseline_bytes, const Confirmation& confirmation) {
  nlohmann::json json;
  json["cachewise_version"] = CACHEWISE_VERSION;
  json["problem"] = {{"family", problem.family},
                     {"n", problem.n},
                     {"m", problem.m},
                     {"k", problem.k},
                     {"dtype", to_string(problem.dtype)}};
  json["device"] = kernels::local_device_name();
  json["profile"] = loaded.path.string();
  json["copy_bandwidth_gb_per_s"] = copy_gb_per_s;
  json["pass_baseline_dram_write_bytes"] = pass_baseline_bytes;
  json["candidates"] = nlohmann::json::array();
  for (const Row& row : rows) {
    nlohmann::json entry;
    entry["config"] = row.candidate.config.to_string();
    entry["predicted_rank"] = row.predicted_rank;
    std::map<std::string, double> predicted(row.candidate.prediction.metrics.begin(),
                                            row.candidate.prediction.metrics.end());
    entry["predicted"] = {{"time_us", row.candidate.prediction.time_us},
                          {"bottleneck", row.candidate.prediction.bottleneck},
                          {"metrics", metrics_json(predicted)}};
    entry["measured"] = {{"median_us", row.timing.median_ms * 1e3},
                         {"p25_us", row.timing.p25_ms * 1e3},
                         {"p75_us", row.timing.p75_ms * 1e3},
                         {"repeats", row.timing.repeats},
                         {"bandwidth_gb_per_s", row.timing.bandwidth_gb_per_s},
                         {"checked", row.max_relative_error.has_value()}};
    if (row.max_relative_error) {
      entry["measured"]["max_relative_error"] =
          std::isfinite(*row.max_relative_error) ? nlohmann::json(*row.max_relative_error) : nlohmann::json("inf");
      entry["measured"]["correct"] = row.correct;
    }
    if (row.measured) entry["measured"]["metrics"] = metrics_json(*row.measured);
    json["candidates"].push_back(entry);
  }
  json["launch_failures"] = nlohmann::json::array();
  for (const LaunchFailure& failure : failures) {
    json["launch_failures"].push_back(
        {{"config", failure.config}, {"predicted_rank", failure.predicted_rank}, {"error", failure.error}});
  }
  const Row& top = rows.front();
  const Row& best = fastest_row(rows);
  json["summary"] = {{"candidates", rows.size()},
                     {"checked_all_correct",
                      std::ranges::all_of(rows, [](const Row& row) { return !row.max_relative_error || row.correct; })},
                     {"top1_config", top.candidate.config.to_string()},
                     {"top1_measured_us", top.timing.median_ms * 1e3},
                     {"best_config", best.candidate.config.to_string()},
                     {"best_measured_us", best.timing.median_ms * 1e3},
                     {"best_predicted_rank", best.predicted_rank},
                     {"top1_over_best", top.timing.median_ms / best.timing.median_ms},
                     {"best_bandwidth_gb_per_s", best.timing.bandwidth_gb_per_s},
                     {"best_fraction_of_copy", best.timing.bandwidth_gb_per_s / copy_gb_per_s},
                     {"confirmation_rounds", confirmation.rounds},
                     {"confirmed_top1_us", confirmation.top1_ms * 1e3},
                     {"confirmed_best_us", confirmation.best_ms * 1e3},
                     {"confirmed_top1_over_best", confirmation.top1_ms / confirmation.best_ms}};
  return json;
}

std::string number(double value, int precision) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

void print_report(const ProblemSpec& problem, const LoadedProfile& loaded, double copy_gb_per_s,
                  const std::vector<Row>& rows, const std::vector<LaunchFailure>& failures,
                  const Confirmation& confirmation, std::ostream& out) {
  out << problem.family << " n=" << problem.n << " m=" << problem.m << " k=" << problem.k << " "
      << to_string(problem.dtype) << " on " << kernels::local_device_name() << " (profile " << loaded.path.string()
      << ", " << loaded.source << ")\n"
      << "device-to-device copy: " << number(copy_gb_per_s, 0) << " GB/s\n\n";
  std::size_t width = 6;
  for (const Row& row : rows) width = std::max(width, row.candidate.config.to_string().size());
  out << std::left << std::setw(5) << "rank" << std::setw(static_cast<int>(width) + 2) << "config" << std::right
      << std::setw(13) << "pred µs" << std::setw(13) << "meas µs" << std::setw(12) << "meas GB/s" << std::setw(9)
      << "correct" << '\n';
  for (const Row& row : rows) {
    out << std::left << std::setw(5) << row.predicted_rank << std::setw(static_cast<int>(width) + 2)
        << row.candidate.config.to_string() << std::right << std::setw(12)
        << number(row.candidate.prediction.time_us, 1) << std::setw(12) << number(row.timing.median_ms * 1e3, 1)
        << std::setw(12) << number(row.timing.bandwidth_gb_per_s, 0) << std::setw(9)
        << (!row.max_relative_error ? "-"
            : row.correct           ? "yes"
                                    : "NO")
        << '\n';
  }
  for (const Row& row : rows) {
    if (!row.measured) continue;
    out << "\ncounters, rank " << row.predicted_rank << " (" << row.candidate.config.to_string() << ")\n";
    out << "  " << std::left << std::setw(58) << "metric" << std::right << std::setw(16) << "predicted" << std::setw(16)
        << "measured" << '\n';
    for (const std::string& name : kCountersRead) {
      const auto predicted = row.candidate.prediction.metrics.find(name);
      out << "  " << std::left << std::setw(58) << name << std::right << std::setw(16)
          << (predicted == row.candidate.prediction.metrics.end() ? "-" : number(predicted->second, 1)) << std::setw(16)
          << number(row.measured->at(name), 1) << '\n';
    }
  }
  for (const LaunchFailure& failure : failures) {
    out << "\nnot launched, rank " << failure.predicted_rank << " (" << failure.config << "): " << failure.error
        << '\n';
  }
  const Row& best = fastest_row(rows);
  out << "\ntop-1 " << number(rows.front().timing.median_ms * 1e3, 1) << " µs; best measured "
      << number(best.timing.median_ms * 1e3, 1) << " µs (rank " << best.predicted_rank << ", "
      << best.candidate.config.to_string()
      << "): top-1/best = " << number(rows.front().timing.median_ms / best.timing.median_ms, 3)
      << "; best = " << number(100.0 * best.timing.bandwidth_gb_per_s / copy_gb_per_s, 1) << "% of copy bandwidth\n"
      << "timed again " << confirmation.rounds << " times each, alternating: top-1 "
      << number(confirmation.top1_ms * 1e3, 1) << " µs, best " << number(confirmation.best_ms * 1e3, 1)
      << " µs: top-1/best = " << number(confirmation.top1_ms / confirmation.best_ms, 3) << '\n';
}

/// Flags that are missing, or that the others given make pointless, are named.
void check_flags(const CLI::App& command, const ValidateOptions& options) {
  require_flag(command, "--pattern", "(validate runs a built-in family's kernels)");
  require_flag(command, "--n", "with --pattern");
  if (!options.all) reject_flags(command, {"--counters"}, "without --all (every row's counters are read)");
  if (!options.config.empty()) reject_flags(command, {"--fix"}, "with --config (the config is given whole)");
}

/// Times every candidate on `workload`; a config the device refuses goes to `failures`.
std::vector<Row> time_candidates(const ProblemSpec& problem, const std::vector<advisor::Candidate>& candidates,
                                 kernels::Workload& workload, const kernels::TimingOptions& timing,
                                 std::vector<LaunchFailure>& failures) {
  std::vector<Row> rows;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Row row{candidates[i], i + 1, {}, std::nullopt, false, std::nullopt};
    try {
      row.timing = kernels::time_kernel(problem, row.candidate.config, workload, timing);
    } catch (const InputError&) {
      throw;
    } catch (const NoDeviceError&) {
      throw;
    } catch (const std::runtime_error& error) {
      // A config the model accepted but the device refused (e.g. more registers than the model
      // estimated): reported, and the sweep goes on without it.
      failures.push_back({row.candidate.config.to_string(), i + 1, error.what()});
      continue;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

/// Checks the rows `options` selects against the CPU reference and, unless --no-counters,
/// measures their counters, each pass from an evicted L2.
void check_and_count(const ValidateOptions& options, const ProblemSpec& problem, kernels::Workload& workload,
                     double baseline_bytes, std::vector<Row>& rows) {
  for (const std::size_t index : rows_to_profile(options, rows)) {
    Row& row = rows[index];
    workload.poison_outputs();
    kernels::launch(problem, row.candidate.config, workload);
    row.max_relative_error =
        kernels::max_relative_error(problem, row.candidate.config, workload, options.checked_points);
    row.correct = *row.max_relative_error <= kernels::error_tolerance(problem);
    if (options.no_counters) continue;
    // The model predicts a cold, clean cache and counts the dirty lines a kernel leaves in L2 as
    // its DRAM writes.
    row.measured = measure_evicted_pass(
        kCountersRead, [&] { kernels::launch(problem, row.candidate.config, workload); }, baseline_bytes);
  }
}

} // namespace

void run_validate_pattern(const CLI::App& command, const ValidateOptions& options) {
  if (options.kernel.given()) {
    if (!options.problem.family.empty() || !options.config.empty() || options.all) {
      throw InputError("validate: --kernel/--spec takes --top K (default 3), not --pattern, --config or --all");
    }
    return run_validate_kernel({options.kernel, options.problem.profile, options.top > 0 ? options.top : 3,
                                options.repeats, options.json, options.no_counters},
                               kCountersRead);
  }
  check_flags(command, options);
  reject_flags(command, {"--max-candidates"}, "without --kernel/--spec (it caps a kernel spec's space)");
  const ProblemSpec problem = options.problem.problem(); // family, dtype and sizes checked here
  const int modes = (options.config.empty() ? 0 : 1) + (options.top > 0 ? 1 : 0) + (options.all ? 1 : 0);
  if (modes != 1) throw InputError("validate: give exactly one of --config, --top K or --all");
  if (options.repeats < 1) throw InputError("validate: --repeats must be at least 1");
  warn_about_size(problem);
  const LoadedProfile loaded = load_profile_for_cli(options.problem.profile);
  // One config is checked before the device; a whole space only after it, since ranking a
  // space takes a while.
  if (options.config.empty()) kernels::require_device();
  const std::vector<advisor::Candidate> candidates = candidates_for(options, problem, loaded.profile);
  kernels::require_device();

  const Config& first = candidates.front().config;
  kernels::Workload workload(problem, first, kernels::timing_input_sets(problem, first));
  kernels::TimingOptions timing;
  timing.repeats = options.repeats;
  std::vector<LaunchFailure> failures;
  std::vector<Row> rows = time_candidates(problem, candidates, workload, timing, failures);
  if (rows.empty())
    throw std::runtime_error("validate: no config could be launched (first: " + failures.front().error + ")");
  workload.select_set(0);
  const double baseline_bytes = options.no_counters ? 0.0 : pass_baseline_dram_write_bytes();
  check_and_count(options, problem, workload, baseline_bytes, rows);
  // The ceiling: a copy of one pass over the problem's data (half of its arrays' bytes: the
  // families read about as much as they write), measured like the kernels.
  const double copy_gb_per_s =
      kernels::measure_copy_bandwidth_gb_per_s(std::max<std::int64_t>(workload.bytes_per_set() / 2, 1));
  const Confirmation confirmation = confirm_top1_and_best(problem, rows, workload, timing);
  if (options.json) {
    print_json(report_json(problem, loaded, copy_gb_per_s, rows, failures, baseline_bytes, confirmation));
  } else {
    print_report(problem, loaded, copy_gb_per_s, rows, failures, confirmation, std::cout);
  }
}

} // namespace cachewise::cli
