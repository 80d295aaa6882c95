// The sum of n floats in the common public style of a grid-stride reduction: a fixed number
// of blocks (the launch's NUM_BLOCKS) strides over the input, each thread reading VECTOR
// floats at a time (float, float2 or float4 loads), then the block combines its threads'
// sums, by warp shuffles (WARP_SHUFFLE=1) or a shared-memory tree (0), and one thread adds
// the block's sum to the result atomically.
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef VECTOR
#define VECTOR 4
#endif
#ifndef WARP_SHUFFLE
#define WARP_SHUFFLE 1
#endif

__global__ void sum_grid_stride(float* result, const float* input, long long n) {
  const long long first = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK_SIZE;
  float sum = 0.0f;
#if VECTOR == 4
  const float4* input4 = reinterpret_cast<const float4*>(input);
  for (long long i = first; i < n / 4; i += stride) {
    const float4 v = input4[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  for (long long i = n / 4 * 4 + first; i < n; i += stride) sum += input[i];
#elif VECTOR == 2
  const float2* input2 = reinterpret_cast<const float2*>(input);
  for (long long i = first; i < n / 2; i += stride) {
    const float2 v = input2[i];
    sum += v.x + v.y;
  }
  for (long long i = n / 2 * 2 + first; i < n; i += stride) sum += input[i];
#else
  for (long long i = first; i < n; i += stride) sum += input[i];
#endif

#if WARP_SHUFFLE
  __shared__ float warp_sums[BLOCK_SIZE / 32];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < BLOCK_SIZE / 32 ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) atomicAdd(result, sum);
  }
#else
  __shared__ float partial[BLOCK_SIZE];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = BLOCK_SIZE / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(result, partial[0]);
#endif
}
