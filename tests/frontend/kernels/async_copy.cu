// Staging through shared memory with cp.async (__pipeline_memcpy_async), as sm_80+ kernels do.
#include <cuda_pipeline.h>
__global__ void stage(const float4* in, float4* out) {
  __shared__ float4 tile[128];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&tile[t], &in[blockIdx.x * 128 + t], sizeof(float4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[blockIdx.x * 128 + t] = tile[127 - t];
}
