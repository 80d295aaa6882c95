#include "family_arrays.hpp"

#include <string>

namespace cachewise::kernels {

FamilyShape family_shape(const ProblemSpec& problem, const Config& config) {
  FamilyShape shape;
  shape.n = problem.n;
  shape.m = problem.m == 0 ? problem.n : problem.m;
  shape.k = problem.k == 0 ? problem.n : problem.k;
  if (shape.n <= 0 || shape.m <= 0 || shape.k <= 0) {
    throw InputError("problem " + problem.family + ": sizes must be positive (n=" + std::to_string(problem.n) + ")");
  }
  const std::int64_t n = shape.n, m = shape.m, k = shape.k;
  if (problem.family == "transpose") {
    shape.array_elements = {n * m, m * n};
  } else if (problem.family == "copy") {
    shape.copy_stride = config.get_or("stride", 1);
    shape.array_elements = {n * shape.copy_stride, n};
  } else if (problem.family == "stencil2d") {
    shape.stencil_radius = static_cast<int>(config.get_or("radius", 1));
    shape.array_elements = {n * m, n * m};
  } else if (problem.family == "stencil3d") {
    shape.array_elements = {k * n * m, k * n * m};
  } else if (problem.family == "gemm") {
    shape.array_elements = {n * k, k * m, n * m};
  } else {
    family_info(problem.family); // throws the model's "unknown pattern" error
    throw InputError("kernels: no CUDA kernel for pattern '" + problem.family + "'");
  }
  return shape;
}

} // namespace cachewise::kernels
