// The advisor's value lists per built-in family (docs/pattern-families.md names the keys).
// Family rules and device limits are deliberately NOT constraints here: build_pattern and
// check_fits_device are their single source of truth, and suggest() counts what they reject.
// The constraints below are search policy only: launch whole warps, and do not enumerate
// values of a key the family ignores for that config (they would be duplicates).
// Transpose and the stencils accept partial warps; copy and gemm require whole ones.
#include <algorithm>

#include "cachewise/advisor.hpp"

namespace cachewise::advisor {
namespace {

using Values = std::vector<std::int64_t>;

// Partial warps leave lanes idle in every instruction: the advisor does not propose them.
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

struct FamilySpace {
  std::vector<std::pair<std::string, Values>> parameters;
  void (*add_policy)(SearchSpace& space, std::int64_t warp_size);
};

FamilySpace transpose_space() {
  return {{{"smem", {0, 1}},
           {"tile", {16, 32, 64}},
           {"block_x", {8, 16, 32, 64}},
           {"block_y", {1, 2, 4, 8, 16, 32}},
           {"pad", {0, 1, 2, 4}}},
          [](SearchSpace& space, std::int64_t warp_size) {
            require_whole_warps(space, {"block_x", "block_y"}, warp_size);
          }};
}

FamilySpace copy_space() {
  return {{{"block", {64, 128, 256, 512, 1024}}, {"vector", {1, 2, 4, 8}}, {"ept", {1, 2, 4, 8}}, {"stride", {1}}},
          nullptr};
}

FamilySpace stencil2d_space() {
  return {{{"radius", {1}},
           {"smem", {0, 1}},
           {"block_x", {16, 32, 64, 128}},
           {"block_y", {1, 2, 4, 8, 16}},
           {"ept_y", {1, 2, 4, 8}},
           {"vector", {1, 2, 4, 8}}},
          [](SearchSpace& space, std::int64_t warp_size) {
            require_whole_warps(space, {"block_x", "block_y"}, warp_size);
          }};
}

FamilySpace stencil3d_space() {
  return {{{"mode", {0, 1}},
           {"block_x", {16, 32, 64, 128}},
           {"block_y", {1, 2, 4, 8, 16}},
           {"block_z", {1, 2, 4, 8}},
           {"z_chunk", {1, 8, 16, 32, 64}},
           {"vector", {1, 2, 4, 8}}},
          [](SearchSpace& space, std::int64_t warp_size) {
            require_whole_warps(space, {"block_x", "block_y", "block_z"}, warp_size);
            // 3D blocking ignores z_chunk: enumerate it once there.
            space.add_constraint(
                {"mode", "z_chunk"}, [](const Config& c) { return c.get("mode") == 1 || c.get("z_chunk") == 1; },
                "z_chunk only with mode 1");
          }};
}

FamilySpace gemm_space() {
  return {{{"bm", {32, 64, 128}},
           {"bn", {32, 64, 128}},
           {"bk", {8, 16, 32}},
           {"tm", {1, 2, 4, 8}},
           {"tn", {1, 2, 4, 8}},
           {"pad", {0, 1, 4}}},
          nullptr}; // gemm's own rules already demand whole warps
}

FamilySpace space_for(const std::string& family) {
  if (family == "transpose") return transpose_space();
  if (family == "copy") return copy_space();
  if (family == "stencil2d") return stencil2d_space();
  if (family == "stencil3d") return stencil3d_space();
  if (family == "gemm") return gemm_space();
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
    space.add_parameter(key, fixed.has(key) ? Values{fixed.get(key)} : values);
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

} // namespace cachewise::advisor
