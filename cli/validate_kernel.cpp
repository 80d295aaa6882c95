// validate --kernel/--spec: rank with the front end, then per candidate load it on the GPU
// (tuner::LoadedKernel), check it against the spec's reference, time it and read its counters.
#include "validate_kernel.hpp"

#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "cachewise/cupti.hpp"
#include "cachewise/frontend/kernel_advisor.hpp"
#include "cachewise/kernels.hpp"
#include "cachewise/tuner.hpp"
#include "cachewise/tuner/kernel_tuning.hpp"
#include "common.hpp"
#include "evicted_pass.hpp"

namespace cachewise::cli {
namespace {

struct KernelRow {
  advisor::Candidate candidate;
  std::size_t predicted_rank = 0;
  std::optional<double> median_us; ///< empty: the candidate failed (failure says why)
  std::string failure;
  std::map<std::string, double> measured;
};

std::string fixed(double value, int precision) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

KernelRow measure_row(tuner::Device& device, const tuner::KernelCandidates& candidates,
                      const advisor::Candidate& candidate, std::size_t rank, const KernelValidateArguments& args,
                      const std::vector<std::string>& counters, std::int64_t l2_bytes, double baseline_bytes) {
  KernelRow row{candidate, rank, std::nullopt, {}, {}};
  try {
    tuner::LoadedKernel loaded(device, candidates, candidates.at(candidate.config), {l2_bytes});
    std::vector<double> samples_ms;
    loaded.run(0); // the reference check and a warm-up
    for (int i = 1; i <= args.repeats; ++i) samples_ms.push_back(loaded.run(i));
    row.median_us = tuner::estimate_median(samples_ms).median * 1e3;
    // As validate --pattern measures: from an evicted L2, the dirty lines the kernel leaves
    // counted as its DRAM writes; each pass the same launch on the same buffer set.
    if (!args.no_counters)
      row.measured = measure_evicted_pass(
          counters, [&] { loaded.run(1); }, baseline_bytes);
  } catch (const InputError& error) {
    row.failure = error.what(); // wrong output, a launch past the limits: reported, the others go on
  }
  return row;
}

nlohmann::json rows_json(const std::string& subject, const std::string& device, const LoadedProfile& loaded,
                         const std::vector<KernelRow>& rows, double baseline_bytes) {
  nlohmann::json json = {{"kernel", subject},
                         {"device", device},
                         {"profile", loaded.path.string()},
                         {"pass_baseline_dram_write_bytes", baseline_bytes},
                         {"candidates", nlohmann::json::array()}};
  for (const KernelRow& row : rows) {
    nlohmann::json entry = {
        {"config", row.candidate.config.to_string()},
        {"predicted_rank", row.predicted_rank},
        {"predicted", {{"time_us", row.candidate.prediction.time_us}, {"metrics", row.candidate.prediction.metrics}}}};
    if (row.median_us) {
      entry["measured"] = {{"median_us", *row.median_us}, {"metrics", row.measured}};
    } else {
      entry["failure"] = row.failure;
    }
    json["candidates"].push_back(std::move(entry));
  }
  return json;
}

void print_rows(const std::string& subject, const std::string& device, const LoadedProfile& loaded,
                const std::vector<KernelRow>& rows, const std::vector<std::string>& counters) {
  std::cout << subject << " on " << device << " (profile " << loaded.path.string() << ", " << loaded.source << ")\n\n"
            << std::left << std::setw(5) << "rank" << std::setw(40) << "config" << std::right << std::setw(12)
            << "pred us" << std::setw(12) << "meas us" << '\n';
  for (const KernelRow& row : rows) {
    std::cout << std::left << std::setw(5) << row.predicted_rank << std::setw(40) << row.candidate.config.to_string()
              << std::right << std::setw(12) << fixed(row.candidate.prediction.time_us, 1) << std::setw(12)
              << (row.median_us ? fixed(*row.median_us, 1) : "failed") << '\n';
  }
  for (const KernelRow& row : rows) {
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
  kernels::require_device();
  frontend::Compiler compiler;
  frontend::KernelSuggestOptions options;
  options.suggest.top = args.top;
  const advisor::Suggestion suggestion = frontend::suggest_kernel(spec, loaded.profile, compiler, options).suggestion;
  const std::unique_ptr<tuner::Device> device = tuner::open_cuda_device();
  const tuner::DeviceLimits limits = device->limits();
  const tuner::KernelCandidates candidates(spec, compiler, limits.compute_capability);
  const double baseline_bytes = args.no_counters ? 0.0 : pass_baseline_dram_write_bytes();
  std::vector<KernelRow> rows;
  for (std::size_t i = 0; i < suggestion.ranked.size(); ++i) {
    rows.push_back(measure_row(*device, candidates, suggestion.ranked[i], i + 1, args, counters,
                               loaded.profile.device.l2_bytes_reported, baseline_bytes));
  }
  const std::string subject = spec.entry + " in " + spec.source.string();
  if (args.json) {
    print_json(rows_json(subject, limits.name, loaded, rows, baseline_bytes));
  } else {
    print_rows(subject, limits.name, loaded, rows, counters);
  }
}

} // namespace cachewise::cli
