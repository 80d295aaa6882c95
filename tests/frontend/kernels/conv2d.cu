// A 2D convolution (radius R) with a shared halo tile wider than a warp row: (BW + 2R) x (BH + 2R)
// inputs per BW x BH block, loaded with 2D strided loops, zero outside the image.
#define BW 32
#define BH 8
#define R 2
__constant__ float weights[2 * R + 1][2 * R + 1];

__global__ void conv2d(const float* in, float* out, int width, int height) {
  __shared__ float tile[BH + 2 * R][BW + 2 * R];
  for (int i = threadIdx.y; i < BH + 2 * R; i += BH) {
    for (int j = threadIdx.x; j < BW + 2 * R; j += BW) {
      int gx = blockIdx.x * BW + j - R;
      int gy = blockIdx.y * BH + i - R;
      float v = 0.0f;
      if (gx >= 0 && gx < width && gy >= 0 && gy < height) v = in[gy * width + gx];
      tile[i][j] = v;
    }
  }
  __syncthreads();
  int x = blockIdx.x * BW + threadIdx.x;
  int y = blockIdx.y * BH + threadIdx.y;
  if (x >= width || y >= height) return;
  float sum = 0.0f;
  for (int di = 0; di <= 2 * R; ++di)
    for (int dj = 0; dj <= 2 * R; ++dj) sum += weights[di][dj] * tile[threadIdx.y + di][threadIdx.x + dj];
  out[y * width + x] = sum;
}
