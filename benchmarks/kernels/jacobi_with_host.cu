// One Jacobi sweep of a 5-point stencil over an n x n grid, with the host program around it
// (a file as users keep it: includes, main, allocation, launches): the kernel is the same as
// jacobi_kernel_only.cu's, so ranking both measures what the host code costs the front end.
#include <cstdio>
#include <vector>

#ifndef BLOCK_X
#define BLOCK_X 32
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 8
#endif

__global__ void jacobi_sweep(float* next, const float* current, int n) {
  const int x = blockIdx.x * BLOCK_X + threadIdx.x;
  const int y = blockIdx.y * BLOCK_Y + threadIdx.y;
  if (x >= n || y >= n) return;
  const int at = y * n + x;
  if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
    next[at] = current[at];
    return;
  }
  next[at] = 0.25f * (current[at - 1] + current[at + 1] + current[at - n] + current[at + n]);
}

int main() {
  const int n = 4096, sweeps = 100;
  std::vector<float> grid(static_cast<size_t>(n) * n, 0.0f);
  for (int x = 0; x < n; ++x) grid[x] = 1.0f; // a hot top edge
  float *a = nullptr, *b = nullptr;
  const size_t bytes = grid.size() * sizeof(float);
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  cudaMemcpy(a, grid.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(b, grid.data(), bytes, cudaMemcpyHostToDevice);
  const dim3 block(BLOCK_X, BLOCK_Y), blocks((n + BLOCK_X - 1) / BLOCK_X, (n + BLOCK_Y - 1) / BLOCK_Y);
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    jacobi_sweep<<<blocks, block>>>(b, a, n);
    std::swap(a, b);
  }
  cudaMemcpy(grid.data(), a, bytes, cudaMemcpyDeviceToHost);
  std::printf("centre %f\n", grid[static_cast<size_t>(n / 2) * n + n / 2]);
  cudaFree(a);
  cudaFree(b);
  return 0;
}
