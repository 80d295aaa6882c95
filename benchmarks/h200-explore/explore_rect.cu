// Experiment (session 10), after explore_order.cu: a 32-tile's penalty is not its dispatch order
// and only partly its block count. Is it the read or the write segment? Staged transposes of
// rectangular tiles, 32x8 threads, n = 4096 f32: a block reads kRows rows of kCols floats
// (segments of 4 x kCols bytes) and writes kCols rows of kRows floats (4 x kRows bytes).
// 32x64 and 64x32 move 8 KiB per block each, so they differ only in which side is short.
// Then the mirrored tiled copy of explore_order.cu dispatched in 2x2 groups: does putting the
// blocks that write neighbouring segments next to each other in the grid help there?
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -o explore_rect benchmarks/h200-explore/explore_rect.cu
//   ./explore_rect
#include "explore_timing.cuh"

constexpr int kN = 4096;
constexpr int kSets = 2;

template <int kRows, int kCols> __global__ void transpose_rect(const float* __restrict__ in, float* __restrict__ out) {
  constexpr int kBlockX = 32, kBlockY = 8, kStride = kCols + 1;
  __shared__ float buffer[kRows * kStride];
  const int x0 = blockIdx.x * kCols, y0 = blockIdx.y * kRows;
#pragma unroll
  for (int r = 0; r < kRows; r += kBlockY)
#pragma unroll
    for (int c = 0; c < kCols; c += kBlockX)
      buffer[(r + threadIdx.y) * kStride + c + threadIdx.x] = in[(y0 + r + threadIdx.y) * kN + x0 + c + threadIdx.x];
  __syncthreads();
  // Output row x0 + j holds input column x0 + j: kRows floats from column y0.
#pragma unroll
  for (int j = 0; j < kCols; j += kBlockY)
#pragma unroll
    for (int i = 0; i < kRows; i += kBlockX)
      out[(x0 + j + threadIdx.y) * kN + y0 + i + threadIdx.x] = buffer[(i + threadIdx.x) * kStride + j + threadIdx.y];
}

/// Tile (tx, ty) of 32 x 32 floats copied untransposed to tile (ty, tx), 256 threads; four
/// consecutive blocks take a 2x2 group when `grouped`, else blockIdx.x runs over columns.
template <bool kGrouped> __global__ void copy_to_mirrored_tile(const float* __restrict__ in, float* __restrict__ out) {
  constexpr int kTile = 32, kThreads = 256, kTilesPerRow = kN / kTile;
  int tx = blockIdx.x % kTilesPerRow, ty = blockIdx.x / kTilesPerRow;
  if (kGrouped) {
    const int group = blockIdx.x / 4, quarter = blockIdx.x % 4;
    tx = (group % (kTilesPerRow / 2)) * 2 + (quarter & 1);
    ty = (group / (kTilesPerRow / 2)) * 2 + (quarter >> 1);
  }
  copy_tile<kN, kTile, kThreads>(in, out, tx, ty, ty, tx);
}

int main() {
  const size_t elements = static_cast<size_t>(kN) * kN;
  const AlternatingSets sets(elements, kSets);
  const std::vector<float*>&in = sets.in, &out = sets.out;
  const double bytes = 2.0 * elements * sizeof(float);
  auto report = [&](const char* name, const std::function<void(int)>& launch) { report_two_rounds(name, bytes, launch); };
  report("cudaMemcpyAsync 64 MiB", [&](int k) {
    CK(cudaMemcpyAsync(out[k % kSets], in[k % kSets], elements * sizeof(float), cudaMemcpyDeviceToDevice));
  });
  std::printf("\nstaged transposes, 32x8 threads: rows x cols read (read segment, write segment)\n");
  report("32 x 32 (128 B, 128 B)", [&](int k) { transpose_rect<32, 32><<<dim3(kN / 32, kN / 32), dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("32 x 64 (256 B, 128 B)", [&](int k) { transpose_rect<32, 64><<<dim3(kN / 64, kN / 32), dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("64 x 32 (128 B, 256 B)", [&](int k) { transpose_rect<64, 32><<<dim3(kN / 32, kN / 64), dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("64 x 64 (256 B, 256 B)", [&](int k) { transpose_rect<64, 64><<<dim3(kN / 64, kN / 64), dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("32 x 128 (512 B, 128 B)", [&](int k) { transpose_rect<32, 128><<<dim3(kN / 128, kN / 32), dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("128 x 32 (128 B, 512 B)", [&](int k) { transpose_rect<128, 32><<<dim3(kN / 32, kN / 128), dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  std::printf("\nmirrored tiled copy of 32-tiles, 256 threads\n");
  report("columns order", [&](int k) { copy_to_mirrored_tile<false><<<(kN / 32) * (kN / 32), 256>>>(in[k % kSets], out[k % kSets]); });
  report("2x2 groups", [&](int k) { copy_to_mirrored_tile<true><<<(kN / 32) * (kN / 32), 256>>>(in[k % kSets], out[k % kSets]); });
  return 0;
}
