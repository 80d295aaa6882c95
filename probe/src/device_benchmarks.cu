// Device facts seen from kernels: shared-memory bank costs, SM ids, block dispatch order, SM clock.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "host_code.cuh"

namespace cachewise::probe::gpu {
namespace {

__global__ void shared_bank_kernel(int stride_bytes, int words, int iterations, long long* cycles_out, unsigned* sink) {
  extern __shared__ unsigned shared_words[];
  for (int i = static_cast<int>(threadIdx.x); i < words; i += static_cast<int>(blockDim.x)) shared_words[i] = 0;
  __syncwarp();
  const unsigned address = shared_address_of(shared_words) + threadIdx.x * static_cast<unsigned>(stride_bytes);
  unsigned value = 0;
  auto step = [&] { asm volatile("ld.shared.u32 %0, [%1];" : "=r"(value) : "r"(address + value) : "memory"); };
  for (int i = 0; i < 8; ++i) step();
  __syncwarp();
  const long long begin = clock_now();
  for (int i = 0; i < iterations; i += 8) {
#pragma unroll
    for (int k = 0; k < 8; ++k) step();
  }
  sink[threadIdx.x] = value; // the store waits for the last load
  const long long end = clock_now();
  if (threadIdx.x == 0) *cycles_out = end - begin;
}

__global__ void sm_id_kernel(int* ids) {
  if (threadIdx.x == 0) ids[blockIdx.x] = static_cast<int>(sm_id());
}

__global__ void clock_rate_kernel(long long* ticks, unsigned long long* nanoseconds) {
  unsigned long long start_ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start_ns));
  const long long start_ticks = clock_now();
  unsigned long long now_ns = start_ns;
  constexpr unsigned long long kSpinNs = 2'000'000;
  while (now_ns - start_ns < kSpinNs) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now_ns));
  *ticks = clock_now() - start_ticks;
  *nanoseconds = now_ns - start_ns;
}

} // namespace

double shared_load_cycles(int stride_bytes, int iterations) {
  constexpr int kWarp = 32;
  const int words = std::max(kWarp * stride_bytes / 4 + 1, 64);
  iterations = std::max(8, iterations / 8 * 8);
  DeviceArray<long long> cycles(1);
  DeviceArray<unsigned> sink(kWarp);
  shared_bank_kernel<<<1, kWarp, static_cast<std::size_t>(words) * 4>>>(stride_bytes, words, iterations, cycles.get(),
                                                                        sink.get());
  finish_launch("shared_bank_kernel");
  return static_cast<double>(cycles.download(1)[0]) / iterations;
}

std::vector<int> sm_ids() {
  const int blocks = 8 * current_sm_count();
  DeviceArray<int> ids(static_cast<std::size_t>(blocks));
  sm_id_kernel<<<static_cast<unsigned>(blocks), 32>>>(ids.get());
  finish_launch("sm_id_kernel");
  std::vector<int> seen = ids.download(static_cast<std::size_t>(blocks));
  std::ranges::sort(seen);
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  return seen;
}

std::vector<int> block_dispatch_order() {
  // As much dynamic shared memory as one block may take: no SM holds two, so the launch's
  // sm_count blocks land on distinct SMs, in the order the hardware deals them.
  const int blocks = current_sm_count();
  const int shared_bytes = kernels::current_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                                             "cudaDeviceGetAttribute (shared per block)");
  check_cuda(cudaFuncSetAttribute(sm_id_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes),
             "cudaFuncSetAttribute (dynamic shared memory)");
  DeviceArray<int> ids(static_cast<std::size_t>(blocks));
  sm_id_kernel<<<static_cast<unsigned>(blocks), 32, static_cast<std::size_t>(shared_bytes)>>>(ids.get());
  finish_launch("sm_id_kernel (dispatch order)");
  return ids.download(static_cast<std::size_t>(blocks));
}

double measured_sm_clock_mhz() {
  DeviceArray<long long> ticks(1);
  DeviceArray<unsigned long long> nanoseconds(1);
  clock_rate_kernel<<<1, 1>>>(ticks.get(), nanoseconds.get());
  finish_launch("clock_rate_kernel");
  const double elapsed_ns = static_cast<double>(nanoseconds.download(1)[0]);
  return elapsed_ns > 0 ? static_cast<double>(ticks.download(1)[0]) / elapsed_ns * 1000.0 : 0.0;
}

} // namespace cachewise::probe::gpu
