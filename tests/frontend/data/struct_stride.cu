// A strided scale whose sizes come in a struct passed by value: int width at byte 0, int stride
// at 4, float scale at 8 (12 bytes, aligned to 4). Only p.width and p.stride move addresses.
struct Shape {
  int width;
  int stride;
  float scale;
};

__global__ void scale_strided(float* out, const float* in, Shape p) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.width) out[i] = p.scale * in[i * p.stride];
}
