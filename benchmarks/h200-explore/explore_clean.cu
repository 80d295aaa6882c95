// Exploration (session 5): under ncu (one launch, caches flushed before it) stencil3d at 256^3
// runs 39.1 us with 8-plane chunks and 39.8 us with 32-plane ones; timed back to back, as
// `advisor validate` times it, 43.2 and 48.4 us. A launch after another starts with the last
// one's output dirty in L2. Is that write-back what long chunks pay for? The vector-2 walk
// (explore_st3_common.cuh) timed back to back on rotated inputs, and timed alone after a read of
// a 256 MiB buffer that leaves L2 holding only clean lines.
#include "explore_st3_common.cuh"

__global__ void read_through(const float4 *__restrict__ data, size_t count, float *sink) {
  float acc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    acc += data[i].x;
  }
  if (acc == 1234.5f)
    *sink = acc;
}

int main() {
  warm_clocks();
  float4 *clean;
  float *sink;
  const size_t clean_bytes = 256ull << 20;
  CK(cudaMalloc(&clean, clean_bytes));
  CK(cudaMemset(clean, 0, clean_bytes));
  CK(cudaMalloc(&sink, sizeof(float)));
  for (int n : {256, 512}) {
    const size_t bytes = static_cast<size_t>(n) * n * n * 4;
    Buffers b = make(bytes);
    const long long plane = static_cast<long long>(n) * n;
    for (int round = 0; round < 2; ++round) {
      for (int zc : {8, 16, 32, 64}) {
        const dim3 grid(n / 128, n / 4, (n + zc - 1) / zc), block(64, 4);
        auto launch = [&](int k) {
          st3_walk<0><<<grid, block>>>(b.in[k % b.in.size()], b.out[k % b.in.size()], n, plane, zc);
        };
        const double back_to_back = median_launch_us(launch, 20);
        // Alone after a clean L2: events around the stencil only.
        std::vector<float> alone;
        cudaEvent_t start, stop;
        cudaEventCreate(&start);
        cudaEventCreate(&stop);
        for (int k = 0; k < 15; ++k) {
          read_through<<<1056, 256>>>(clean, clean_bytes / 16, sink);
          cudaEventRecord(start);
          launch(k);
          cudaEventRecord(stop);
          CK(cudaEventSynchronize(stop));
          float ms;
          cudaEventElapsedTime(&ms, start, stop);
          if (k >= 3)
            alone.push_back(ms * 1000);
        }
        std::sort(alone.begin(), alone.end());
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        printf("n3=%d round %d v2 64x4 z%-3d back to back %6.1f us, alone after a clean L2 %6.1f us\n", n, round, zc,
               back_to_back, alone[alone.size() / 2]);
        fflush(stdout);
      }
      const double copy_b2b = median_launch_us(
          [&](int k) {
            copy4<<<bytes / 16 / 128, 128>>>((const float4 *)b.in[k % b.in.size()], (float4 *)b.out[k % b.in.size()],
                                             bytes / 16);
          },
          20);
      printf("n3=%d round %d copy4x128 back to back %6.1f us\n", n, round, copy_b2b);
    }
    for (auto p : b.in)
      cudaFree(p);
    for (auto p : b.out)
      cudaFree(p);
  }
  printf("(clocks never set)\n");
  return 0;
}
