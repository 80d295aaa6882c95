// Barriers part of a block reaches, and traps (tests/cli/suggest_kernel_tests.cmake).
__global__ void divergent_sync(float* out, const float* in) {
  __shared__ float tile[256];
  const int t = threadIdx.x;
  tile[t] = in[blockIdx.x * blockDim.x + t];
  if (t < 16) __syncthreads();
  out[blockIdx.x * blockDim.x + t] = tile[255 - t];
}

// Threads past n leave before the barrier: the others still reach it together.
__global__ void early_exit_sync(float* out, const float* in, int n) {
  __shared__ float tile[256];
  const int t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  if (i >= n) return;
  tile[t] = in[i];
  __syncthreads();
  out[i] = tile[t ^ 1];
}

__global__ void trap_past_n(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) __trap();
  out[i] = in[i];
}
