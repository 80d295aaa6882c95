// Bandwidth kernels: the whole chip, 16-byte accesses, CUDA-event time per launch.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "host_code.cuh"

namespace cachewise::probe::gpu {
namespace {

/// Each thread keeps four independent accesses in flight (strided by the thread count, wrapping
/// around the range) so the loads are bandwidth-bound, not latency-bound. In per_block mode each
/// block works on its own range, so the data a block reads is private to its SM.
template <bool kStore, CacheOp op>
__global__ void bandwidth_kernel(uint4* data, unsigned long long count, unsigned long long iterations, bool per_block,
                                 uint4* sink) {
  const unsigned long long threads = per_block ? blockDim.x : static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long thread =
      per_block ? threadIdx.x : blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  if (per_block) data += blockIdx.x * count;
  constexpr int kStreams = 4;
  unsigned long long index[kStreams];
  for (int u = 0; u < kStreams; ++u) index[u] = (thread + u * threads) % count;
  const unsigned long long advance = kStreams * threads % count;
  unsigned acc = 0;
  for (unsigned long long it = 0; it < iterations; ++it) {
#pragma unroll
    for (int u = 0; u < kStreams; ++u) {
      uint4* element = data + index[u];
      if constexpr (kStore && op == CacheOp::cg) {
        __stcg(element, make_uint4(static_cast<unsigned>(it), static_cast<unsigned>(u), 0u, 0u));
      } else if constexpr (kStore) {
        *element = make_uint4(static_cast<unsigned>(it), static_cast<unsigned>(u), 0u, 0u);
      } else {
        const uint4 v = op == CacheOp::ca ? __ldca(element) : op == CacheOp::cg ? __ldcg(element) : *element;
        acc ^= v.x ^ v.w;
      }
      index[u] += advance;
      if (index[u] >= count) index[u] -= count;
    }
  }
  if (!kStore && acc == 0x9e3779b9u) sink->x = acc;
}

__device__ __forceinline__ uint4 load_ca_v4(const uint4* address) {
  uint4 v;
  asm volatile("ld.global.ca.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(address)
               : "memory");
  return v;
}

/// See l1_read_times. Thread t of block b reads the vectors t, t + kL1ReadThreads, ... of the
/// block's set; the loads of one iteration are issued before any of their values is used.
__global__ void __launch_bounds__(kL1ReadThreads, 1)
    l1_read_kernel(const uint4* data, int iterations, unsigned zero, long long* block_cycles, int* block_sms,
                   uint4* sink) {
  constexpr unsigned kRows = static_cast<unsigned>(kL1ReadSetBytes / (kL1ReadThreads * sizeof(uint4)));
  const uint4* mine = data + blockIdx.x * (kL1ReadSetBytes / sizeof(uint4)) + threadIdx.x;
  unsigned acc = 0;
  for (unsigned row = 0; row < kRows; ++row) acc ^= load_ca_v4(mine + row * kL1ReadThreads).x; // fills L1
  __syncthreads();
  const long long begin = clock_now();
  for (int it = 0; it < iterations; ++it) {
    uint4 v[kL1ReadUnroll];
#pragma unroll
    for (int k = 0; k < kL1ReadUnroll; ++k) {
      // `zero` is 0 at run time and acc is loaded data: ptxas cannot prove the salt constant, so
      // it can neither merge the loads of one vector nor hoist them out of the loop.
      const unsigned salt = (acc >> k) & zero;
      v[k] = load_ca_v4(mine + (static_cast<unsigned>(k) % kRows) * kL1ReadThreads + salt);
    }
#pragma unroll
    // Every component is used: with two of them ptxas split each 16-byte load into two 4-byte
    // loads, each costing the L1 the same wavefronts, so the counted bytes were half the work.
    for (int k = 0; k < kL1ReadUnroll; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  __syncthreads();
  const long long end = clock_now();
  if (threadIdx.x == 0) {
    block_cycles[blockIdx.x] = end - begin;
    block_sms[blockIdx.x] = static_cast<int>(sm_id());
  }
  if (acc == 0x9e3779b9u) sink->x = acc; // practically never true; keeps the loads alive
}

} // namespace

namespace {
constexpr unsigned kBandwidthThreads = 1024;
constexpr unsigned long long kBandwidthStreams = 4;

/// The bandwidth kernels' grid: 2 blocks of kBandwidthThreads per SM.
unsigned long long grid_threads() {
  return 2ull * static_cast<unsigned long long>(current_sm_count()) * kBandwidthThreads;
}

/// Threads that share one copy of the range: the block (per_block) or the whole grid.
unsigned long long threads_per_group(const BandwidthRun& run) {
  return run.sharing == Sharing::per_block ? kBandwidthThreads : grid_threads();
}

/// Groups that each work on their own copy of the range: every block (per_block) or the one grid.
std::uint64_t groups_of(const BandwidthRun& run) {
  return run.sharing == Sharing::per_block ? 2ull * static_cast<std::uint64_t>(current_sm_count()) : 1;
}

/// Loop iterations of each thread so a group touches `passes` times its range.
unsigned long long bandwidth_iterations(const BandwidthRun& run) {
  const unsigned long long accesses = run.bytes / sizeof(uint4) * static_cast<unsigned long long>(run.passes);
  return std::max(1ull, accesses / (kBandwidthStreams * threads_per_group(run)));
}

/// Loop iterations of each of the grid's threads so sparse-line stores touch every line of the
/// range `passes` times (a warp store: 32 lines).
unsigned long long sparse_line_store_iterations(const BandwidthRun& run) {
  const unsigned long long line_stores = run.bytes / 128 * static_cast<unsigned long long>(run.passes);
  return std::max(1ull, line_stores / (kBandwidthStreams * grid_threads()));
}
} // namespace

std::uint64_t sparse_line_stores(const BandwidthRun& run) {
  return sparse_line_store_iterations(run) * kBandwidthStreams * grid_threads();
}

std::uint64_t bandwidth_bytes_moved(const BandwidthRun& run) {
  return bandwidth_iterations(run) * kBandwidthStreams * threads_per_group(run) * sizeof(uint4) * groups_of(run);
}

namespace {
/// A thread copies kBurst 16-byte vectors, all loads before its stores; a block's vectors are
/// contiguous (vector e of thread t at block_base + e * blockDim.x + t).
template <int kBurst>
__global__ void burst_copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out) {
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * kBurst * blockDim.x + threadIdx.x;
  uint4 values[kBurst];
#pragma unroll
  for (int e = 0; e < kBurst; ++e) values[e] = in[base + e * blockDim.x];
#pragma unroll
  for (int e = 0; e < kBurst; ++e) out[base + e * blockDim.x] = values[e];
}

/// Stores of 4 bytes, each lane of a warp into its own 128-byte line (a transpose without
/// shared memory stores so): a warp store writes one sector of each of 32 lines. kStreams stores
/// in flight per thread; a warp's successive stores walk groups of 32 lines over the range.
__global__ void sparse_line_store_kernel(unsigned char* data, unsigned long long groups,
                                         unsigned long long iterations) {
  constexpr int kStreams = static_cast<int>(kBandwidthStreams);
  const unsigned lane = threadIdx.x % 32;
  const unsigned long long warps = static_cast<unsigned long long>(gridDim.x) * blockDim.x / 32;
  const unsigned long long warp = (blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x) / 32;
  unsigned long long group[kStreams];
  for (int u = 0; u < kStreams; ++u) group[u] = (warp + u * warps) % groups;
  const unsigned long long advance = kStreams * warps % groups;
  for (unsigned long long it = 0; it < iterations; ++it) {
#pragma unroll
    for (int u = 0; u < kStreams; ++u) {
      *reinterpret_cast<unsigned*>(data + 128 * (group[u] * 32 + lane)) = static_cast<unsigned>(it) ^ u;
      group[u] += advance;
      if (group[u] >= groups) group[u] -= groups;
    }
  }
}

/// A thread copies `rounds` 16-byte vectors one after another (each loaded, then stored); a
/// block's vectors are contiguous (round r of thread t at block_base + r * blockDim.x + t).
/// One kTile x kTile tile of 4-byte words per 32x8-thread block (an n x n matrix), copied to the
/// same tile of `out` or to the mirrored one (tile (x, y) to (y, x), untransposed: a transpose's
/// write addresses). Each warp walks the rows ty, ty + 8, ... and stores a row's kTile words in
/// kTile / 32 consecutive instructions (a run of 4 x kTile bytes per warp), in batches of 4 loads
/// then 4 stores whatever the tile.
template <int kTile, bool kMirrored>
__global__ void tile_copy_kernel(const float* __restrict__ in, float* __restrict__ out, unsigned long long n) {
  constexpr int kChunks = kTile / 32;
  constexpr int kWalk = kTile * kTile / 256;
  constexpr int kBatch = 4;
  const unsigned long long out_x = kMirrored ? blockIdx.y : blockIdx.x;
  const unsigned long long out_y = kMirrored ? blockIdx.x : blockIdx.y;
  for (int first = 0; first < kWalk; first += kBatch) {
    float values[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int row = static_cast<int>(threadIdx.y) + 8 * ((first + i) / kChunks);
      const int column = 32 * ((first + i) % kChunks) + static_cast<int>(threadIdx.x);
      values[i] = in[(blockIdx.y * static_cast<unsigned long long>(kTile) + row) * n + blockIdx.x * kTile + column];
    }
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int row = static_cast<int>(threadIdx.y) + 8 * ((first + i) / kChunks);
      const int column = 32 * ((first + i) % kChunks) + static_cast<int>(threadIdx.x);
      out[(out_y * kTile + row) * n + out_x * kTile + column] = values[i];
    }
  }
}

__global__ void copy_walk_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, int rounds) {
  unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * rounds * blockDim.x + threadIdx.x;
  for (int r = 0; r < rounds; ++r, base += blockDim.x) out[base] = in[base];
}
} // namespace

std::vector<double> bandwidth_seconds(const DeviceBuffer& buffer, const BandwidthRun& run) {
  check_range(buffer, 0, run.bytes * groups_of(run), "bandwidth");
  DeviceArray<uint4> sink(1);
  auto* data = static_cast<uint4*>(buffer.data());
  const unsigned long long count = run.bytes / sizeof(uint4);
  const unsigned long long iterations = bandwidth_iterations(run);
  const bool per_block = run.sharing == Sharing::per_block;
  // Two blocks of 1024 threads per SM: the most resident threads an SM takes.
  const unsigned blocks = static_cast<unsigned>(2 * current_sm_count());
  auto kernel = bandwidth_kernel<false, CacheOp::plain>;
  if (run.store) {
    kernel = run.op == CacheOp::cg ? bandwidth_kernel<true, CacheOp::cg> : bandwidth_kernel<true, CacheOp::plain>;
  } else if (run.op == CacheOp::ca) {
    kernel = bandwidth_kernel<false, CacheOp::ca>;
  } else if (run.op == CacheOp::cg) {
    kernel = bandwidth_kernel<false, CacheOp::cg>;
  }
  return event_seconds([&] { kernel<<<blocks, kBandwidthThreads>>>(data, count, iterations, per_block, sink.get()); },
                       run.repeats, "bandwidth_kernel");
}

namespace {
constexpr unsigned kCopyThreads = 128;

/// The copies' launch: the buffer's first `bytes` into the next `bytes`, in 128-thread blocks of
/// `vectors` 16-byte vectors per thread (`vectors_name` says what they are in the error).
struct CopyLaunch {
  const uint4* in;
  uint4* out;
  unsigned blocks;
};
CopyLaunch copy_launch(const DeviceBuffer& buffer, std::uint64_t bytes, int vectors, const char* what,
                       const char* vectors_name) {
  const std::uint64_t block_bytes = static_cast<std::uint64_t>(vectors) * kCopyThreads * sizeof(uint4);
  if (vectors < 1 || bytes == 0 || bytes % block_bytes != 0) {
    throw std::runtime_error(std::string(what) + ": bytes must be a positive multiple of " + vectors_name +
                             " x 128 x 16");
  }
  check_range(buffer, 0, 2 * bytes, what);
  return {static_cast<const uint4*>(buffer.data()), reinterpret_cast<uint4*>(static_cast<char*>(buffer.data()) + bytes),
          static_cast<unsigned>(bytes / block_bytes)};
}
} // namespace

std::vector<double> burst_copy_seconds(const DeviceBuffer& buffer, std::uint64_t bytes, int burst, int repeats) {
  const CopyLaunch copy = copy_launch(buffer, bytes, burst, "burst_copy", "burst");
  auto kernel = burst_copy_kernel<1>;
  switch (burst) {
  case 1: break;
  case 2: kernel = burst_copy_kernel<2>; break;
  case 4: kernel = burst_copy_kernel<4>; break;
  case 8: kernel = burst_copy_kernel<8>; break;
  default: throw std::runtime_error("burst_copy: burst must be 1, 2, 4 or 8, got " + std::to_string(burst));
  }
  return event_seconds([&] { kernel<<<copy.blocks, kCopyThreads>>>(copy.in, copy.out); }, repeats, "burst_copy_kernel");
}

std::vector<double> sparse_line_store_seconds(const DeviceBuffer& buffer, const BandwidthRun& run) {
  check_range(buffer, 0, run.bytes, "sparse_line_store");
  const unsigned long long groups = run.bytes / (128 * 32);
  if (groups == 0) throw std::runtime_error("sparse_line_store: the range must hold at least 32 lines");
  const unsigned blocks = static_cast<unsigned>(2 * current_sm_count());
  const unsigned long long iterations = sparse_line_store_iterations(run);
  auto* data = static_cast<unsigned char*>(buffer.data());
  return event_seconds([&] { sparse_line_store_kernel<<<blocks, kBandwidthThreads>>>(data, groups, iterations); },
                       run.repeats, "sparse_line_store_kernel");
}

std::vector<double> copy_walk_seconds(const DeviceBuffer& buffer, std::uint64_t bytes, int rounds, int repeats) {
  const CopyLaunch copy = copy_launch(buffer, bytes, rounds, "copy_walk", "rounds");
  return event_seconds([&] { copy_walk_kernel<<<copy.blocks, kCopyThreads>>>(copy.in, copy.out, rounds); }, repeats,
                       "copy_walk_kernel");
}

std::vector<double> tile_copy_seconds(const DeviceBuffer& buffer, std::uint64_t n, int tile, bool mirrored,
                                      int repeats) {
  if (tile != 32 && tile != 64 && tile != 128)
    throw std::runtime_error("tile_copy: tile must be 32, 64 or 128, got " + std::to_string(tile));
  if (n == 0 || n % static_cast<std::uint64_t>(tile) != 0 || n / static_cast<std::uint64_t>(tile) > 65535) {
    throw std::runtime_error("tile_copy: n must be a positive multiple of the tile, at most 65535 tiles");
  }
  const std::uint64_t bytes = n * n * sizeof(float);
  check_range(buffer, 0, 2 * bytes, "tile_copy");
  const auto* in = static_cast<const float*>(buffer.data());
  auto* out = reinterpret_cast<float*>(static_cast<char*>(buffer.data()) + bytes);
  auto kernel = mirrored ? tile_copy_kernel<32, true> : tile_copy_kernel<32, false>;
  if (tile == 64) kernel = mirrored ? tile_copy_kernel<64, true> : tile_copy_kernel<64, false>;
  if (tile == 128) kernel = mirrored ? tile_copy_kernel<128, true> : tile_copy_kernel<128, false>;
  const auto tiles = static_cast<unsigned>(n / static_cast<std::uint64_t>(tile));
  return event_seconds([&] { kernel<<<dim3(tiles, tiles), dim3(32, 8)>>>(in, out, n); }, repeats, "tile_copy_kernel");
}

L1ReadTimes l1_read_times(const DeviceBuffer& buffer, int iterations, int repeats) {
  if (iterations < 1 || repeats < 1) throw std::runtime_error("l1_read_times: iterations and repeats must be >= 1");
  const int sms = current_sm_count();
  check_range(buffer, 0, kL1ReadSetBytes * static_cast<std::uint64_t>(sms), "l1_read_times");
  // More than half of an SM's shared memory per block: no two blocks share an SM, and the L1 left
  // (the unified array minus the carveout) still holds the block's set many times over.
  const int shared_per_sm = kernels::current_device_attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                                              "cudaDeviceGetAttribute (shared per SM)");
  const int shared_per_block = kernels::current_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                                                 "cudaDeviceGetAttribute (shared per block)");
  const int reserve = std::min(shared_per_block, shared_per_sm / 2 + 1024);
  check_cuda(cudaFuncSetAttribute(l1_read_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, reserve),
             "cudaFuncSetAttribute (l1_read_kernel shared memory)");
  DeviceArray<long long> cycles(static_cast<std::size_t>(sms));
  DeviceArray<int> block_sms(static_cast<std::size_t>(sms));
  DeviceArray<uint4> sink(1);
  const auto* data = static_cast<const uint4*>(buffer.data());
  L1ReadTimes times;
  times.seconds = event_seconds(
      [&] {
        l1_read_kernel<<<static_cast<unsigned>(sms), kL1ReadThreads, static_cast<std::size_t>(reserve)>>>(
            data, iterations, 0u, cycles.get(), block_sms.get(), sink.get());
      },
      repeats, "l1_read_kernel");
  times.block_cycles = cycles.download(static_cast<std::size_t>(sms));
  times.block_sms = block_sms.download(static_cast<std::size_t>(sms));
  times.bytes_per_block = static_cast<std::uint64_t>(iterations) * kL1ReadUnroll * kL1ReadThreads * sizeof(uint4);
  times.bytes_per_launch = times.bytes_per_block * static_cast<std::uint64_t>(sms);
  return times;
}

} // namespace cachewise::probe::gpu
