// Exploration (session 5): transposes without shared memory run 2-3x their predicted time on the
// H200, stalled on the LSU queue with the SM-to-L2 crossbar 66-85% busy (docs/model.md). Stores
// writing part of a sector cost 1.2x a whole one per sector (explore_l2mix): what do stores that
// scatter over many lines cost? All SMs (2 blocks x 1024 threads each, 4 stores in flight per
// thread) re-write an 8 MiB L2-resident range; a warp store puts `lanes_per_sector` lanes' words
// (4 bytes each) into one sector of each of 32 / lanes_per_sector lines... as the variants say.
// Printed: sectors written per us, and time per sector over whole-sector 16-byte stores.
#include <cstdio>

#include "explore_timing.cuh"

/// Warp store k of a thread: its lane's `word_bytes` word at line (warp_base + lane / per_line)
/// and byte offset (lane % per_line) * word_bytes in that line; successive stores of a warp move
/// to the next group of lines.
template <int kWordBytes>
__global__ void scatter_store(unsigned char *data, unsigned long long lines, int per_line, int iterations) {
  constexpr int kStreams = 4;
  const unsigned lane = threadIdx.x % 32;
  const unsigned long long warps = static_cast<unsigned long long>(gridDim.x) * blockDim.x / 32;
  const unsigned long long warp = (blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x) / 32;
  const unsigned long long lines_per_store = 32 / per_line;
  unsigned long long group[kStreams];
  const unsigned long long groups = lines / lines_per_store;
  for (int u = 0; u < kStreams; ++u)
    group[u] = (warp + u * warps) % groups;
  const unsigned long long advance = kStreams * warps % groups;
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int u = 0; u < kStreams; ++u) {
      unsigned char *p = data + 128 * (group[u] * lines_per_store + lane / per_line) + (lane % per_line) * kWordBytes;
      if constexpr (kWordBytes == 16) {
        *reinterpret_cast<uint4 *>(p) = make_uint4(it, u, lane, 0);
      } else if constexpr (kWordBytes == 8) {
        *reinterpret_cast<uint2 *>(p) = make_uint2(it, u);
      } else {
        *reinterpret_cast<unsigned *>(p) = it ^ u;
      }
      group[u] += advance;
      if (group[u] >= groups)
        group[u] -= groups;
    }
  }
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const unsigned long long bytes = 8ull << 20, lines = bytes / 128;
  unsigned char *data;
  CK(cudaMalloc(&data, bytes));
  CK(cudaMemset(data, 0, bytes));
  const int blocks = 2 * sms, threads = 1024, iterations = 100;
  const double stores = 4.0 * iterations * blocks * threads / 32; // warp stores per launch
  struct Variant {
    const char *name;
    int word_bytes, per_line;
    double sectors_per_store;
  };
  // per_line lanes share a line; their words are contiguous from the line's start.
  const Variant variants[] = {
      {"16 B x 8 lanes per line: 4 lines, whole sectors (a coalesced store)", 16, 8, 16},
      {"4 B x 32 lanes per line: 1 line, whole sectors", 4, 32, 4},
      {"8 B x 4 lanes per line: 8 lines, 1 whole sector each", 8, 4, 8},
      {"4 B x 8 lanes per line: 4 lines, whole sectors", 4, 8, 4},
      {"4 B x 4 lanes per line: 8 lines, half a sector each", 4, 4, 8},
      {"4 B x 2 lanes per line: 16 lines, a quarter sector each", 4, 2, 16},
      {"4 B x 1 lane per line: 32 lines, an eighth of a sector each (naive transpose)", 4, 1, 32},
      {"8 B x 1 lane per line: 32 lines, a quarter sector each", 8, 1, 32},
      {"16 B x 1 lane per line: 32 lines, half a sector each", 16, 1, 32},
  };
  double whole_us_per_sector = 0;
  for (int round = 0; round < 2; ++round) {
    for (const Variant &v : variants) {
      const double us = median_launch_us(
          [&](int) {
            if (v.word_bytes == 16) {
              scatter_store<16><<<blocks, threads>>>(data, lines, v.per_line, iterations);
            } else if (v.word_bytes == 8) {
              scatter_store<8><<<blocks, threads>>>(data, lines, v.per_line, iterations);
            } else {
              scatter_store<4><<<blocks, threads>>>(data, lines, v.per_line, iterations);
            }
          },
          15);
      const double sectors = stores * v.sectors_per_store;
      if (v.word_bytes == 16 && v.per_line == 8)
        whole_us_per_sector = us / sectors;
      printf("round %d %-80s %8.1f us: %6.0f warp stores/us, %7.0f sectors/us, %.2fx a whole sector's time\n", round,
             v.name, us, stores / us, sectors / us, us / sectors / whole_us_per_sector);
      fflush(stdout);
    }
  }
  printf("(clocks never set)\n");
  return 0;
}
