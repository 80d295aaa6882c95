// validate_kernel: a user kernel's best-ranked candidates loaded on the GPU, checked, timed and counted.
#include "cachewise/validation/kernel_validation.hpp"

#include <memory>

#include "cachewise/frontend/kernel_advisor.hpp"
#include "cachewise/kernels.hpp"
#include "cachewise/tuner/device.hpp"
#include "cachewise/tuner/kernel_tuning.hpp"
#include "cachewise/tuner/statistics.hpp"
#include "cachewise/validation/evicted_pass.hpp"

namespace cachewise::validation {
namespace {

KernelRow measure_row(tuner::Device& device, const tuner::KernelCandidates& candidates,
                      const advisor::Candidate& candidate, std::size_t rank, const KernelValidationOptions& args,
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

} // namespace

KernelValidation validate_kernel(const frontend::KernelSpec& spec, const DeviceProfile& profile,
                                 const KernelValidationOptions& options, const std::vector<std::string>& counters) {
  kernels::require_device();
  frontend::Compiler compiler;
  frontend::KernelSuggestOptions suggest;
  suggest.suggest.top = options.top;
  const advisor::Suggestion suggestion = frontend::suggest_kernel(spec, profile, compiler, suggest).suggestion;
  const std::unique_ptr<tuner::Device> device = tuner::open_cuda_device();
  const tuner::DeviceLimits limits = device->limits();
  const tuner::KernelCandidates candidates(spec, compiler, limits.compute_capability);
  KernelValidation validation;
  validation.subject = spec.entry + " in " + spec.source.string();
  validation.device = limits.name;
  validation.pass_baseline_bytes = options.no_counters ? 0.0 : pass_baseline_dram_write_bytes();
  for (std::size_t i = 0; i < suggestion.ranked.size(); ++i) {
    validation.rows.push_back(measure_row(*device, candidates, suggestion.ranked[i], i + 1, options, counters,
                                          profile.device.l2_bytes_reported, validation.pass_baseline_bytes));
  }
  return validation;
}

nlohmann::json kernel_validation_to_json(const KernelValidation& validation, const std::string& profile_path) {
  nlohmann::json json = {{"kernel", validation.subject},
                         {"device", validation.device},
                         {"profile", profile_path},
                         {"pass_baseline_dram_write_bytes", validation.pass_baseline_bytes},
                         {"candidates", nlohmann::json::array()}};
  for (const KernelRow& row : validation.rows) {
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

} // namespace cachewise::validation
