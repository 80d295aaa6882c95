// C = A x B for square n x n row-major float matrices, in the common public style of a
// shared-memory tiled GEMM with register blocking: a block of BLOCK_SIZE_X x BLOCK_SIZE_Y
// threads computes a (BLOCK_SIZE_Y * TILE_SIZE_Y) x (BLOCK_SIZE_X * TILE_SIZE_X) tile of C,
// each thread TILE_SIZE_Y x TILE_SIZE_X outputs strided by the block size, walking k in
// steps of K_STEP through tiles of A and B staged in shared memory.
#ifndef BLOCK_SIZE_X
#define BLOCK_SIZE_X 16
#endif
#ifndef BLOCK_SIZE_Y
#define BLOCK_SIZE_Y 16
#endif
#ifndef TILE_SIZE_X
#define TILE_SIZE_X 2
#endif
#ifndef TILE_SIZE_Y
#define TILE_SIZE_Y 2
#endif
#define K_STEP 16
#define ROWS (BLOCK_SIZE_Y * TILE_SIZE_Y)
#define COLS (BLOCK_SIZE_X * TILE_SIZE_X)
#define THREADS (BLOCK_SIZE_X * BLOCK_SIZE_Y)

__global__ void gemm_register_tiled(float* c, const float* a, const float* b, int n) {
  __shared__ float a_tile[ROWS][K_STEP];
  __shared__ float b_tile[K_STEP][COLS];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int thread = ty * BLOCK_SIZE_X + tx;
  const int row0 = blockIdx.y * ROWS, col0 = blockIdx.x * COLS;
  float acc[TILE_SIZE_Y][TILE_SIZE_X];
#pragma unroll
  for (int i = 0; i < TILE_SIZE_Y; ++i)
#pragma unroll
    for (int j = 0; j < TILE_SIZE_X; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < n; k0 += K_STEP) {
    // Every thread copies its share of both tiles, consecutive threads along a row.
    for (int e = thread; e < ROWS * K_STEP; e += THREADS) {
      const int r = e / K_STEP, kk = e % K_STEP;
      a_tile[r][kk] = a[(row0 + r) * n + k0 + kk];
    }
    for (int e = thread; e < K_STEP * COLS; e += THREADS) {
      const int kk = e / COLS, cc = e % COLS;
      b_tile[kk][cc] = b[(k0 + kk) * n + col0 + cc];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < K_STEP; ++kk) {
      float a_reg[TILE_SIZE_Y], b_reg[TILE_SIZE_X];
#pragma unroll
      for (int i = 0; i < TILE_SIZE_Y; ++i) a_reg[i] = a_tile[ty + i * BLOCK_SIZE_Y][kk];
#pragma unroll
      for (int j = 0; j < TILE_SIZE_X; ++j) b_reg[j] = b_tile[kk][tx + j * BLOCK_SIZE_X];
#pragma unroll
      for (int i = 0; i < TILE_SIZE_Y; ++i)
#pragma unroll
        for (int j = 0; j < TILE_SIZE_X; ++j) acc[i][j] += a_reg[i] * b_reg[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TILE_SIZE_Y; ++i)
#pragma unroll
    for (int j = 0; j < TILE_SIZE_X; ++j) c[(row0 + ty + i * BLOCK_SIZE_Y) * n + col0 + tx + j * BLOCK_SIZE_X] = acc[i][j];
}
