// Exploration (session 5): at 256^3 the library's stencil3d with 32-plane chunks (one full wave,
// 1,024 blocks) ran 50.8 us against 41.2 us with 8-plane chunks and 45.1 us with 64-plane chunks
// at half the occupancy (explore_st3c, third run). The blocks of one wave then walk 8 chunks whose
// planes lie 8 MiB apart, a power of two. Is it that alignment? The same kernel (the library's
// vector-2 2.5D walk, batches of 2 planes) over volumes whose plane pitch is n*n + pad floats.
// (It ran with its own copies of st3_walk, fill and copy4 and a 20 x 1 GiB memcpy warm-up; they
// are explore_st3_common.cuh's now, the same code, and warm_clocks() streams the same 20 GB.)
#include <cstring>

#include "explore_st3_common.cuh"

/// Largest |out - 7-point reference| over the interior points the walk stores (x in [2, n-2)).
__global__ void st3_check(const float *in, const float *out, int n, long long plane, unsigned *worst_bits) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
  if (x < 2 || x >= n - 2 || y < 1 || y >= n - 1 || z < 1 || z >= n - 1)
    return;
  const float *p = in + z * plane + static_cast<long long>(y) * n + x;
  const float want = 0.4f * p[0] + 0.1f * (p[-1] + p[1] + p[-n] + p[n] + p[-plane] + p[plane]);
  const float got = out[p - in];
  atomicMax(worst_bits, __float_as_uint(fabsf(got - want)));
}

int main() {
  warm_clocks();
  unsigned *worst;
  CK(cudaMalloc(&worst, sizeof(unsigned)));
  for (int n : {256, 512}) {
    const std::vector<long long> pads =
        n == 256 ? std::vector<long long>{0, 32, 256, 1024} : std::vector<long long>{0, 32, 512};
    const std::vector<int> chunks = n == 256 ? std::vector<int>{8, 16, 32, 64} : std::vector<int>{8, 32, 64};
    for (long long pad : pads) {
      const long long plane = static_cast<long long>(n) * n + pad;
      const size_t count = static_cast<size_t>(n) * plane, bytes = count * 4;
      const int sets = std::max<int>(2, static_cast<int>((3 * (60ull << 20)) / (2 * bytes)) + 1);
      std::vector<float *> in(sets), out(sets);
      for (int s = 0; s < sets; ++s) {
        CK(cudaMalloc(&in[s], bytes));
        CK(cudaMalloc(&out[s], bytes));
        fill<<<1024, 256>>>(in[s], count, s);
        CK(cudaMemset(out[s], 0, bytes));
      }
      const double moved = 2.0 * n * n * n * 4;
      const double copy_us = median_launch_us(
          [&](int k) {
            copy4<<<bytes / 16 / 128, 128>>>((const float4 *)in[k % sets], (float4 *)out[k % sets], bytes / 16);
          },
          20);
      printf("n3=%d pad %4lld floats: copy of the padded volume %.1f us\n", n, pad, copy_us);
      for (int zc : chunks) {
        const dim3 grid(n / 128, n / 4, (n + zc - 1) / zc), block(64, 4);
        auto launch = [&](int k) { st3_walk<0><<<grid, block>>>(in[k % sets], out[k % sets], n, plane, zc); };
        CK(cudaMemset(worst, 0, sizeof(unsigned)));
        launch(0);
        st3_check<<<dim3(n / 128, n, n), 128>>>(in[0], out[0], n, plane, worst);
        unsigned bits = 0;
        CK(cudaMemcpy(&bits, worst, sizeof(unsigned), cudaMemcpyDeviceToHost));
        float err;
        memcpy(&err, &bits, 4);
        const double us = median_launch_us(launch, 20);
        printf("n3=%d pad %4lld floats v2 64x4 z%-3d %7.1f us %6.0f GB/s  max_err %.1e\n", n, pad, zc, us,
               moved / us / 1e3, err);
        fflush(stdout);
      }
      for (int s = 0; s < sets; ++s) {
        cudaFree(in[s]);
        cudaFree(out[s]);
      }
    }
  }
  printf("(clocks never set)\n");
  return 0;
}
