// Every candidate of this kernel fails to compile: `advisor tune` must say so in one line.
__global__ void broken(float* out, int n) {
  if (threadIdx.x < n) out[threadIdx.x] = undeclared_value * BLOCK;
}
