// Exploration (session 3): does the H200's DRAM bandwidth depend on how far apart the
// addresses that are read at the same time lie? Long stencil3d chunks measured 71-76% of DRAM
// peak against 78-79% for short ones with the same bytes, registers and occupancy
// (docs/h200-runs/README.md). Here every variant reads the same 1 GiB once, 16 B per lane:
//  - window: grid-stride, all warps read neighbouring 512 B pieces at any moment;
//  - block regions: block b reads its own contiguous 1 GiB / blocks, 4 KB per step;
//  - warp regions: every warp reads its own contiguous 1 GiB / warps, 512 B per step;
//  - tiles by plane: blocks walk 2 KB rows one plane apart (a stencil3d column tile walking
//    its chunk), short walks over many tiles to long walks over few.
// Times: CUDA events, median of 15 back-to-back launches after 5 warm-ups; clocks never set.
#include "explore_timing.cuh"

constexpr int kThreads = 256;

__device__ __forceinline__ void fold(unsigned& acc, const uint4& v) { acc ^= v.x ^ v.y ^ v.z ^ v.w; }

__global__ void read_window(const uint4* __restrict__ in, size_t words, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    fold(acc, in[i]);
  }
  if (acc == 0x12345678u) *sink = acc;
}

__global__ void read_block_regions(const uint4* __restrict__ in, size_t words, unsigned* sink) {
  const size_t per_block = words / gridDim.x;
  const uint4* region = in + blockIdx.x * per_block;
  unsigned acc = 0;
  for (size_t i = threadIdx.x; i < per_block; i += blockDim.x) fold(acc, region[i]);
  if (acc == 0x12345678u) *sink = acc;
}

__global__ void read_warp_regions(const uint4* __restrict__ in, size_t words, unsigned* sink) {
  const size_t warps = static_cast<size_t>(gridDim.x) * (blockDim.x / 32);
  const size_t warp = blockIdx.x * static_cast<size_t>(blockDim.x / 32) + threadIdx.x / 32;
  const size_t per_warp = words / warps;
  const uint4* region = in + warp * per_warp;
  unsigned acc = 0;
  for (size_t i = threadIdx.x % 32; i < per_warp; i += 32) fold(acc, region[i]);
  if (acc == 0x12345678u) *sink = acc;
}

/// The buffer is `planes` planes of `tiles` rows of 2 KB (row t of plane p at (p * tiles + t) *
/// 2 KB). Block b walks tiles b, b + gridDim.x, ..., each through all `planes` planes in turn,
/// as a stencil3d column tile walks its chunk: the walk is `planes` rows long.
__global__ void read_tiles_by_plane(const uint4* __restrict__ in, size_t tiles, size_t planes, unsigned* sink) {
  constexpr size_t kRowWords = 2048 / sizeof(uint4); // 128: half a block's threads per row
  unsigned acc = 0;
  for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    for (size_t p = 0; p < planes; ++p) {
      const uint4* row = in + (p * tiles + tile) * kRowWords;
      for (size_t i = threadIdx.x; i < kRowWords; i += blockDim.x) fold(acc, row[i]);
    }
  }
  if (acc == 0x12345678u) *sink = acc;
}

double time_us(const std::function<void()>& launch) {
  return median_launch_us([&](int) { launch(); }, 15);
}

int main() {
  const size_t bytes = 1ull << 30;
  const size_t words = bytes / sizeof(uint4);
  uint4* in;
  unsigned* sink;
  CK(cudaMalloc(&in, bytes));
  CK(cudaMalloc(&sink, sizeof(unsigned)));
  CK(cudaMemset(in, 1, bytes));
  int sms = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_block_regions, kThreads, 0));
  const int resident = sms * per_sm;
  // Warm the clocks with a few hundred milliseconds of streaming.
  for (int i = 0; i < 200; ++i) read_window<<<resident, kThreads>>>(in, words, sink);
  CK(cudaDeviceSynchronize());
  auto report = [&](const char* name, const std::function<void()>& launch) {
    const double t = time_us(launch);
    printf("%-44s %8.1f us %7.0f GB/s\n", name, t, bytes / t / 1e3);
    fflush(stdout);
  };
  printf("%d SMs x %d resident blocks of %d threads; 1 GiB read once per launch\n", sms, per_sm, kThreads);
  for (int grid : {resident, 4 * resident, 16 * resident}) {
    char name[96];
    snprintf(name, sizeof name, "window, grid %d", grid);
    report(name, [&] { read_window<<<grid, kThreads>>>(in, words, sink); });
  }
  for (int grid : {resident, 4 * resident, 16 * resident}) {
    char name[96];
    snprintf(name, sizeof name, "block regions (%zu KiB each), grid %d", bytes / grid / 1024, grid);
    report(name, [&] { read_block_regions<<<grid, kThreads>>>(in, words, sink); });
    snprintf(name, sizeof name, "warp regions (%zu KiB each), grid %d", bytes / grid / 8 / 1024, grid);
    report(name, [&] { read_warp_regions<<<grid, kThreads>>>(in, words, sink); });
  }
  // 2 KB rows, tiles x planes = 524288 rows: many tiles (rows of one plane read together) to few.
  for (size_t tiles : {size_t{65536}, size_t{8192}, size_t{1024}}) {
    const size_t planes = bytes / 2048 / tiles;
    char name[96];
    snprintf(name, sizeof name, "tiles by plane: %zu tiles x %zu planes", tiles, planes);
    report(name, [&] { read_tiles_by_plane<<<resident, kThreads>>>(in, tiles, planes, sink); });
  }
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  printf("device max SM clock %d MHz (clocks never set)\n", clock_khz / 1000);
  return 0;
}
