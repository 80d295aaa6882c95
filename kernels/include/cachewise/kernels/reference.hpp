// cachewise::kernels CPU reference: checks a kernel's output against double-precision results.
#pragma once

#include <cstdint>

#include "cachewise/kernels/workload.hpp"
#include "cachewise/model/problem.hpp"

namespace cachewise::kernels {

/// Largest error of the selected set's output against a double-precision CPU reference:
/// max over checked points of |out - ref| / (sum of |terms| in ref), +inf for an unwritten
/// (NaN) point. `max_checked_points` 0 checks every point; otherwise an evenly spread sample
/// that always includes the first and last points (edges of tiles that do not divide n).
/// `config` supplies what the problem keeps there (stencil2d radius, copy stride).
double max_relative_error(const ProblemSpec& problem, const Config& config, const Workload& workload,
                          std::int64_t max_checked_points = 0);

/// Tolerance for max_relative_error: 0 for copy/transpose (bit-exact), else by dtype
/// (f64 1e-12, f32 1e-5, f16 2e-3).
double error_tolerance(const ProblemSpec& problem);

/// max_relative_error(...) <= error_tolerance(problem).
bool check_against_cpu_reference(const ProblemSpec& problem, const Config& config, const Workload& workload,
                                 std::int64_t max_checked_points = 0);

} // namespace cachewise::kernels
