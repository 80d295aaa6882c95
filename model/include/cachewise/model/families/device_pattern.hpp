// A built-in family's pattern as it runs on one device: what build_pattern gives, with the
// instruction overhead the device profile's calibration fitted (gemm's, docs/calibration.md).
#pragma once

#include "cachewise/model/families/families.hpp"
#include "cachewise/model/profile/calibration.hpp"

namespace cachewise {

/// build_pattern(problem, config) with `calibration`'s gemm overhead fit; the two-argument
/// build_pattern uses default_calibration() (no fitted overhead). Same errors as build_pattern.
KernelPattern build_pattern(const ProblemSpec& problem, const Config& config, const Calibration& calibration);

} // namespace cachewise
