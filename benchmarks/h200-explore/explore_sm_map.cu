// Experiment (session 9): which L2 partition is near to each SM, and on which SM does the
// hardware start each block of a launch? The model put SM s (the s-th block of a wave) in
// partition s % 2; on the H200 the 128x2-thread stencil3d blocks read 17-25% fewer L2 sectors
// than it predicted, as if neighbouring blocks shared their near partition more often.
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -o explore_sm_map benchmarks/h200-explore/explore_sm_map.cu
//   ./explore_sm_map
//
// Part 1: every SM's first block times the same 2048 self-pointing addresses (32 B apart) with
// ld.global.cg, 2 warming loads then 16 dependent ones each; every SM splits its latencies into
// near and far at its own two-means threshold; the share of addresses whose class differs from
// SM 0's says which side the SM is on. Part 2: blocks record %smid and %globaltimer at start
// (then spin 20 us so that the waves form), for 1, 8, 16 and 32 resident blocks per SM.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "explore_timing.cuh"

constexpr int kAddresses = 2048;
constexpr int kTimedLoads = 16;

__device__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ unsigned long long load_cg(unsigned long long address) {
  unsigned long long value;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

// One warp per block; the first block to reach each SM times every address from there.
// A shared store of the loaded value cannot issue before the load returns, and the in-order
// warp reads the clock after it: the clock read waits for the load (as the probe's kernels do).
__device__ void wait_for(unsigned long long value, unsigned* slot) {
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(slot))),
               "r"(static_cast<unsigned>(value))
               : "memory");
}

__device__ long long clock_now() {
  long long ticks;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(ticks)::"memory");
  return ticks;
}

__global__ void time_from_every_sm(const unsigned long long* nodes, int* claimed, float* cycles) {
  const unsigned sm = sm_id();
  __shared__ int mine;
  __shared__ unsigned slot;
  if (threadIdx.x == 0) mine = atomicCAS(&claimed[sm], 0, 1) == 0;
  __syncthreads();
  if (!mine || threadIdx.x != 0) return;
  // Each node points to itself, so the next address (32 B on) is computed from the last load:
  // no iteration's loads can be hoisted above the previous iteration's clock read.
  unsigned long long p = reinterpret_cast<unsigned long long>(nodes) - 32;
#pragma unroll 1
  for (int i = 0; i < kAddresses; ++i) {
    p += 32;
    p = load_cg(p);
    p = load_cg(p);
    wait_for(p, &slot);
    const long long start = clock_now();
    for (int k = 0; k < kTimedLoads; ++k) p = load_cg(p);
    wait_for(p, &slot);
    const long long end = clock_now();
    cycles[sm * kAddresses + i] = static_cast<float>(end - start) / kTimedLoads;
  }
}

__global__ void record_start(unsigned* sms, unsigned long long* starts) {
  if (threadIdx.x == 0) {
    sms[blockIdx.x] = sm_id();
    starts[blockIdx.x] = global_ns();
  }
  const unsigned long long begin = global_ns();
  while (global_ns() - begin < 20000) {
  }
}

float two_means_threshold(std::vector<float> values) {
  std::sort(values.begin(), values.end());
  float threshold = (values.front() + values.back()) / 2;
  for (int iteration = 0; iteration < 50; ++iteration) {
    double low = 0, high = 0;
    int low_count = 0, high_count = 0;
    for (float v : values) {
      if (v <= threshold) low += v, ++low_count;
      else high += v, ++high_count;
    }
    if (low_count == 0 || high_count == 0) break;
    threshold = static_cast<float>((low / low_count + high / high_count) / 2);
  }
  return threshold;
}

int main() {
  int sm_count = 0;
  CK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp properties{};
  CK(cudaGetDeviceProperties(&properties, 0));
  std::printf("device %s, %d SMs\n", properties.name, sm_count);

  // ---- part 1: near/far classes per SM
  std::vector<unsigned long long> host_nodes(kAddresses * 4);
  unsigned long long* nodes = nullptr;
  CK(cudaMalloc(&nodes, host_nodes.size() * sizeof(unsigned long long)));
  for (int i = 0; i < kAddresses; ++i) host_nodes[i * 4] = reinterpret_cast<unsigned long long>(&nodes[i * 4]);
  CK(cudaMemcpy(nodes, host_nodes.data(), host_nodes.size() * sizeof(unsigned long long), cudaMemcpyHostToDevice));
  int* claimed = nullptr;
  float* cycles = nullptr;
  const int max_sm = 256;
  CK(cudaMalloc(&claimed, max_sm * sizeof(int)));
  CK(cudaMalloc(&cycles, static_cast<size_t>(max_sm) * kAddresses * sizeof(float)));
  std::vector<std::vector<int>> classes_per_run;
  for (int run = 0; run < 2; ++run) {
    CK(cudaMemset(claimed, 0, max_sm * sizeof(int)));
    CK(cudaMemset(cycles, 0, static_cast<size_t>(max_sm) * kAddresses * sizeof(float)));
    time_from_every_sm<<<sm_count * 8, 32>>>(nodes, claimed, cycles);
    CK(cudaDeviceSynchronize());
    std::vector<float> host(static_cast<size_t>(max_sm) * kAddresses);
    CK(cudaMemcpy(host.data(), cycles, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<int> reference;
    std::printf("run %d: sm near_cycles far_cycles near_share flipped_vs_sm0\n", run + 1);
    std::vector<int> sides;
    for (int sm = 0; sm < max_sm; ++sm) {
      std::vector<float> mine(host.begin() + static_cast<long>(sm) * kAddresses,
                              host.begin() + static_cast<long>(sm + 1) * kAddresses);
      if (mine[0] == 0) continue;
      const float threshold = two_means_threshold(mine);
      if (reference.empty()) {
        std::vector<float> sorted = mine;
        std::sort(sorted.begin(), sorted.end());
        std::printf("  SM %d latency percentiles 0..100 by 10:", sm);
        for (int q = 0; q <= 10; ++q) std::printf(" %.0f", sorted[std::min<size_t>(sorted.size() - 1, q * sorted.size() / 10)]);
        std::printf("; threshold %.0f\n", threshold);
      }
      std::vector<int> classes;
      double near_sum = 0, far_sum = 0;
      int near_count = 0;
      for (float v : mine) {
        classes.push_back(v <= threshold ? 0 : 1);
        if (v <= threshold) near_sum += v, ++near_count;
        else far_sum += v;
      }
      if (reference.empty()) reference = classes;
      int flipped = 0;
      for (int i = 0; i < kAddresses; ++i) flipped += classes[i] != reference[i];
      const double share = static_cast<double>(flipped) / kAddresses;
      sides.push_back(share > 0.5 ? 1 : 0);
      std::printf("  sm %3d %6.1f %6.1f %5.3f %5.3f\n", sm, near_sum / std::max(1, near_count),
                  far_sum / std::max(1, kAddresses - near_count), static_cast<double>(near_count) / kAddresses, share);
    }
    std::printf("run %d sides by SM id:", run + 1);
    for (int side : sides) std::printf("%d", side);
    std::printf("\n");
    classes_per_run.push_back(sides);
  }

  // ---- part 2: block dispatch order
  struct Shape {
    int threads, shared_bytes;
  };
  const Shape shapes[] = {{1024, 120 * 1024}, {256, 0}, {128, 0}, {64, 0}};
  for (const Shape& shape : shapes) {
    if (shape.shared_bytes > 48 * 1024) {
      CK(cudaFuncSetAttribute(record_start, cudaFuncAttributeMaxDynamicSharedMemorySize, shape.shared_bytes));
    }
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, record_start, shape.threads, shape.shared_bytes));
    const int wave = per_sm * sm_count;
    const int blocks = 3 * wave;
    unsigned* sms = nullptr;
    unsigned long long* starts = nullptr;
    CK(cudaMalloc(&sms, blocks * sizeof(unsigned)));
    CK(cudaMalloc(&starts, blocks * sizeof(unsigned long long)));
    for (int repeat = 0; repeat < 2; ++repeat) {
      record_start<<<blocks, shape.threads, shape.shared_bytes>>>(sms, starts);
      CK(cudaDeviceSynchronize());
      std::vector<unsigned> host_sms(blocks);
      std::vector<unsigned long long> host_starts(blocks);
      CK(cudaMemcpy(host_sms.data(), sms, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(host_starts.data(), starts, blocks * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      const unsigned long long first = *std::min_element(host_starts.begin(), host_starts.end());
      std::printf("dispatch threads=%d shared=%d blocks/SM=%d repeat=%d\n", shape.threads, shape.shared_bytes, per_sm,
                  repeat + 1);
      for (int b = 0; b < blocks; ++b) {
        std::printf("%u%s", host_sms[b], b % 33 == 32 ? "\n" : " ");
      }
      std::printf("\n  start_us by wave:");
      for (int w = 0; w < 3; ++w) {
        const auto [lo, hi] = std::minmax_element(host_starts.begin() + w * wave, host_starts.begin() + (w + 1) * wave);
        std::printf(" [%.1f, %.1f]", (*lo - first) / 1e3, (*hi - first) / 1e3);
      }
      std::printf("\n");
      // How often consecutive blocks of a wave share an SM side (part 1's run 1 map).
      const std::vector<int>& side = classes_per_run[0];
      int same = 0, pairs = 0;
      for (int b = 0; b + 1 < wave; ++b) {
        if (host_sms[b] < side.size() && host_sms[b + 1] < side.size()) {
          same += side[host_sms[b]] == side[host_sms[b + 1]];
          ++pairs;
        }
      }
      std::printf("  consecutive blocks on the same side: %d of %d\n", same, pairs);
    }
    CK(cudaFree(sms));
    CK(cudaFree(starts));
  }
  return 0;
}
