// 256-bin histograms of data[i] % 256, one element per thread: per block in shared memory
// (blocks of 256 threads, merged into the global bins by one atomic per bin and block), and
// straight into the global bins.
__global__ void histogram_shared(const unsigned* data, unsigned* bins) {
  __shared__ unsigned local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&local[data[blockIdx.x * blockDim.x + threadIdx.x] % 256], 1u);
  __syncthreads();
  atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

__global__ void histogram_global(const unsigned* data, unsigned* bins) {
  atomicAdd(&bins[data[blockIdx.x * blockDim.x + threadIdx.x] % 256], 1u);
}
