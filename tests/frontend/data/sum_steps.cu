// Each thread sums STEPS elements: one warp load per step. With 32 warps and STEPS past 2^15,
// a block makes more warp memory accesses than the extractor traces (2^20): that candidate
// alone is rejected. The element index squares the step, so the loop is not affine in its trip
// and is interpreted trip by trip (docs/ptx-extraction.md, "Loop summaries").
__global__ void sum_steps(float* out, const float* in) {
  float sum = 0.0f;
  for (int k = 0; k < STEPS; ++k) sum += in[(k * k) % STEPS * blockDim.x + threadIdx.x];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
