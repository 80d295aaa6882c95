// Double-precision CPU reference for every family, compared point by point with the kernel's
// output (docs/pattern-families.md defines what each family computes).
#include <cmath>
#include <functional>
#include <limits>

#include "cachewise/kernels.hpp"
#include "family_arrays.hpp"

namespace cachewise::kernels {
namespace {

struct ReferencePoint {
  std::int64_t output_index = 0;
  double value = 0.0;
  double magnitude = 0.0; ///< sum of |terms|: the scale rounding errors are relative to
};

/// The points a family writes, numbered 0..count-1, and the reference value of each.
struct ReferenceSet {
  std::int64_t count = 0;
  std::function<ReferencePoint(std::int64_t)> point;
};

ReferenceSet reference_set(const ProblemSpec& problem, const FamilyShape& shape,
                           const std::vector<std::vector<double>>& inputs) {
  const std::int64_t n = shape.n, m = shape.m, k = shape.k;
  const std::vector<double>& in = inputs[0];
  if (problem.family == "transpose") {
    return {n * m, [&in, n, m](std::int64_t i) { // i walks out (m x n) row by row
              const std::int64_t row = i / n, col = i % n;
              const double value = in[static_cast<std::size_t>(col * m + row)];
              return ReferencePoint{i, value, std::abs(value)};
            }};
  }
  if (problem.family == "copy") {
    const std::int64_t stride = shape.copy_stride;
    return {n, [&in, stride](std::int64_t i) {
              const double value = in[static_cast<std::size_t>(i * stride)];
              return ReferencePoint{i, value, std::abs(value)};
            }};
  }
  if (problem.family == "stencil2d") {
    const std::int64_t r = shape.stencil_radius;
    const std::int64_t width = m - 2 * r, height = n - 2 * r;
    if (width <= 0 || height <= 0) return {0, {}};
    return {width * height, [&in, r, m, width](std::int64_t i) {
              const std::int64_t y = r + i / width, x = r + i % width;
              const auto at = [&](std::int64_t yy, std::int64_t xx) {
                return in[static_cast<std::size_t>(yy * m + xx)];
              };
              double value = stencil_coefficient(0) * at(y, x);
              double magnitude = std::abs(value);
              for (std::int64_t d = 1; d <= r; ++d) {
                const double c = stencil_coefficient(static_cast<int>(d));
                for (const double tap : {at(y, x - d), at(y, x + d), at(y - d, x), at(y + d, x)}) {
                  value += c * tap;
                  magnitude += std::abs(c * tap);
                }
              }
              return ReferencePoint{y * m + x, value, magnitude};
            }};
  }
  if (problem.family == "stencil3d") {
    // Interior rows whole: their border points x = 0 and x = m-1 carry the input through.
    const std::int64_t height = n - 2, depth = k - 2;
    if (m <= 2 || height <= 0 || depth <= 0) return {0, {}};
    return {m * height * depth, [&in, n, m, height](std::int64_t i) {
              const std::int64_t x = i % m, y = 1 + (i / m) % height, z = 1 + i / (m * height);
              const auto at = [&](std::int64_t zz, std::int64_t yy, std::int64_t xx) {
                return in[static_cast<std::size_t>((zz * n + yy) * m + xx)];
              };
              if (x == 0 || x == m - 1) return ReferencePoint{(z * n + y) * m + x, at(z, y, x), std::abs(at(z, y, x))};
              const double c0 = stencil_coefficient(0), c1 = stencil_coefficient(1);
              double value = c0 * at(z, y, x);
              double magnitude = std::abs(value);
              for (const double tap : {at(z, y, x - 1), at(z, y, x + 1), at(z, y - 1, x), at(z, y + 1, x),
                                       at(z - 1, y, x), at(z + 1, y, x)}) {
                value += c1 * tap;
                magnitude += std::abs(c1 * tap);
              }
              return ReferencePoint{(z * n + y) * m + x, value, magnitude};
            }};
  }
  const std::vector<double>& b = inputs[1]; // gemm: C (n x m) = A (n x k) * B (k x m)
  return {n * m, [&in, &b, m, k](std::int64_t i) {
            const std::int64_t row = i / m, col = i % m;
            double value = 0.0, magnitude = 0.0;
            for (std::int64_t p = 0; p < k; ++p) {
              const double term = in[static_cast<std::size_t>(row * k + p)] * b[static_cast<std::size_t>(p * m + col)];
              value += term;
              magnitude += std::abs(term);
            }
            return ReferencePoint{i, value, magnitude};
          }};
}

} // namespace

double max_relative_error(const ProblemSpec& problem, const Config& config, const Workload& workload,
                          std::int64_t max_checked_points) {
  const FamilyShape shape = family_shape(problem, config);
  const std::vector<std::vector<double>> inputs = workload.inputs_on_host();
  const std::vector<double> output = workload.output_on_host();
  const ReferenceSet reference = reference_set(problem, shape, inputs);
  const bool sample = max_checked_points > 0 && reference.count > max_checked_points;
  const std::int64_t checked = sample ? max_checked_points : reference.count;
  double worst = 0.0;
  for (std::int64_t c = 0; c < checked; ++c) {
    // Evenly spread sample whose first and last points are the set's first and last.
    const std::int64_t i = sample ? c * (reference.count - 1) / (checked - 1) : c;
    const ReferencePoint point = reference.point(i);
    const double actual = output[static_cast<std::size_t>(point.output_index)];
    if (!std::isfinite(actual)) return std::numeric_limits<double>::infinity();
    const double error = std::abs(actual - point.value) / std::max(point.magnitude, std::numeric_limits<double>::min());
    worst = std::max(worst, error);
  }
  return worst;
}

double error_tolerance(const ProblemSpec& problem) {
  if (problem.family == "transpose" || problem.family == "copy") return 0.0;
  switch (problem.dtype) {
  case DataType::f64: return 1e-12;
  case DataType::f32: return 1e-5;
  case DataType::f16: return 2e-3;
  }
  return 0.0;
}

bool check_against_cpu_reference(const ProblemSpec& problem, const Config& config, const Workload& workload,
                                 std::int64_t max_checked_points) {
  return max_relative_error(problem, config, workload, max_checked_points) <= error_tolerance(problem);
}

} // namespace cachewise::kernels
