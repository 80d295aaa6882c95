// Each thread sums STEPS elements: one warp load per step. With 32 warps and STEPS past 2^16,
// a block makes more warp memory accesses than the extractor traces (2^21): that candidate
// alone is rejected.
__global__ void sum_steps(float* out, const float* in) {
  float sum = 0.0f;
  for (int k = 0; k < STEPS; ++k) sum += in[k * blockDim.x + threadIdx.x];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
