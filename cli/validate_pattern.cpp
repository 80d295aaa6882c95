// `advisor validate --pattern F --n N [--config C | --top K | --all]`: the flags of
// validation::validate_pattern (the family's real kernel run, checked, timed and counted for
// each config), and its report beside the model's prediction.
#include "validate_pattern.hpp"

#include <iomanip>
#include <iostream>
#include <sstream>

#include "cachewise/validation/pattern_validation.hpp"
#include "common.hpp"
#include "validate_kernel.hpp"

namespace cachewise::cli {
namespace {

std::string number(double value, int precision) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

void print_report(const validation::PatternValidation& report, const LoadedProfile& loaded, std::ostream& out) {
  const ProblemSpec& problem = report.problem;
  const std::vector<validation::PatternRow>& rows = report.rows;
  const double copy_gb_per_s = report.copy_gb_per_s;
  const validation::Confirmation& confirmation = report.confirmation;
  out << problem.family << " n=" << problem.n << " m=" << problem.m << " k=" << problem.k << " "
      << to_string(problem.dtype) << " on " << report.device << " (profile " << loaded.path.string() << ", "
      << loaded.source << ")\n"
      << "device-to-device copy: " << number(copy_gb_per_s, 0) << " GB/s\n\n";
  std::size_t width = 6;
  for (const validation::PatternRow& row : rows) width = std::max(width, row.candidate.config.to_string().size());
  out << std::left << std::setw(5) << "rank" << std::setw(static_cast<int>(width) + 2) << "config" << std::right
      << std::setw(13) << "pred µs" << std::setw(13) << "meas µs" << std::setw(12) << "meas GB/s" << std::setw(9)
      << "correct" << '\n';
  for (const validation::PatternRow& row : rows) {
    out << std::left << std::setw(5) << row.predicted_rank << std::setw(static_cast<int>(width) + 2)
        << row.candidate.config.to_string() << std::right << std::setw(12)
        << number(row.candidate.prediction.time_us, 1) << std::setw(12) << number(row.timing.median_ms * 1e3, 1)
        << std::setw(12) << number(row.timing.bandwidth_gb_per_s, 0) << std::setw(9)
        << (!row.max_relative_error ? "-"
            : row.correct           ? "yes"
                                    : "NO")
        << '\n';
  }
  for (const validation::PatternRow& row : rows) {
    if (!row.measured) continue;
    out << "\ncounters, rank " << row.predicted_rank << " (" << row.candidate.config.to_string() << ")\n";
    out << "  " << std::left << std::setw(58) << "metric" << std::right << std::setw(16) << "predicted" << std::setw(16)
        << "measured" << '\n';
    for (const std::string& name : validation::counters_read()) {
      const auto predicted = row.candidate.prediction.metrics.find(name);
      out << "  " << std::left << std::setw(58) << name << std::right << std::setw(16)
          << (predicted == row.candidate.prediction.metrics.end() ? "-" : number(predicted->second, 1)) << std::setw(16)
          << number(row.measured->at(name), 1) << '\n';
    }
  }
  for (const validation::LaunchFailure& failure : report.failures) {
    out << "\nnot launched, rank " << failure.predicted_rank << " (" << failure.config << "): " << failure.error
        << '\n';
  }
  const validation::PatternRow& best = validation::fastest_row(rows);
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

} // namespace

void run_validate_pattern(const CLI::App& command, const ValidateOptions& options) {
  if (options.kernel.given()) {
    if (!options.problem.family.empty() || !options.config.empty() || options.all) {
      throw InputError("validate: --kernel/--spec takes --top K (default 3), not --pattern, --config or --all");
    }
    return run_validate_kernel({options.kernel, options.problem.profile, options.top > 0 ? options.top : 3,
                                options.repeats, options.json, options.no_counters},
                               validation::counters_read());
  }
  check_flags(command, options);
  reject_flags(command, {"--max-candidates"}, "without --kernel/--spec (it caps a kernel spec's space)");
  const ProblemSpec problem = options.problem.problem(); // family, dtype and sizes checked here
  const int modes = (options.config.empty() ? 0 : 1) + (options.top > 0 ? 1 : 0) + (options.all ? 1 : 0);
  if (modes != 1) throw InputError("validate: give exactly one of --config, --top K or --all");
  if (options.repeats < 1) throw InputError("validate: --repeats must be at least 1");
  warn_about_size(problem);
  const LoadedProfile loaded = load_profile_for_cli(options.problem.profile);
  const validation::PatternValidation result =
      validation::validate_pattern(problem, loaded.profile,
                                   {options.config, options.fix, options.top, options.all, options.counters,
                                    options.repeats, options.work_budget, options.checked_points, options.no_counters});
  if (options.json) {
    nlohmann::json json = validation::pattern_validation_to_json(result, loaded.path.string());
    json["cachewise_version"] = CACHEWISE_VERSION;
    print_json(json);
  } else {
    print_report(result, loaded, std::cout);
  }
}

} // namespace cachewise::cli
