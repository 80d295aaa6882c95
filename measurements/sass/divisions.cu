__global__ void reduce_divergent(const float* in, float* out) {
  extern __shared__ float sdata[];
  unsigned tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
__global__ void rem_only(const unsigned* a, const unsigned* b, unsigned* c) {
  unsigned i = threadIdx.x;
  c[i] = a[i] % b[i];
}
__global__ void div_only(const unsigned* a, const unsigned* b, unsigned* c) {
  unsigned i = threadIdx.x;
  c[i] = a[i] / b[i];
}
__global__ void srem_only(const int* a, const int* b, int* c) {
  unsigned i = threadIdx.x;
  c[i] = a[i] % b[i];
}
