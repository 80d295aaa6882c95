// Array shapes and constants of the built-in families as docs/pattern-families.md defines
// them; shared by the workload (allocation), the launchers and the CPU reference.
#pragma once

#include <cstdint>
#include <vector>

#include "cachewise/model.hpp"

namespace cachewise::kernels {

/// Sizes with the contract's defaults filled in (m = n, k = n when 0; copy stride 1;
/// stencil2d radius 1).
struct FamilyShape {
  std::int64_t n = 0;
  std::int64_t m = 0;
  std::int64_t k = 0;
  std::int64_t copy_stride = 1;
  int stencil_radius = 1;
  /// Elements of each array: inputs in family order, then the output.
  std::vector<std::int64_t> array_elements;
};

/// Throws InputError for an unknown family or a non-positive size.
FamilyShape family_shape(const ProblemSpec& problem, const Config& config);

/// Stencil weights: c0 for the centre, c_d for the taps at distance d (2D and 3D).
inline double stencil_coefficient(int distance) { return distance == 0 ? 0.5 : 0.125 / distance; }

} // namespace cachewise::kernels
