// The advisor's value lists per built-in family (docs/pattern-families.md names the keys).
// Family rules and device limits are deliberately NOT constraints here: build_pattern and
// check_fits_device are their single source of truth, and suggest() counts what they reject.
// The constraints below are search policy only: launch whole warps, and do not enumerate
// values of a key the family ignores for that config (they would be duplicates).
// Transpose and the stencils accept partial warps; copy and gemm require whole ones.
#include <algorithm>

#include "cachewise/model/families/family_search_space.hpp"
#include "cachewise/model/errors.hpp"
#include "cachewise/model/families/families.hpp"
#include "families/family_space.hpp"

namespace cachewise {
namespace detail {

void require_whole_warps(SearchSpace& space, const std::vector<std::string>& block_keys, std::int64_t warp_size) {
  space.add_constraint(
      block_keys,
      [block_keys, warp_size](const Config& config) {
        std::int64_t threads = 1;
        for (const std::string& key : block_keys) threads *= config.get(key);
        return threads % warp_size == 0;
      },
      "whole warps per block");
}

} // namespace detail

namespace {

using detail::FamilySpace;

FamilySpace space_for(const std::string& family) {
  if (family == "transpose") return detail::transpose_space();
  if (family == "copy") return detail::copy_space();
  if (family == "stencil2d") return detail::stencil2d_space();
  if (family == "stencil3d") return detail::stencil3d_space();
  if (family == "gemm") return detail::gemm_space();
  throw InputError("the advisor has no candidate space for pattern '" + family + "'");
}

} // namespace

SearchSpace family_search_space(const ProblemSpec& problem, const DeviceProfile& profile, const Config& fixed) {
  const FamilyInfo& info = family_info(problem.family);
  for (const auto& [key, value] : fixed.values()) {
    if (std::ranges::find(info.config_keys, key) == info.config_keys.end()) {
      std::string keys;
      for (const std::string& k : info.config_keys) keys += (keys.empty() ? "" : ", ") + k;
      throw InputError("--fix: " + problem.family + " has no key '" + key + "' (keys: " + keys + ")");
    }
  }
  FamilySpace family = space_for(problem.family);
  SearchSpace space;
  for (auto& [key, values] : family.parameters) {
    space.add_parameter(key, fixed.has(key) ? detail::Values{fixed.get(key)} : values);
  }
  for (const auto& [key, value] : fixed.values()) { // a family key the advisor does not vary
    if (std::ranges::none_of(family.parameters,
                             [&key = key](const auto& p) { return p.first == key; })) { // clang 14 captures no binding
      space.add_parameter(key, {value});
    }
  }
  const std::int64_t warp_size = profile.device.warp_size > 0 ? profile.device.warp_size : 32;
  if (family.add_policy != nullptr) family.add_policy(space, warp_size);
  return space;
}

} // namespace cachewise
