// Experiment (session 9): two suspects for why transposes of equal traffic differ by up to 7%
// on the H200 (docs/model.md, "Session 9"), each isolated from the other:
//  1. footprint: a 64x64 f32 tile staged through shared memory (pad 1), 512-thread blocks (so 4
//     per SM whatever the shared memory), with extra dynamic shared memory per block that no
//     thread touches: only the shared footprint per SM (and the L1 left beside it) changes.
//     In ncu the transposes with 10-13 blocks of 17 KB per SM counted 8-18% extra shared
//     wavefronts (L1 data-bank arbitration), those with 5-6 under 2%.
//  2. segment: a tiled copy (no shared memory) whose blocks move S contiguous bytes of each of
//     64 rows 16 KiB apart (S = 128..1024), blockIdx.x over the column tiles as in a transpose:
//     is a 128 B segment per row (32-tiles) slower at DRAM than 256 B (64-tiles)?
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -o explore_staged benchmarks/h200-explore/explore_staged.cu
//   ./explore_staged
#include "explore_timing.cuh"

constexpr int kN = 4096; // floats per row: rows are 16 KiB apart
constexpr int kSets = 2; // input/output pairs of 64 MiB each, alternated (each > L2)

template <int kTile, int kBlockX, int kBlockY> __global__ void staged_transpose(const float* in, float* out) {
  extern __shared__ float buffer[];
  const int x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile;
  constexpr int kStride = kTile + 1;
#pragma unroll
  for (int r = 0; r < kTile; r += kBlockY) {
#pragma unroll
    for (int c = 0; c < kTile; c += kBlockX) {
      buffer[(r + threadIdx.y) * kStride + c + threadIdx.x] = in[(y0 + r + threadIdx.y) * kN + x0 + c + threadIdx.x];
    }
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kTile; r += kBlockY) {
#pragma unroll
    for (int c = 0; c < kTile; c += kBlockX) {
      out[(x0 + r + threadIdx.y) * kN + y0 + c + threadIdx.x] = buffer[(c + threadIdx.x) * kStride + r + threadIdx.y];
    }
  }
}

/// Block (x, y) copies columns [x * kSegment, (x + 1) * kSegment) floats of rows [y * 64, y * 64 + 64).
template <int kSegment> __global__ void segment_copy(const float* in, float* out) {
  constexpr int kRows = 64;
  constexpr int kThreads = 256;
  constexpr int kPerThread = kSegment * kRows / kThreads;
  float values[kPerThread];
  const int x0 = blockIdx.x * kSegment, y0 = blockIdx.y * kRows;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int element = i * kThreads + threadIdx.x;
    values[i] = in[(y0 + element / kSegment) * kN + x0 + element % kSegment];
  }
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int element = i * kThreads + threadIdx.x;
    out[(y0 + element / kSegment) * kN + x0 + element % kSegment] = values[i];
  }
}

int main() {
  const size_t elements = static_cast<size_t>(kN) * kN;
  std::vector<float*> in(kSets), out(kSets);
  for (int s = 0; s < kSets; ++s) {
    CK(cudaMalloc(&in[s], elements * sizeof(float)));
    CK(cudaMalloc(&out[s], elements * sizeof(float)));
    CK(cudaMemset(in[s], 1, elements * sizeof(float)));
  }
  const double bytes = 2.0 * elements * sizeof(float);
  const double copy_us = median_launch_us(
      [&](int k) { CK(cudaMemcpyAsync(out[k % kSets], in[k % kSets], elements * sizeof(float), cudaMemcpyDeviceToDevice)); }, 31);
  std::printf("cudaMemcpyAsync 64 MiB: %.2f us (%.0f GB/s)\n", copy_us, bytes / copy_us / 1e3);

  std::printf("\n1. footprint: 64-tile staged transpose, 32x16 threads (4 blocks per SM)\n");
  std::printf("extra_kib_per_block shared_kib_per_sm blocks_per_sm us GB/s vs_first\n");
  auto kernel = staged_transpose<64, 32, 16>;
  const int tile_bytes = 64 * 65 * 4;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 56 * 1024));
  double first = 0;
  for (int extra_kib : {0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 39}) {
    const int shared = tile_bytes + extra_kib * 1024;
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 512, shared));
    const double us = median_launch_us(
        [&](int k) { kernel<<<dim3(kN / 64, kN / 64), dim3(32, 16), shared>>>(in[k % kSets], out[k % kSets]); }, 31);
    if (first == 0) first = us;
    std::printf("%d %.1f %d %.2f %.0f %.3f\n", extra_kib, per_sm * (shared + 1024) / 1024.0, per_sm, us, bytes / us / 1e3, us / first);
  }

  std::printf("\n2. segment: tiled copy, 64 rows x S bytes per block, 256 threads\n");
  std::printf("segment_bytes us GB/s vs_256\n");
  std::vector<std::pair<int, double>> results;
  auto run_segment = [&](auto instance, int segment_floats) {
    const double us = median_launch_us(
        [&](int k) { instance<<<dim3(kN / segment_floats, kN / 64), 256>>>(in[k % kSets], out[k % kSets]); }, 31);
    results.push_back({segment_floats * 4, us});
  };
  run_segment(segment_copy<32>, 32);
  run_segment(segment_copy<64>, 64);
  run_segment(segment_copy<128>, 128);
  run_segment(segment_copy<256>, 256);
  for (const auto& [segment, us] : results) std::printf("%d %.2f %.0f %.3f\n", segment, us, bytes / us / 1e3, us / results[1].second);

  std::printf("\n3. the same transposes as the library's best and its pick, here (pad 1)\n");
  auto time_transpose = [&](auto instance, int tile, dim3 block, const char* name) {
    const int shared = tile * (tile + 1) * 4;
    CK(cudaFuncSetAttribute(instance, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, instance, block.x * block.y, shared));
    const double us = median_launch_us(
        [&](int k) { instance<<<dim3(kN / tile, kN / tile), block, shared>>>(in[k % kSets], out[k % kSets]); }, 31);
    std::printf("%s: %d blocks/SM, %.2f us (%.0f GB/s)\n", name, per_sm, us, bytes / us / 1e3);
  };
  time_transpose(staged_transpose<64, 32, 8>, 64, dim3(32, 8), "tile 64, 32x8");
  time_transpose(staged_transpose<64, 64, 2>, 64, dim3(64, 2), "tile 64, 64x2");
  time_transpose(staged_transpose<64, 64, 4>, 64, dim3(64, 4), "tile 64, 64x4");
  time_transpose(staged_transpose<32, 32, 2>, 32, dim3(32, 2), "tile 32, 32x2");
  time_transpose(staged_transpose<32, 32, 8>, 32, dim3(32, 8), "tile 32, 32x8");
  return 0;
}
