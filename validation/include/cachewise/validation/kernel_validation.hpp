// cachewise::validation of a user kernel: the front end's best-ranked candidates of a spec,
// each loaded on the GPU through the tuner's launch layer (tuner::LoadedKernel), checked
// against the spec's reference, timed, and its counters read beside the prediction. GPU only.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cachewise/advisor.hpp"
#include "cachewise/frontend/spec.hpp"
#include "cachewise/model.hpp"

namespace cachewise::validation {

struct KernelValidationOptions {
  std::size_t top = 3; ///< the front end's K best candidates
  int repeats = 15;
  bool no_counters = false; ///< time and check only, no CUPTI
};

struct KernelRow {
  advisor::Candidate candidate;
  std::size_t predicted_rank = 0;
  std::optional<double> median_us; ///< empty: the candidate failed (failure says why)
  std::string failure;
  std::map<std::string, double> measured;
};

struct KernelValidation {
  std::string subject; ///< "transpose_tiled in transpose.cu"
  std::string device;  ///< the GPU's name
  std::vector<KernelRow> rows;
  double pass_baseline_bytes = 0.0;
};

/// `counters`: the CUPTI metrics to read. Throws InputError for a bad spec, NoDeviceError
/// without a GPU; a candidate that fails (wrong output, past the limits) is a row with its failure.
KernelValidation validate_kernel(const frontend::KernelSpec& spec, const DeviceProfile& profile,
                                 const KernelValidationOptions& options, const std::vector<std::string>& counters);

/// What `advisor validate --kernel/--spec --json` prints; `profile_path` names the profile.
nlohmann::json kernel_validation_to_json(const KernelValidation& validation, const std::string& profile_path);

} // namespace cachewise::validation
