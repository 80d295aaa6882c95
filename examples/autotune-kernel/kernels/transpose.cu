// The consumer's own kernel: an out-of-place transpose of a rows x cols matrix through a
// shared tile, guarded for sizes that are not a multiple of the tile. TILE, ROWS and PAD are
// macros the build tunes (transpose.json); the program compiles them in from the header.
#ifndef TILE
#define TILE 32
#endif
#ifndef ROWS
#define ROWS 8
#endif
#ifndef PAD
#define PAD 0
#endif

__global__ void transpose_guarded(float* out, const float* in, int rows, int cols) {
  __shared__ float tile[TILE][TILE + PAD];
  int col = blockIdx.x * TILE + threadIdx.x;
  int row = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) {
    if (col < cols && row + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(row + j) * cols + col];
  }
  __syncthreads();
  col = blockIdx.y * TILE + threadIdx.x;
  row = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) {
    if (col < rows && row + j < cols) out[(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j];
  }
}
