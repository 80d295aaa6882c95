// Out-of-bounds reads that only the grid's first or last block makes (tests/cli/suggest_kernel_tests.cmake).
__global__ void read_before(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i - 1];
}

__global__ void read_ahead(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i + n];
}
