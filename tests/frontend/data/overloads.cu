// Two kernels named scale: --entry must name one by its parameters (tests/cli/suggest_kernel_tests.cmake).
__global__ void scale(float* out, const float* in) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 2.0f * in[i];
}

__global__ void scale(double* out, const double* in) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 2.0 * in[i];
}
