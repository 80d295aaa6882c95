// gemm's candidate space: block tile, k step, thread tile, pad.
#include "families/family_space.hpp"

namespace cachewise::detail {

FamilySpace gemm_space() {
  return {{{"bm", {32, 64, 128}},
           {"bn", {32, 64, 128}},
           {"bk", {8, 16, 32}},
           {"tm", {1, 2, 4, 8}},
           {"tn", {1, 2, 4, 8}},
           {"pad", {0, 1, 4}}},
          nullptr}; // gemm's own rules already demand whole warps
}

} // namespace cachewise::detail
