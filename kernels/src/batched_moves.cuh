// Element moves in small batches: a batch's loads are issued before its stores, so a thread
// keeps several global loads in flight. Moving one element at a time (load, then the store
// that needs it) leaves one load per thread in flight and DRAM latency-bound: on the H200 a
// 4096^2 transpose ran at ~55% of copy bandwidth that way. The addresses and their per-thread
// order within loads (and within stores) stay exactly the contract's.
#pragma once

#include "cachewise/model/families/family_kernels.hpp"

namespace cachewise::kernels {

/// For e in [0, count): `load(e, value)` returns false when element e is out of bounds (and
/// then loads nothing); `store(e, value)` writes a loaded value.
template <typename Word, typename Load, typename Store>
__device__ __forceinline__ void batched_moves(int count, Load load, Store store) {
  for (int first = 0; first < count; first += kMoveBatch) {
    Word values[kMoveBatch];
    bool loaded[kMoveBatch];
#pragma unroll
    for (int u = 0; u < kMoveBatch; ++u) loaded[u] = first + u < count && load(first + u, values[u]);
#pragma unroll
    for (int u = 0; u < kMoveBatch; ++u) {
      if (loaded[u]) store(first + u, values[u]);
    }
  }
}

} // namespace cachewise::kernels
