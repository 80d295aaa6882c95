// Exploration (session 5): do L2 reads and writes overlap? The model charged an L2-resident
// mix of reads and writes the sum of the read time and the write time at the probe's read and
// write bandwidths; the fastest stencils and copies on the H200 ran above that sum (1.04-1.11x).
// All SMs (2 blocks x 1024 threads each, 4 16-byte accesses in flight per thread, as the
// probe's bandwidth kernel) re-read, re-write, or half re-read and half re-write an L2-resident
// range; `overlap` = (serial - mixed) / (serial - parallel) from the three times. (RangeWalk was
// factored out of the two kernels after both runs; the walk is unchanged.)
#include <cstdio>

#include "explore_timing.cuh"

/// The probe's bandwidth-kernel walk: kStreams accesses in flight per thread, strided by the
/// thread count and wrapping around `count` elements.
template <int kStreams> struct RangeWalk {
  unsigned long long index[kStreams], advance, count;
  __device__ RangeWalk(unsigned long long elements) : count(elements) {
    const unsigned long long threads = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    const unsigned long long thread = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
    for (int u = 0; u < kStreams; ++u)
      index[u] = (thread + u * threads) % count;
    advance = kStreams * threads % count;
  }
  __device__ void step(int u) {
    index[u] += advance;
    if (index[u] >= count)
      index[u] -= count;
  }
};

template <int kStoreStreams>
__global__ void l2_mix(uint4 *data, unsigned long long count, int iterations, uint4 *sink) {
  constexpr int kStreams = 4;
  RangeWalk<kStreams> walk(count);
  unsigned acc = 0;
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int u = 0; u < kStreams; ++u) {
      if (u < kStoreStreams) {
        data[walk.index[u]] = make_uint4(it, u, 0, 0);
      } else {
        const uint4 v = data[walk.index[u]];
        acc ^= v.x ^ v.w;
      }
      walk.step(u);
    }
  }
  if (acc == 0x9e3779b9u)
    sink->x = acc;
}

/// Second run: stores of kBytes (4 or 8) at the start of every 32-byte sector of the range, one
/// sector per thread per access: partial-sector writes, as a transpose without shared memory
/// makes them. Same streams and range walk as l2_mix.
template <int kBytes> __global__ void l2_partial(char *data, unsigned long long sectors, int iterations) {
  constexpr int kStreams = 4;
  RangeWalk<kStreams> walk(sectors);
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int u = 0; u < kStreams; ++u) {
      char *sector = data + 32 * walk.index[u];
      if constexpr (kBytes == 8) {
        *reinterpret_cast<uint2 *>(sector) = make_uint2(it, u);
      } else {
        *reinterpret_cast<unsigned *>(sector) = it ^ u;
      }
      walk.step(u);
    }
  }
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  uint4 *data;
  uint4 *sink;
  CK(cudaMalloc(&sink, sizeof(uint4)));
  for (unsigned long long mib : {4ull, 8ull, 16ull}) {
    const unsigned long long bytes = mib << 20;
    CK(cudaMalloc(&data, bytes));
    CK(cudaMemset(data, 0, bytes));
    const unsigned long long count = bytes / 16;
    const int blocks = 2 * sms, threads = 1024;
    const int iterations = 200;
    const double moved = 4.0 * 16 * iterations * blocks * threads;
    auto gbps = [&](auto kernel) {
      const double us = median_launch_us([&](int) { kernel<<<blocks, threads>>>(data, count, iterations, sink); }, 15);
      return moved / us / 1e3;
    };
    for (int round = 0; round < 2; ++round) {
      const double read = gbps(l2_mix<0>), write = gbps(l2_mix<4>), mixed = gbps(l2_mix<2>);
      // Half the bytes each way: serial = B/2R + B/2W, parallel = max of the two, mixed = B/M.
      const double serial = 0.5 / read + 0.5 / write, parallel = std::max(0.5 / read, 0.5 / write),
                   measured = 1.0 / mixed;
      printf("%3llu MiB round %d: read %.0f GB/s, write %.0f GB/s, half and half %.0f GB/s (serial model %.0f, "
             "parallel %.0f): overlap %.2f\n",
             mib, round, read, write, mixed, 1.0 / serial, 1.0 / parallel, (serial - measured) / (serial - parallel));
    }
    // Partial-sector writes: sectors written per second against the full-sector write above.
    const double full_sectors_per_us = gbps(l2_mix<4>) * 1e3 / 32;
    for (int round = 0; round < 2; ++round) {
      for (int bytes_per_sector : {8, 4}) {
        const double us = median_launch_us(
            [&](int) {
              if (bytes_per_sector == 8) {
                l2_partial<8><<<blocks, threads>>>(reinterpret_cast<char *>(data), bytes / 32, iterations);
              } else {
                l2_partial<4><<<blocks, threads>>>(reinterpret_cast<char *>(data), bytes / 32, iterations);
              }
            },
            15);
        const double sectors_per_us = 4.0 * iterations * blocks * threads / us;
        printf("%3llu MiB round %d: %d bytes per sector written: %.0f sectors/us (%.0f GB/s of sectors), %.2fx the "
               "full-sector write's time per sector\n",
               mib, round, bytes_per_sector, sectors_per_us, sectors_per_us * 32 / 1e3,
               full_sectors_per_us / sectors_per_us);
      }
    }
    CK(cudaFree(data));
  }
  return 0;
}
