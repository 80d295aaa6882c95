// stencil2d's candidate space: shared tile or not, block shape, rows per thread, vector width.
#include "families/family_space.hpp"

namespace cachewise::detail {

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

} // namespace cachewise::detail
