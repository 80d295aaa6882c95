#include "cachewise/advisor/notes.hpp"

#include "cachewise/advisor/units.hpp"

namespace cachewise::advisor {

std::optional<std::string> idle_sm_warning(std::int64_t grid_blocks, int sm_count) {
  if (grid_blocks <= 0 || grid_blocks >= sm_count) return std::nullopt;
  return std::to_string(grid_blocks) + (grid_blocks == 1 ? " block" : " blocks") + " on " + std::to_string(sm_count) +
         " SMs: " + std::to_string(sm_count - grid_blocks) + " SMs idle";
}

std::optional<std::string> size_warning(const ProblemSpec& problem) {
  // The other families' n is a side: n x n (transpose, stencil2d, gemm), n^3 (stencil3d).
  if (problem.family != "copy") return std::nullopt;
  const double bytes = static_cast<double>(problem.n) * element_bytes(problem.dtype);
  return "copy n=" + std::to_string(problem.n) + " elements = " + bytes_text(bytes) +
         " per array (--n counts elements for copy)";
}

} // namespace cachewise::advisor
