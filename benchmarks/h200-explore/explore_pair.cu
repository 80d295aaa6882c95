// Experiment (session 10), after explore_rect.cu: the write segment a block makes per row is what
// costs a 32-tile (128 B written per row: 38.6-39.4 us; 256 B: 37.7-37.9 us), yet a tiled copy
// whose consecutive blocks write neighbouring 128 B runs fast, and 2x2 groups (write neighbours
// two blocks apart) do not help. Consecutive blocks start on the two SMs of one TPC
// (explore_sm_map.cu). Suspect: two halves of a 256 B chunk (the L2 slice interleave the probe
// measures) written from one TPC close in time cost like one whole chunk. Test: the same kernels
// with the grid remapped so that blocks 2k and 2k+1 write the two halves, or never do.
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -o explore_pair benchmarks/h200-explore/explore_pair.cu
//   ./explore_pair
#include "explore_timing.cuh"

constexpr int kN = 4096;
constexpr int kSets = 2;
constexpr int kTile = 32, kTiles = kN / kTile;

enum class Order { kColumns, kWritePairs, kSplitPairs };

/// Tile (tx, ty) of block `id`. kColumns: tx = id mod tiles (the usual grid); kWritePairs: blocks
/// 2k, 2k+1 take tiles (tx, 2j), (tx, 2j + 1); kSplitPairs: blocks 2k, 2k+1 take columns half the
/// row apart, so that column neighbours are blocks 2k and 2k+2.
template <Order kOrder> __device__ void tile_of(int id, int& tx, int& ty) {
  if (kOrder == Order::kColumns) {
    tx = id % kTiles;
    ty = id / kTiles;
  } else if (kOrder == Order::kWritePairs) {
    const int pair = id / 2;
    tx = pair % kTiles;
    ty = (pair / kTiles) * 2 + id % 2;
  } else {
    const int column = id % kTiles;
    tx = (column % 2) * (kTiles / 2) + column / 2;
    ty = id / kTiles;
  }
}

/// Tile copied untransposed to (tx, ty) when !kMirror, to (ty, tx) when kMirror; 256 threads.
template <bool kMirror, Order kOrder> __global__ void tile_copy(const float* __restrict__ in, float* __restrict__ out) {
  int tx, ty;
  tile_of<kOrder>(blockIdx.x, tx, ty);
  copy_tile<kN, kTile, 256>(in, out, tx, ty, kMirror ? ty : tx, kMirror ? tx : ty);
}

template <int kBlockY, Order kOrder> __global__ void transpose(const float* __restrict__ in, float* __restrict__ out) {
  constexpr int kStride = kTile + 1;
  __shared__ float buffer[kTile * kStride];
  int tx, ty;
  tile_of<kOrder>(blockIdx.x, tx, ty);
  const int x0 = tx * kTile, y0 = ty * kTile;
#pragma unroll
  for (int r = 0; r < kTile; r += kBlockY)
    buffer[(r + threadIdx.y) * kStride + threadIdx.x] = in[(y0 + r + threadIdx.y) * kN + x0 + threadIdx.x];
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kTile; r += kBlockY)
    out[(x0 + r + threadIdx.y) * kN + y0 + threadIdx.x] = buffer[threadIdx.x * kStride + r + threadIdx.y];
}

int main() {
  const size_t elements = static_cast<size_t>(kN) * kN;
  const AlternatingSets sets(elements, kSets);
  const std::vector<float*>&in = sets.in, &out = sets.out;
  const double bytes = 2.0 * elements * sizeof(float);
  const int blocks = kTiles * kTiles;
  auto report = [&](const char* name, const std::function<void(int)>& launch) { report_two_rounds(name, bytes, launch); };
  report("cudaMemcpyAsync 64 MiB", [&](int k) {
    CK(cudaMemcpyAsync(out[k % kSets], in[k % kSets], elements * sizeof(float), cudaMemcpyDeviceToDevice));
  });
  std::printf("\ntiled copies of 32-tiles, 256 threads (write neighbours: blocks apart)\n");
  report("same tile, columns order (1)", [&](int k) { tile_copy<false, Order::kColumns><<<blocks, 256>>>(in[k % kSets], out[k % kSets]); });
  report("same tile, split pairs (2)", [&](int k) { tile_copy<false, Order::kSplitPairs><<<blocks, 256>>>(in[k % kSets], out[k % kSets]); });
  report("mirrored tile, columns order (128)", [&](int k) { tile_copy<true, Order::kColumns><<<blocks, 256>>>(in[k % kSets], out[k % kSets]); });
  report("mirrored tile, write pairs (1)", [&](int k) { tile_copy<true, Order::kWritePairs><<<blocks, 256>>>(in[k % kSets], out[k % kSets]); });
  std::printf("\nstaged 32-tile transposes\n");
  report("32x8, columns order", [&](int k) { transpose<8, Order::kColumns><<<blocks, dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("32x8, write pairs", [&](int k) { transpose<8, Order::kWritePairs><<<blocks, dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("32x8, split pairs", [&](int k) { transpose<8, Order::kSplitPairs><<<blocks, dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("32x2, columns order", [&](int k) { transpose<2, Order::kColumns><<<blocks, dim3(32, 2)>>>(in[k % kSets], out[k % kSets]); });
  report("32x2, write pairs", [&](int k) { transpose<2, Order::kWritePairs><<<blocks, dim3(32, 2)>>>(in[k % kSets], out[k % kSets]); });
  return 0;
}
