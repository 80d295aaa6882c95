// Experiment (session 10): staged 32-tile transposes run about 4% slower than 64-tiles on the
// H200 whatever their block shape and occupancy (explore_staged.cu). Three suspects, each
// isolated, at n = 4096 f32 (rows 16 KiB apart):
//  1. placement: the same 32-tile blocks dispatched so that each four consecutive blocks cover
//     a 2x2 group of tiles (the rows and columns a 64-tile covers). If the DRAM sees a 64-tile's
//     locality then, it is the addresses in flight together, not the block.
//  2. blocks: one block walks the 2x2 group's four 32-tiles (double-buffered, one barrier per
//     tile): a quarter of the blocks, the same barriers per byte. If that runs like a 64-tile,
//     it is a cost per block (launch, retire, first load), not per barrier.
//  3. write placement without shared memory: a tiled copy whose block (x, y) reads the tile
//     (x, y) row by row and writes it, untransposed, to tile (y, x): the DRAM sees a transpose's
//     write addresses with the copy's segment of T floats per row, T = 32, 64.
//  4. dispatch alone: empty blocks (a store no thread makes) at the transposes' grid sizes.
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -o explore_order benchmarks/h200-explore/explore_order.cu
//   ./explore_order
#include "explore_timing.cuh"

constexpr int kN = 4096;
constexpr int kSets = 2; // input/output pairs of 64 MiB each, alternated (each > L2)
constexpr int kPad = 1;

/// Tile (tx, ty) of kTile: loaded into `buffer`, then stored transposed.
template <int kTile, int kBlockX, int kBlockY>
__device__ void load_tile(const float* __restrict__ in, float* buffer, int tx, int ty) {
  constexpr int kStride = kTile + kPad;
  const int x0 = tx * kTile, y0 = ty * kTile;
#pragma unroll
  for (int r = 0; r < kTile; r += kBlockY)
#pragma unroll
    for (int c = 0; c < kTile; c += kBlockX)
      buffer[(r + threadIdx.y) * kStride + c + threadIdx.x] = in[(y0 + r + threadIdx.y) * kN + x0 + c + threadIdx.x];
}

template <int kTile, int kBlockX, int kBlockY>
__device__ void store_tile(float* __restrict__ out, const float* buffer, int tx, int ty) {
  constexpr int kStride = kTile + kPad;
  const int x0 = tx * kTile, y0 = ty * kTile;
#pragma unroll
  for (int r = 0; r < kTile; r += kBlockY)
#pragma unroll
    for (int c = 0; c < kTile; c += kBlockX)
      out[(x0 + r + threadIdx.y) * kN + y0 + c + threadIdx.x] = buffer[(c + threadIdx.x) * kStride + r + threadIdx.y];
}

/// Row-major dispatch: blockIdx.x over column tiles, as the library's transposes.
template <int kTile, int kBlockX, int kBlockY> __global__ void transpose_rows(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float buffer[kTile * (kTile + kPad)];
  load_tile<kTile, kBlockX, kBlockY>(in, buffer, blockIdx.x, blockIdx.y);
  __syncthreads();
  store_tile<kTile, kBlockX, kBlockY>(out, buffer, blockIdx.x, blockIdx.y);
}

/// Each four consecutive blocks take one 2x2 group of tiles.
template <int kTile, int kBlockX, int kBlockY> __global__ void transpose_grouped(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float buffer[kTile * (kTile + kPad)];
  constexpr int kGroupsPerRow = kN / (2 * kTile);
  const int group = blockIdx.x / 4, quarter = blockIdx.x % 4;
  const int tx = (group % kGroupsPerRow) * 2 + (quarter & 1), ty = (group / kGroupsPerRow) * 2 + (quarter >> 1);
  load_tile<kTile, kBlockX, kBlockY>(in, buffer, tx, ty);
  __syncthreads();
  store_tile<kTile, kBlockX, kBlockY>(out, buffer, tx, ty);
}

/// One block walks a 2x2 group's four tiles, two buffers so that one barrier per tile suffices.
template <int kTile, int kBlockX, int kBlockY> __global__ void transpose_four_tiles(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float buffers[2][kTile * (kTile + kPad)];
  constexpr int kGroupsPerRow = kN / (2 * kTile);
  const int gx = blockIdx.x % kGroupsPerRow, gy = blockIdx.x / kGroupsPerRow;
#pragma unroll
  for (int quarter = 0; quarter < 4; ++quarter) {
    const int tx = gx * 2 + (quarter & 1), ty = gy * 2 + (quarter >> 1);
    load_tile<kTile, kBlockX, kBlockY>(in, buffers[quarter & 1], tx, ty);
    __syncthreads();
    store_tile<kTile, kBlockX, kBlockY>(out, buffers[quarter & 1], tx, ty);
  }
}

/// Block (x, y) reads tile (x, y) row by row and writes it untransposed to tile (y, x) when
/// kMirror (a transpose's write addresses), to tile (x, y) otherwise (the straight reference);
/// 256 threads.
template <int kTile, bool kMirror> __global__ void tile_copy(const float* __restrict__ in, float* __restrict__ out) {
  const int tx = blockIdx.x, ty = blockIdx.y;
  copy_tile<kN, kTile, 256>(in, out, tx, ty, kMirror ? ty : tx, kMirror ? tx : ty);
}

__global__ void empty_block(float* out, int never) {
  if (static_cast<int>(threadIdx.x) == never) out[blockIdx.x] = 0;
}

int main() {
  const size_t elements = static_cast<size_t>(kN) * kN;
  const AlternatingSets sets(elements, kSets);
  const std::vector<float*>&in = sets.in, &out = sets.out;
  int clock_khz = 0, memory_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  CK(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, 0));
  std::printf("attribute clocks: SM %d MHz, memory %d MHz (not set by us)\n", clock_khz / 1000, memory_khz / 1000);
  const double bytes = 2.0 * elements * sizeof(float);
  auto report = [&](const char* name, const std::function<void(int)>& launch) { report_two_rounds(name, bytes, launch); };
  report("cudaMemcpyAsync 64 MiB", [&](int k) {
    CK(cudaMemcpyAsync(out[k % kSets], in[k % kSets], elements * sizeof(float), cudaMemcpyDeviceToDevice));
  });

  std::printf("\n1-2. staged transposes: placement and blocks (name, round 1, round 2)\n");
  report("tile 64, 32x8, rows", [&](int k) { transpose_rows<64, 32, 8><<<dim3(kN / 64, kN / 64), dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("tile 32, 32x8, rows", [&](int k) { transpose_rows<32, 32, 8><<<dim3(kN / 32, kN / 32), dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("tile 32, 32x8, 2x2 groups of blocks", [&](int k) { transpose_grouped<32, 32, 8><<<(kN / 32) * (kN / 32), dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("tile 32, 32x8, four tiles per block", [&](int k) { transpose_four_tiles<32, 32, 8><<<(kN / 64) * (kN / 64), dim3(32, 8)>>>(in[k % kSets], out[k % kSets]); });
  report("tile 32, 32x2, rows", [&](int k) { transpose_rows<32, 32, 2><<<dim3(kN / 32, kN / 32), dim3(32, 2)>>>(in[k % kSets], out[k % kSets]); });
  report("tile 32, 32x2, 2x2 groups of blocks", [&](int k) { transpose_grouped<32, 32, 2><<<(kN / 32) * (kN / 32), dim3(32, 2)>>>(in[k % kSets], out[k % kSets]); });
  report("tile 32, 32x2, four tiles per block", [&](int k) { transpose_four_tiles<32, 32, 2><<<(kN / 64) * (kN / 64), dim3(32, 2)>>>(in[k % kSets], out[k % kSets]); });
  report("tile 64, 64x2, rows", [&](int k) { transpose_rows<64, 64, 2><<<dim3(kN / 64, kN / 64), dim3(64, 2)>>>(in[k % kSets], out[k % kSets]); });

  std::printf("\n3. tiled copies, no shared memory, 256 threads\n");
  report("tile 32 to the same tile", [&](int k) { tile_copy<32, false><<<dim3(kN / 32, kN / 32), 256>>>(in[k % kSets], out[k % kSets]); });
  report("tile 32 to the mirrored tile", [&](int k) { tile_copy<32, true><<<dim3(kN / 32, kN / 32), 256>>>(in[k % kSets], out[k % kSets]); });
  report("tile 64 to the same tile", [&](int k) { tile_copy<64, false><<<dim3(kN / 64, kN / 64), 256>>>(in[k % kSets], out[k % kSets]); });
  report("tile 64 to the mirrored tile", [&](int k) { tile_copy<64, true><<<dim3(kN / 64, kN / 64), 256>>>(in[k % kSets], out[k % kSets]); });

  std::printf("\n4. empty blocks\n");
  for (const auto& [blocks, threads] : std::vector<std::pair<int, int>>{{4096, 256}, {16384, 64}, {16384, 256}, {65536, 64}}) {
    char name[64];
    std::snprintf(name, sizeof name, "%d blocks x %d threads", blocks, threads);
    report(name, [&, blocks = blocks, threads = threads](int k) { empty_block<<<blocks, threads>>>(out[k % kSets], -1); });
  }
  return 0;
}
