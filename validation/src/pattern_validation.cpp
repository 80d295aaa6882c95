// validate_pattern: a built-in family's kernels run, checked, timed and counted beside the model.
#include "cachewise/validation/pattern_validation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "cachewise/model.hpp"
#include "cachewise/model/families/device_pattern.hpp"
#include "cachewise/tuner/statistics.hpp"
#include "cachewise/validation/evicted_pass.hpp"

namespace cachewise::validation {
namespace {

using Row = PatternRow;
using ValidateOptions = PatternValidationOptions;

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

constexpr int kConfirmationRounds = 5;

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
    kernels::launch_family_kernel(problem, row.candidate.config, workload);
    row.max_relative_error =
        kernels::max_relative_error(problem, row.candidate.config, workload, options.checked_points);
    row.correct = *row.max_relative_error <= kernels::error_tolerance(problem);
    if (options.no_counters) continue;
    // The model predicts a cold, clean cache and counts the dirty lines a kernel leaves in L2 as
    // its DRAM writes.
    row.measured = measure_evicted_pass(
        kCountersRead, [&] { kernels::launch_family_kernel(problem, row.candidate.config, workload); }, baseline_bytes);
  }
}

} // namespace

const std::vector<std::string>& compared_counters() { return kCompared; }
const std::vector<std::string>& counters_read() { return kCountersRead; }

const PatternRow& fastest_row(const std::vector<PatternRow>& rows) {
  return *std::ranges::min_element(rows, {}, [](const Row& row) { return row.timing.median_ms; });
}

PatternValidation validate_pattern(const ProblemSpec& problem, const DeviceProfile& profile,
                                   const PatternValidationOptions& options) {
  // One config is checked before the device; a whole space only after it, since ranking a
  // space takes a while.
  if (options.config.empty()) kernels::require_device();
  const std::vector<advisor::Candidate> candidates = candidates_for(options, problem, profile);
  kernels::require_device();

  const Config& first = candidates.front().config;
  kernels::Workload workload(problem, first, kernels::timing_input_sets(problem, first));
  kernels::TimingOptions timing;
  timing.repeats = options.repeats;
  PatternValidation validation;
  validation.problem = problem;
  validation.rows = time_candidates(problem, candidates, workload, timing, validation.failures);
  if (validation.rows.empty())
    throw std::runtime_error("validate: no config could be launched (first: " + validation.failures.front().error +
                             ")");
  workload.select_set(0);
  validation.pass_baseline_bytes = options.no_counters ? 0.0 : pass_baseline_dram_write_bytes();
  check_and_count(options, problem, workload, validation.pass_baseline_bytes, validation.rows);
  // The ceiling: a copy of one pass over the problem's data (half of its arrays' bytes: the
  // families read about as much as they write), measured like the kernels.
  validation.copy_gb_per_s =
      kernels::measure_copy_bandwidth_gb_per_s(std::max<std::int64_t>(workload.bytes_per_set() / 2, 1));
  validation.confirmation = confirm_top1_and_best(problem, validation.rows, workload, timing);
  validation.device = kernels::local_device_name();
  return validation;
}

nlohmann::json pattern_validation_to_json(const PatternValidation& validation, const std::string& profile_path) {
  const ProblemSpec& problem = validation.problem;
  const std::vector<Row>& rows = validation.rows;
  const double copy_gb_per_s = validation.copy_gb_per_s;
  const Confirmation& confirmation = validation.confirmation;
  nlohmann::json json;
  json["problem"] = {{"family", problem.family},
                     {"n", problem.n},
                     {"m", problem.m},
                     {"k", problem.k},
                     {"dtype", to_string(problem.dtype)}};
  json["device"] = validation.device;
  json["profile"] = profile_path;
  json["copy_bandwidth_gb_per_s"] = copy_gb_per_s;
  json["pass_baseline_dram_write_bytes"] = validation.pass_baseline_bytes;
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
  for (const LaunchFailure& failure : validation.failures) {
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

} // namespace cachewise::validation
