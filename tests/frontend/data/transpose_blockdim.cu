// The tiled transpose with its row count read from the launch (blockDim.y), not a macro: a
// BLOCK_ROWS parameter shapes only --block, and must not be reported as unused.
#define TILE_DIM 32

__global__ void transpose_rows(float* odata, const float* idata, int width, int height) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += blockDim.y) tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += blockDim.y) odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
