// A 2D convolution with a 17 x 17 filter in the common public style: each block stages its
// output tile plus the filter's halo (16 rows and columns) in shared memory, then each thread
// computes TILE_SIZE_Y x TILE_SIZE_X outputs, strided by the block size, in registers; the
// filter lives in constant memory. The input is (width + 16) x (height + 16), row-major.
#ifndef BLOCK_SIZE_X
#define BLOCK_SIZE_X 32
#endif
#ifndef BLOCK_SIZE_Y
#define BLOCK_SIZE_Y 8
#endif
#ifndef TILE_SIZE_X
#define TILE_SIZE_X 1
#endif
#ifndef TILE_SIZE_Y
#define TILE_SIZE_Y 1
#endif
#define FILTER 17
#define OUT_ROWS (BLOCK_SIZE_Y * TILE_SIZE_Y)
#define OUT_COLS (BLOCK_SIZE_X * TILE_SIZE_X)
#define IN_ROWS (OUT_ROWS + FILTER - 1)
#define IN_COLS (OUT_COLS + FILTER - 1)

__constant__ float weights[FILTER * FILTER];

__global__ void convolution(float* output, const float* input, int width, int height) {
  __shared__ float tile[IN_ROWS][IN_COLS];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int out_x = blockIdx.x * OUT_COLS, out_y = blockIdx.y * OUT_ROWS;
  const int input_width = width + FILTER - 1;
  for (int r = ty; r < IN_ROWS; r += BLOCK_SIZE_Y)
    for (int col = tx; col < IN_COLS; col += BLOCK_SIZE_X) tile[r][col] = input[(out_y + r) * input_width + out_x + col];
  __syncthreads();

  float acc[TILE_SIZE_Y][TILE_SIZE_X];
#pragma unroll
  for (int i = 0; i < TILE_SIZE_Y; ++i)
#pragma unroll
    for (int j = 0; j < TILE_SIZE_X; ++j) acc[i][j] = 0.0f;
  for (int fy = 0; fy < FILTER; ++fy) {
    for (int fx = 0; fx < FILTER; ++fx) {
      const float w = weights[fy * FILTER + fx];
#pragma unroll
      for (int i = 0; i < TILE_SIZE_Y; ++i)
#pragma unroll
        for (int j = 0; j < TILE_SIZE_X; ++j) acc[i][j] += w * tile[ty + i * BLOCK_SIZE_Y + fy][tx + j * BLOCK_SIZE_X + fx];
    }
  }
#pragma unroll
  for (int i = 0; i < TILE_SIZE_Y; ++i)
#pragma unroll
    for (int j = 0; j < TILE_SIZE_X; ++j)
      output[(out_y + ty + i * BLOCK_SIZE_Y) * width + out_x + tx + j * BLOCK_SIZE_X] = acc[i][j];
}
