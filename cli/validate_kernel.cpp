// validate --kernel/--spec: the flags of validation::validate_kernel (the front end's ranking,
// then each candidate loaded on the GPU, checked, timed and counted) and its report.
#include "validate_kernel.hpp"

#include <iomanip>
#include <iostream>
#include <sstream>

#include "cachewise/validation/kernel_validation.hpp"
#include "common.hpp"

namespace cachewise::cli {
namespace {

std::string fixed(double value, int precision) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

void print_rows(const validation::KernelValidation& report, const LoadedProfile& loaded,
                const std::vector<std::string>& counters) {
  std::cout << report.subject << " on " << report.device << " (profile " << loaded.path.string() << ", "
            << loaded.source << ")\n\n"
            << std::left << std::setw(5) << "rank" << std::setw(40) << "config" << std::right << std::setw(12)
            << "pred us" << std::setw(12) << "meas us" << '\n';
  for (const validation::KernelRow& row : report.rows) {
    std::cout << std::left << std::setw(5) << row.predicted_rank << std::setw(40) << row.candidate.config.to_string()
              << std::right << std::setw(12) << fixed(row.candidate.prediction.time_us, 1) << std::setw(12)
              << (row.median_us ? fixed(*row.median_us, 1) : "failed") << '\n';
  }
  for (const validation::KernelRow& row : report.rows) {
    if (!row.median_us) {
      std::cout << "\nfailed, rank " << row.predicted_rank << " (" << row.candidate.config.to_string()
                << "): " << row.failure << '\n';
      continue;
    }
    if (row.measured.empty()) continue;
    std::cout << "\ncounters, rank " << row.predicted_rank << " (" << row.candidate.config.to_string() << ")\n  "
              << std::left << std::setw(58) << "metric" << std::right << std::setw(16) << "predicted" << std::setw(16)
              << "measured" << '\n';
    for (const std::string& name : counters) {
      const auto predicted = row.candidate.prediction.metrics.find(name);
      const auto measured = row.measured.find(name);
      std::cout << "  " << std::left << std::setw(58) << name << std::right << std::setw(16)
                << (predicted == row.candidate.prediction.metrics.end() ? "-" : fixed(predicted->second, 1))
                << std::setw(16) << (measured == row.measured.end() ? "-" : fixed(measured->second, 1)) << '\n';
    }
  }
}

} // namespace

void run_validate_kernel(const KernelValidateArguments& args, const std::vector<std::string>& counters) {
  if (args.top < 1) throw InputError("validate: --top must be at least 1 for --kernel/--spec");
  if (args.repeats < 1) throw InputError("validate: --repeats must be at least 1");
  const frontend::KernelSpec spec = kernel_spec_from_options(args.kernel);
  frontend::validate_kernel_spec(spec);
  const LoadedProfile loaded = load_profile_for_cli(args.profile);
  const validation::KernelValidation report =
      validation::validate_kernel(spec, loaded.profile, {args.top, args.repeats, args.no_counters}, counters);
  if (args.json) {
    print_json(validation::kernel_validation_to_json(report, loaded.path.string()));
  } else {
    print_rows(report, loaded, counters);
  }
}

} // namespace cachewise::cli
