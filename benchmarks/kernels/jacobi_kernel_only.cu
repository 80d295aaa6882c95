// One Jacobi sweep of a 5-point stencil over an n x n grid (borders copied), one output
// per thread in BLOCK_X x BLOCK_Y blocks: the kernel-only twin of jacobi_with_host.cu.
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
