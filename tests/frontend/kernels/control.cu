// Divergent control flow and local memory: an if / else whose paths touch different arrays, a
// loop whose trip count differs per lane, a local array indexed at run time.
__global__ void if_else(const float* in, float* a, float* b, float* c, int n) {
  int t = threadIdx.x;
  if (t < 8) {
    for (int k = 0; k < n; ++k) a[k * 32 + t] = in[t] + k;
  } else {
    b[t] = in[t + 32] * 2.0f;
  }
  c[t] = 1.0f;
}

__global__ void triangle(float* out, int n) {
  int t = threadIdx.x;
  for (int k = 0; k <= t && k < n; ++k) out[k * 32 + t] = 0.0f;
  out[1024 + t] = 1.0f;
}

__global__ void local_array(const int* in, int* out, int k) {
  int buf[16];
  for (int i = 0; i < 16; ++i) buf[i] = in[threadIdx.x * 16 + i];
  out[threadIdx.x] = buf[k & 15];
}
