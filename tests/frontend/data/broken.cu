__global__ void broken(float* out) {
  out[threadIdx.x] = 1.0f;
  out[0] = undefined_name;
}
