// Vector accesses and arithmetic of other widths: float4 / float2 copies with a runtime loop
// bound, a double-precision axpy, a half2 fma, and a broadcast of an integer index by shuffle.
#include <cuda_fp16.h>

__global__ void copy_float4(const float4* in, float4* out, int n4, int repeats) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  for (int r = 0; r < repeats; ++r) out[r * n4 + i] = in[r * n4 + i];
}

__global__ void copy_float2(const float2* in, float2* out, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) out[i] = in[i];
}

__global__ void daxpy(double a, const double* x, double* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void hfma2(const __half2* a, const __half2* b, __half2* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __hfma2(a[i], b[i], c[i]);
}

__global__ void broadcast_base(const int* in, int* out, int stride) {
  int lane = threadIdx.x % 32;
  int base = __shfl_sync(0xffffffffu, (blockIdx.x * blockDim.x + threadIdx.x) * stride, 3);
  out[base + lane] = in[base + lane];
}

__global__ void count_per_block(int* counters) {
  if (threadIdx.x % 2 == 0) atomicAdd(&counters[blockIdx.x], 1);
}

__global__ void ballot_offset(int* out) {
  unsigned votes = __ballot_sync(0xffffffffu, threadIdx.x % 5 == 0);
  out[__popc(votes) * 32 + threadIdx.x] = 1;
}
