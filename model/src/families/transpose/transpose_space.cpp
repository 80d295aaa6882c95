// transpose's candidate space: staging through shared memory or not, tile, block shape, pad.
#include "families/family_space.hpp"

namespace cachewise::detail {

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

} // namespace cachewise::detail
