// Device code only: NVRTC compiles it in process.
#include "device_only_helper.cuh"

__global__ void scale(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = SCALE * load_twice(in, i);
}
