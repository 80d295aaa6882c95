// A tiled copy whose TILE_DIM=64 build fails to compile: the other candidates are still ranked.
#if TILE_DIM == 64
#error TILE_DIM 64 is not supported by this kernel
#endif

__global__ void tiled_copy(float* out, const float* in, int width) {
  __shared__ float tile[TILE_DIM][TILE_DIM];
  const int x = blockIdx.x * TILE_DIM + threadIdx.x;
  const int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) out[(y + j) * width + x] = tile[threadIdx.y + j][threadIdx.x];
}
