// Parameters that cannot reach the code: COLS is #defined without a guard, so -DCOLS loses to
// it; BLOCK_SIZE is a template parameter, not a macro. ROWS is guarded and may be a --param.
#ifndef ROWS
#define ROWS 4
#endif
#define COLS 32

template <int BLOCK_SIZE>
__global__ void scale_tile(float* data) {
  data[blockIdx.x * BLOCK_SIZE + threadIdx.x] *= 2.0f;
}

__global__ void scale_rows(float* data) {
  for (int r = 0; r < ROWS; ++r) data[(blockIdx.x * ROWS + r) * COLS + threadIdx.x] *= 2.0f;
}
