__global__ void spill(float* out, const float* in, int n) {
  float v[48];
#pragma unroll
  for (int i = 0; i < 48; ++i) v[i] = in[i * n + threadIdx.x];
  float s = 0;
#pragma unroll
  for (int i = 0; i < 48; ++i) s += v[i] * v[47 - i] + v[(i * 7) % 48];
  out[threadIdx.x] = s;
}
__global__ void stack(float* out, int k) {
  float local[32];
  for (int i = 0; i < 32; ++i) local[i] = i * out[i];
  out[threadIdx.x] = local[k];
}
