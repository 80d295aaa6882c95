// Helpers of examples/kernels/block_sum.cu, in a directory of their own as a project keeps its
// headers: the file includes them as <block_sum_helpers.h>, so it needs -I examples/kernels/include.
#pragma once

/// The sum over a warp's 32 lanes, in lane 0: a shuffle tree.
template <typename T>
__device__ T warp_sum(T value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;
}
