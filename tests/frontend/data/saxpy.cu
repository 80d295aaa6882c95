// y = alpha * x + y with a float scalar argument (alpha) and an int one (n).
__global__ void saxpy(float* y, const float* x, float alpha, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}
