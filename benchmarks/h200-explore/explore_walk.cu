// Exploration (session 4): stencil3d's 32-64-plane chunks take ~20% longer than 8-plane chunks
// on the H200 with the same traffic (docs/validation-h200.md). Hypothesis: a block's walk
// keeps only its own row segments contiguous; short blocks launched in order run beside their
// x neighbours, so together they cover whole DRAM rows, while long walks drift apart and each
// segment opens its rows alone. A copy of an n^3 volume shaped like the stencil: each block
// copies a W-byte wide, 4-row tile of P planes, 2 planes per batch (loads, then stores, as the
// library's vector stencil3d), for W = 256 B..2 KB and P = 2, 8, 64. Timing as explore_st3.
#include <cstring>

#include "explore_st3_common.cuh"

/// Block (bx, by, bz): columns [bx * W, (bx + 1) * W) bytes of rows [4 by, 4 by + 4) of planes
/// [bz * P, (bz + 1) * P); blockDim = (W / 16, 4), one float4 per thread per plane.
__global__ void walk_copy(const float4* __restrict__ in, float4* __restrict__ out, int n, int planes_per_block) {
  const long long row_vectors = n / 4;
  const long long plane_vectors = row_vectors * n;
  const long long x = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long y = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  long long i = static_cast<long long>(blockIdx.z) * planes_per_block * plane_vectors + y * row_vectors + x;
  for (int p = 0; p < planes_per_block; p += 2, i += 2 * plane_vectors) {
    const float4 a = in[i];
    const float4 b = in[i + plane_vectors];
    out[i] = a;
    out[i + plane_vectors] = b;
  }
}

int main() {
  warm_clocks();
  for (int n : {256, 512}) {
    const size_t bytes = static_cast<size_t>(n) * n * n * 4;
    Buffers b = make(bytes);
    const double moved = 2.0 * bytes;
    const double memcpy_before =
        time_us(b, [&](const float* i, float* o) { cudaMemcpyAsync(o, i, bytes, cudaMemcpyDeviceToDevice); });
    printf("n3=%d cudaMemcpy %.1f us (%.0f GB/s)\n", n, memcpy_before, moved / memcpy_before / 1e3);
    for (int width_bytes : {256, 512, 1024, 2048}) {
      if (width_bytes > n * 4) continue; // wider than a row
      for (int planes : {2, 8, 64}) {
        const dim3 block(width_bytes / 16, 4);
        const dim3 grid(n * 4 / width_bytes, n / 4, n / planes);
        const double t = time_us(b, [&](const float* i, float* o) {
          walk_copy<<<grid, block>>>(reinterpret_cast<const float4*>(i), reinterpret_cast<float4*>(o), n, planes);
        });
        printf("n3=%d W=%4d B P=%2d: %7.1f us %6.0f GB/s %5.1f%% of cudaMemcpy\n", n, width_bytes, planes, t,
               moved / t / 1e3, 100 * memcpy_before / t);
        fflush(stdout);
      }
    }
    const double memcpy_after =
        time_us(b, [&](const float* i, float* o) { cudaMemcpyAsync(o, i, bytes, cudaMemcpyDeviceToDevice); });
    printf("n3=%d cudaMemcpy after %.1f us\n", n, memcpy_after);
    for (auto p : b.in) cudaFree(p);
    for (auto p : b.out) cudaFree(p);
  }
  return 0;
}
