// y = A x for a sparse matrix A in CSR form (row_ptr, col, val), THREADS_PER_ROW threads per
// row: 1 walks a row in one thread (CSR-scalar), 32 splits it across a warp and sums with
// __shfl_down_sync (CSR-vector). The loop bounds and the x addresses come from the index arrays,
// so ranking it needs their contents declared (spmv.json, docs/kernel-spec.md).
#ifndef THREADS_PER_ROW
#define THREADS_PER_ROW 1
#endif

__global__ void csr_spmv(const int* __restrict__ row_ptr, const int* __restrict__ col, const float* __restrict__ val,
                         const float* __restrict__ x, float* __restrict__ y, int rows) {
  const int thread = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = thread / THREADS_PER_ROW;
  const int lane = thread % THREADS_PER_ROW;
  float sum = 0.0f;
  if (row < rows) {
    for (int k = row_ptr[row] + lane; k < row_ptr[row + 1]; k += THREADS_PER_ROW) sum += val[k] * x[col[k]];
  }
  // Every thread takes part in the shuffles (none returned early): the full mask is valid.
  for (int offset = THREADS_PER_ROW / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset, THREADS_PER_ROW);
  if (row < rows && lane == 0) y[row] = sum;
}
