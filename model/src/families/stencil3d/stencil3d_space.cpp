// stencil3d's candidate space: 2.5D streaming or 3D blocking, block shape, z chunk, vector width.
#include "families/family_space.hpp"

namespace cachewise::detail {

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

} // namespace cachewise::detail
