// Reads of a __constant__ table: every lane of a warp on one word (a broadcast), each lane on
// its own word, and each group of 8 lanes on one word. The same instructions; only the words a
// warp reads differ.
__constant__ float weights[256];

__global__ void constant_broadcast(float* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = weights[blockIdx.x & 255u];
}

__global__ void constant_per_lane(float* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = weights[threadIdx.x & 255u];
}

__global__ void constant_per_eight_lanes(float* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = weights[(threadIdx.x >> 3) & 255u];
}
