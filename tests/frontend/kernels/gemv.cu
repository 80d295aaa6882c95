// y = A x for a row-major rows x cols matrix: one thread per row, or one warp per row with a
// __shfl_down_sync reduction. Out-of-range threads return early.
__global__ void gemv_thread_per_row(const float* A, const float* x, float* y, int rows, int cols) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) sum += A[row * cols + c] * x[c];
  y[row] = sum;
}

__global__ void gemv_warp_per_row(const float* A, const float* x, float* y, int rows, int cols) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int c = lane; c < cols; c += 32) sum += A[row * cols + c] * x[c];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) y[row] = sum;
}
