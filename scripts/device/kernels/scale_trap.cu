// A kernel whose BLOCK=256 variant dies on the GPU (__trap) while every other variant scales
// its input: the tuner must mark that candidate failed and go on (scripts/device/user_kernels.sh).
__global__ void scale_or_trap(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if BLOCK == 256
  if (i == 0) __trap();
#endif
  if (i < n) out[i] = 2.0f * in[i];
}
