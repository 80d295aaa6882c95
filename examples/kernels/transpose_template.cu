// The tiled transpose with its tile shape as template arguments, and host code around it: an
// ordinary .cu file. `advisor suggest --entry "transpose_tiled<TILE_DIM, BLOCK_ROWS, PAD>"`
// instantiates the template per candidate (main below instantiates only one), and compiles
// the file with nvcc because NVRTC cannot open the host headers (transpose_template.json).
#include <cstdio>
#include <vector>

template <int TILE_DIM, int BLOCK_ROWS, int PAD>
__global__ void transpose_tiled(float* odata, const float* idata, int width, int height) {
  __shared__ float tile[TILE_DIM][TILE_DIM + PAD];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  const int n = 1024;
  std::vector<float> host(static_cast<std::size_t>(n) * n, 1.0f);
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, host.size() * sizeof(float));
  cudaMalloc(&out, host.size() * sizeof(float));
  cudaMemcpy(in, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice);
  transpose_tiled<32, 8, 1><<<dim3(n / 32, n / 32), dim3(32, 8)>>>(out, in, n, n);
  cudaMemcpy(host.data(), out, host.size() * sizeof(float), cudaMemcpyDeviceToHost);
  std::printf("%f\n", host[1]);
  cudaFree(in);
  cudaFree(out);
}
