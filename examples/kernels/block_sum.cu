// A block-wise sum over a type, a block size and whether each thread first adds two elements:
// a shared-memory tree down to 32 partial sums, then a warp's shuffles (include/).
#include <block_sum_helpers.h>

template <typename T, int THREADS, bool FIRST_ADD>
__global__ void block_sum(const T* in, T* out) {
  __shared__ T partial[THREADS];
  const unsigned tid = threadIdx.x;
  const unsigned i = blockIdx.x * (FIRST_ADD ? 2 * THREADS : THREADS) + tid;
  partial[tid] = FIRST_ADD ? in[i] + in[i + THREADS] : in[i];
  __syncthreads();
  for (unsigned s = THREADS / 2; s >= 32; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    const T sum = warp_sum(partial[tid]);
    if (tid == 0) out[blockIdx.x] = sum;
  }
}
