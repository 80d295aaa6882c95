// Experiment (session 10), after explore_order/rect/pair: a tiled copy whose blocks write their
// tile to the mirrored position (tile (x, y) to (y, x), untransposed: a transpose's write
// addresses without its shared memory) runs slower than the same copy to the same position,
// and the less so the more contiguous bytes a block writes per row. How much, per run length
// (4 x T bytes for T x T f32 tiles) and row pitch (16 and 32 KiB)? Every block moves its tile in
// batches of 4 elements per thread (loads, then stores), so both copies of one T have the same
// store bursts and block counts.
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -o explore_spread benchmarks/h200-explore/explore_spread.cu
//   ./explore_spread
#include "explore_timing.cuh"

constexpr int kSets = 2;

template <int kTile, bool kMirror> __global__ void tile_copy(const float* __restrict__ in, float* __restrict__ out, int n) {
  constexpr int kThreads = kTile * kTile / 4 < 256 ? kTile * kTile / 4 : 256;
  constexpr int kBatches = kTile * kTile / (4 * kThreads);
  const int tx = blockIdx.x, ty = blockIdx.y;
  const int ox = kMirror ? ty : tx, oy = kMirror ? tx : ty;
  for (int batch = 0; batch < kBatches; ++batch) {
    float values[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int element = (batch * 4 + i) * kThreads + threadIdx.x;
      values[i] = in[static_cast<size_t>(ty * kTile + element / kTile) * n + tx * kTile + element % kTile];
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int element = (batch * 4 + i) * kThreads + threadIdx.x;
      out[static_cast<size_t>(oy * kTile + element / kTile) * n + ox * kTile + element % kTile] = values[i];
    }
  }
}

int main() {
  for (const int n : {4096, 8192}) {
    const size_t elements = static_cast<size_t>(n) * n;
    const AlternatingSets sets(elements, kSets);
    const std::vector<float*>&in = sets.in, &out = sets.out;
    const double bytes = 2.0 * elements * sizeof(float);
    const double copy_us = median_launch_us(
        [&](int k) { CK(cudaMemcpyAsync(out[k % kSets], in[k % kSets], elements * sizeof(float), cudaMemcpyDeviceToDevice)); }, 31);
    std::printf("n=%d (row pitch %d KiB): cudaMemcpyAsync %.2f us (%.0f GB/s)\n", n, n * 4 / 1024, copy_us, bytes / copy_us / 1e3);
    std::printf("run_bytes same_us mirrored_us mirrored/same (two rounds each)\n");
    auto measure = [&](auto same, auto mirrored, int tile) {
      constexpr int kRounds = 2;
      const int threads = tile * tile / 4 < 256 ? tile * tile / 4 : 256;
      const dim3 grid(n / tile, n / tile);
      for (int round = 0; round < kRounds; ++round) {
        const double same_us = median_launch_us([&](int k) { same<<<grid, threads>>>(in[k % kSets], out[k % kSets], n); }, 31);
        const double mirrored_us = median_launch_us([&](int k) { mirrored<<<grid, threads>>>(in[k % kSets], out[k % kSets], n); }, 31);
        std::printf("%d %.2f %.2f %.3f\n", tile * 4, same_us, mirrored_us, mirrored_us / same_us);
      }
    };
    measure(tile_copy<16, false>, tile_copy<16, true>, 16);
    measure(tile_copy<32, false>, tile_copy<32, true>, 32);
    measure(tile_copy<64, false>, tile_copy<64, true>, 64);
    measure(tile_copy<128, false>, tile_copy<128, true>, 128);
    measure(tile_copy<256, false>, tile_copy<256, true>, 256);
    std::printf("\n");
  }
  return 0;
}
