// copy's candidate space: block size, vector width, elements per thread (stride pinned to 1).
#include "families/family_space.hpp"

namespace cachewise::detail {

FamilySpace copy_space() {
  return {{{"block", {64, 128, 256, 512, 1024}}, {"vector", {1, 2, 4, 8}}, {"ept", {1, 2, 4, 8}}, {"stride", {1}}},
          nullptr};
}

} // namespace cachewise::detail
