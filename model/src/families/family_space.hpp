// The built-in families' candidate spaces, one source per family (families/<family>/<family>_space.cpp):
// the values the advisor varies and the search policy it adds (docs/advisor.md lists them).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/model/search_space.hpp"

namespace cachewise::detail {

using Values = std::vector<std::int64_t>;

struct FamilySpace {
  std::vector<std::pair<std::string, Values>> parameters;
  void (*add_policy)(SearchSpace& space, std::int64_t warp_size);
};

/// Partial warps leave lanes idle in every instruction: the advisor does not propose them.
void require_whole_warps(SearchSpace& space, const std::vector<std::string>& block_keys, std::int64_t warp_size);

FamilySpace transpose_space();
FamilySpace copy_space();
FamilySpace stencil2d_space();
FamilySpace stencil3d_space();
FamilySpace gemm_space();

} // namespace cachewise::detail
