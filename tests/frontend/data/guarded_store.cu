// A store made only where the loaded value is positive: the branch around it decides on data.
__global__ void store_positive(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  if (v > 0.0f) out[i] = v;
}
