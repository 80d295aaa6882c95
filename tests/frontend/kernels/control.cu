// Divergent control flow and local memory: an if / else whose paths touch different arrays, a
// loop whose trip count differs per lane, a local array indexed at run time, a wavefront over a
// shared tile.
__global__ void if_else(const float* in, float* a, float* b, float* c, int n) {
  int t = threadIdx.x;
  if (t < 8) {
    for (int k = 0; k < n; ++k) a[k * 32 + t] = in[t] + k;
  } else {
    b[t] = in[t + 32] * 2.0f;
  }
  c[t] = 1.0f;
}

__global__ void triangle(float* out, int n) {
  int t = threadIdx.x;
  for (int k = 0; k <= t && k < n; ++k) out[k * 32 + t] = 0.0f;
  out[1024 + t] = 1.0f;
}

__global__ void local_array(const int* in, int* out, int k) {
  int buf[16];
  for (int i = 0; i < 16; ++i) buf[i] = in[threadIdx.x * 16 + i];
  out[threadIdx.x] = buf[k & 15];
}

__global__ void break_continue(float* out, int n) {
  int t = threadIdx.x;
  for (int k = 0; k < n; ++k) {
    if (k == t % 8) break;
    if (k % 2 == 1) continue;
    out[k * 32 + t] = 0.0f;
  }
  out[1024 + t] = 1.0f;
}

// An anti-diagonal sweep over a 17 x 17 shared tile (sequence alignment's style): at step m,
// lane t <= m fills cell (m - t + 1, t + 1) from its upper-left, left and upper neighbours. nvcc
// keeps one base register, cell - 64 t, below the tile for t >= 1 and adds the offsets back.
__global__ void wavefront(const int* in, int* out) {
  __shared__ int cell[17][17];
  const int t = threadIdx.x;
  cell[t + 1][0] = in[t];
  cell[0][t + 1] = in[16 + t];
  if (t == 0) cell[0][0] = 0;
  __syncthreads();
  for (int m = 0; m < 16; ++m) {
    if (t <= m) {
      const int x = t + 1, y = m - t + 1;
      cell[y][x] = max(cell[y - 1][x - 1], max(cell[y][x - 1], cell[y - 1][x])) + 1;
    }
    __syncthreads();
  }
  out[t] = cell[16][t + 1];
}
