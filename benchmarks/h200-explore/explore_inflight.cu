// Exploration (session 3): does the H200 stream slower when each warp keeps more loads in
// flight? ncu showed copy with 4-8 16-byte vectors per thread at 66-67% of DRAM peak against
// 72% for 1, with the same registers and occupancy (docs/h200-runs/README.md). Here a copy and a
// read of the same bytes, each thread moving `kBatch` 16-byte words per step (all loads of a
// step issued before its stores), for kBatch = 1..16, at 64 MiB and 512 MiB per array
// (at 64 MiB a step of 16 covers the whole array: one step per thread).
// Times: CUDA events, median of 15 back-to-back launches after 5 warm-ups, two rotating buffer
// pairs; clocks never set.
#include "explore_timing.cuh"

/// A step of thread t moves words base + u*threads + t for u < kBatch: a warp's kBatch loads are
/// kBatch coalesced 512 B pieces, all issued before the step's stores (the last step's words
/// past the end are skipped, each load on its own guard).
template <int kBatch>
__global__ void copy_batched(const uint4* __restrict__ in, uint4* __restrict__ out, size_t words) {
  const size_t threads = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  for (size_t base = 0; base < words; base += kBatch * threads) {
    uint4 v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      if (base + u * threads + t < words) v[u] = in[base + u * threads + t];
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      if (base + u * threads + t < words) out[base + u * threads + t] = v[u];
    }
  }
}

template <int kBatch>
__global__ void read_batched(const uint4* __restrict__ in, size_t words, unsigned* sink) {
  const size_t threads = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (size_t base = 0; base < words; base += kBatch * threads) {
    uint4 v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) v[u] = base + u * threads + t < words ? in[base + u * threads + t] : uint4{};
#pragma unroll
    for (int u = 0; u < kBatch; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x12345678u) *sink = acc;
}

double time_us(const std::function<void(int)>& launch) { return median_launch_us(launch, 15); }

template <int kBatch> void measure(size_t bytes, uint4* const (&in)[2], uint4* const (&out)[2], unsigned* sink, int grid) {
  const size_t words = bytes / sizeof(uint4);
  const double copy = time_us([&](int i) { copy_batched<kBatch><<<grid, 256>>>(in[i % 2], out[i % 2], words); });
  const double read = time_us([&](int i) { read_batched<kBatch><<<grid, 256>>>(in[i % 2], words, sink); });
  printf("%4zu MiB  batch %2d  grid %5d  copy %8.1f us %6.0f GB/s   read %8.1f us %6.0f GB/s\n", bytes >> 20, kBatch, grid,
         copy, 2.0 * bytes / copy / 1e3, read, bytes / read / 1e3);
  fflush(stdout);
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int resident = sms * 8; // 8 blocks of 256 threads per SM: 64 warps
  unsigned* sink;
  CK(cudaMalloc(&sink, sizeof(unsigned)));
  for (size_t bytes : {size_t{64} << 20, size_t{512} << 20}) {
    uint4* in[2];
    uint4* out[2];
    for (int i = 0; i < 2; ++i) {
      CK(cudaMalloc(&in[i], bytes));
      CK(cudaMalloc(&out[i], bytes));
      CK(cudaMemset(in[i], 1, bytes));
      CK(cudaMemset(out[i], 0, bytes));
    }
    for (int i = 0; i < 100; ++i) copy_batched<1><<<resident, 256>>>(in[0], out[0], bytes / sizeof(uint4)); // warm clocks
    CK(cudaDeviceSynchronize());
    measure<1>(bytes, in, out, sink, resident);
    measure<2>(bytes, in, out, sink, resident);
    measure<4>(bytes, in, out, sink, resident);
    measure<8>(bytes, in, out, sink, resident);
    measure<16>(bytes, in, out, sink, resident);
    measure<1>(bytes, in, out, sink, resident / 2);
    measure<4>(bytes, in, out, sink, resident / 2);
    for (int i = 0; i < 2; ++i) {
      cudaFree(in[i]);
      cudaFree(out[i]);
    }
  }
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  printf("device max SM clock %d MHz (clocks never set)\n", clock_khz / 1000);
  return 0;
}
