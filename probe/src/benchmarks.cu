// GPU microbenchmarks of the probe. Latency kernels run one thread (optionally on a chosen SM),
// make every load depend on the previous one and time with clock64; inline PTX picks the cache
// operator (ld.global.ca: L1 + L2, ld.global.cg: L2 only) so the compiler cannot change it.
#include "benchmarks.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "cuda_check.hpp"

namespace cachewise::probe::gpu {
namespace {

using kernels::check_cuda;
using Address = unsigned long long;

// ----- device helpers ------------------------------------------------------------------

__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__device__ __forceinline__ long long clock_now() {
  long long ticks;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(ticks)::"memory");
  return ticks;
}

__device__ __forceinline__ Address load_ca(Address address) {
  Address value;
  asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

__device__ __forceinline__ Address load_cg(Address address) {
  Address value;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

template <CacheOp op> __device__ __forceinline__ Address load(Address address) {
  static_assert(op != CacheOp::plain, "latency kernels pick the cache operator explicitly");
  if constexpr (op == CacheOp::ca) {
    return load_ca(address);
  } else {
    return load_cg(address);
  }
}

/// A shared-memory store of the loaded value: it cannot issue before the load returns, and the
/// in-order warp then reads the clock only after it, so the clock read waits for the load.
__device__ __forceinline__ void wait_for(Address value, unsigned shared_address) {
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(shared_address), "r"(static_cast<unsigned>(value)) : "memory");
}

__device__ __forceinline__ unsigned shared_address_of(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

/// True for the single thread that should run a latency kernel: thread 0 of block 0, or thread 0
/// of the first block that landed on SM `target_sm`.
__device__ bool claim(int target_sm, unsigned* claimed) {
  if (threadIdx.x != 0) return false;
  if (target_sm < 0) return blockIdx.x == 0;
  if (sm_id() != static_cast<unsigned>(target_sm)) return false;
  return atomicCAS(claimed, 0u, 1u) == 0u;
}

/// `count` dependent loads starting at `p`. The count is a run-time value and every load is
/// waited for inside the loop, so the compiler keeps the loop and cannot move a clock read across
/// these loads: a clock read before the call precedes the first load, one after it follows the
/// last load's return (seen on sm_90: unrolled straight-line loads let the clock reads slide).
template <CacheOp op> __device__ __forceinline__ Address timed_loads(Address p, int count, unsigned order_address) {
#pragma unroll 1
  for (int k = 0; k < count; ++k) {
    p = load<op>(p);
    wait_for(p, order_address);
  }
  return p;
}

struct ChaseOutput {
  long long cycles;
  Address sink;
  int sm;
};

// ----- kernels ---------------------------------------------------------------------------

/// kCarveoutSet: the instantiation whose carveout attribute the host sets; the other one always
/// runs at the driver's default carveout.
template <CacheOp op, bool kCarveoutSet>
__global__ void chase_kernel(Address start, long long warm_hops, long long timed_hops, int target_sm,
                             unsigned* claimed, ChaseOutput* out) {
  __shared__ unsigned order;
  if (!claim(target_sm, claimed)) return;
  const unsigned order_address = shared_address_of(&order);
  Address p = start;
  for (long long i = 0; i < warm_hops; ++i) p = load<op>(p);
  wait_for(p, order_address);
  const long long begin = clock_now();
  for (long long i = 0; i < timed_hops; i += 8) {
#pragma unroll
    for (int k = 0; k < 8; ++k) p = load<op>(p);
  }
  wait_for(p, order_address);
  const long long end = clock_now();
  out->cycles = end - begin;
  out->sink = p;
  out->sm = static_cast<int>(sm_id());
}

__global__ void chase_per_hop_kernel(Address start, int hops, int one, int target_sm, unsigned* claimed,
                                     unsigned* latencies, ChaseOutput* out) {
  __shared__ unsigned cycles[kMaxTimedHops];
  __shared__ unsigned order;
  if (!claim(target_sm, claimed)) return;
  const unsigned order_address = shared_address_of(&order);
  Address p = start;
  for (int i = 0; i < hops; ++i) {
    const long long begin = clock_now();
    p = timed_loads<CacheOp::cg>(p, one, order_address);
    const long long end = clock_now();
    cycles[i] = static_cast<unsigned>(end - begin);
  }
  for (int i = 0; i < hops; ++i) latencies[i] = cycles[i];
  out->sink = p;
  out->sm = static_cast<int>(sm_id());
}

__global__ void self_loop_kernel(Address base, const Address* offsets, int count, int warm_loads, int timed_count,
                                 int target_sm, unsigned* claimed, float* latencies, ChaseOutput* out) {
  __shared__ unsigned order;
  if (!claim(target_sm, claimed)) return;
  const unsigned order_address = shared_address_of(&order);
  for (int i = 0; i < count; ++i) {
    Address p = timed_loads<CacheOp::cg>(base + __ldcg(offsets + i), warm_loads, order_address);
    const long long begin = clock_now();
    p = timed_loads<CacheOp::cg>(p, timed_count, order_address);
    const long long end = clock_now();
    latencies[i] = static_cast<float>(end - begin) / static_cast<float>(timed_count);
  }
  out->sm = static_cast<int>(sm_id());
}

/// Node i points to the next node of its cycle: cycles are runs of `chain_length` consecutive
/// entries (1: self loops; count: one cycle through all).
__global__ void write_chain_kernel(Address base, const Address* offsets, long long count, long long chain_length) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const long long first = i / chain_length * chain_length;
  const long long end = min(first + chain_length, count);
  const long long next = i + 1 < end ? i + 1 : first;
  *reinterpret_cast<Address*>(base + offsets[i]) = base + offsets[next];
}

/// See EvictionTest. Every thread reads its cycle's start and hop count before the target load,
/// with L1-bypassing loads, so nothing but the target and the chains touches the cache under test.
template <CacheOp op>
__global__ void eviction_test_kernel(Address target, const Address* starts, const long long* hops, int walkers,
                                     Address probe, int one, int target_sm, unsigned* claimed, ChaseOutput* out) {
  __shared__ unsigned order;
  __shared__ int claimed_here;
  if (threadIdx.x == 0) claimed_here = claim(target_sm, claimed) ? 1 : 0;
  __syncthreads();
  if (claimed_here == 0) return;
  const unsigned order_address = shared_address_of(&order);
  const int walker = static_cast<int>(threadIdx.x);
  Address p = 0;
  long long count = 0;
  if (walker < walkers) {
    p = __ldcg(starts + walker);
    count = __ldcg(hops + walker);
  }
  if (walker == 0 && target != 0) wait_for(load<op>(target), order_address);
  __syncthreads();
  for (long long i = 0; i < count; ++i) p = load<op>(p);
  wait_for(p, order_address); // this walker's last load has returned before the barrier
  __syncthreads();
  if (walker != 0) return;
  const long long begin = clock_now();
  const Address value = timed_loads<op>(probe, one, order_address);
  const long long end = clock_now();
  out->cycles = end - begin;
  out->sink = value + p;
  out->sm = static_cast<int>(sm_id());
}

__global__ void stream_kernel(const uint4* data, unsigned long long count, uint4* sink) {
  unsigned acc = 0;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    acc ^= __ldcg(data + i).x;
  }
  if (acc == 0x9e3779b9u) sink->x = acc; // practically never true; keeps the loads alive
}

__global__ void gather_kernel(Address base, const Address* offsets, long long count, Address* sink) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const Address value = load_cg(base + offsets[i]);
  if (value == 1) *sink = value;
}

struct DeviceStep {
  unsigned op;
  unsigned timed;
  Address offset;
};

__global__ void script_kernel(Address base, const DeviceStep* steps, int count, int one, int target_sm, unsigned* claimed,
                              unsigned* latencies, int* timed_count, ChaseOutput* out) {
  __shared__ DeviceStep script[kMaxScriptSteps];
  __shared__ unsigned cycles[kMaxScriptSteps];
  __shared__ unsigned order;
  if (!claim(target_sm, claimed)) return;
  // Copy the script with L1-bypassing loads so reading it disturbs no L1 set under test.
  for (int i = 0; i < count; ++i) {
    script[i].op = __ldcg(&steps[i].op);
    script[i].timed = __ldcg(&steps[i].timed);
    script[i].offset = __ldcg(&steps[i].offset);
  }
  const unsigned order_address = shared_address_of(&order);
  Address value = 0; // every word read holds zero, so `base + offset + value` chains the accesses
  int timed = 0;
  for (int i = 0; i < count; ++i) {
    const Address address = base + script[i].offset + value;
    const Op op = static_cast<Op>(script[i].op);
    if (op == Op::store_wb) {
      asm volatile("st.global.wb.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
    } else if (op == Op::store_cg) {
      asm volatile("st.global.cg.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
    } else {
      const long long begin = clock_now();
      value = op == Op::load_ca ? timed_loads<CacheOp::ca>(address, one, order_address)
                                : timed_loads<CacheOp::cg>(address, one, order_address);
      const long long end = clock_now();
      if (script[i].timed != 0) cycles[timed++] = static_cast<unsigned>(end - begin);
    }
  }
  for (int i = 0; i < timed; ++i) latencies[i] = cycles[i];
  *timed_count = timed;
  out->sink = value;
  out->sm = static_cast<int>(sm_id());
}

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

__global__ void shared_bank_kernel(int stride_bytes, int words, int iterations, long long* cycles_out,
                                   unsigned* sink) {
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

// ----- host helpers ----------------------------------------------------------------------

/// A typed device array freed on scope exit.
template <typename T> class DeviceArray {
public:
  explicit DeviceArray(std::size_t count) : count_(std::max<std::size_t>(count, 1)) {
    check_cuda(cudaMalloc(&data_, count_ * sizeof(T)), "cudaMalloc (probe scratch)");
    check_cuda(cudaMemset(data_, 0xff, count_ * sizeof(T)), "cudaMemset (probe scratch)");
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return data_; }
  void upload(const std::vector<T>& values) {
    check_cuda(cudaMemcpy(data_, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy (upload)");
  }
  std::vector<T> download(std::size_t count) const {
    std::vector<T> values(count);
    check_cuda(cudaMemcpy(values.data(), data_, count * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
    return values;
  }
  void clear() { check_cuda(cudaMemset(data_, 0, count_ * sizeof(T)), "cudaMemset (probe scratch)"); }

private:
  T* data_ = nullptr;
  std::size_t count_;
};

int current_sm_count() {
  return kernels::current_device_attribute(cudaDevAttrMultiProcessorCount, "cudaDeviceGetAttribute (SM count)");
}

/// Grid of a pinned latency launch: enough one-warp blocks that every SM receives some.
unsigned pinned_grid(int sm) { return sm < 0 ? 1u : static_cast<unsigned>(4 * current_sm_count()); }

void finish_launch(const char* what) {
  check_cuda(cudaGetLastError(), what);
  check_cuda(cudaDeviceSynchronize(), what);
}

/// Runs `launch` (a pinned latency kernel writing `out`) until the block landed on SM `sm`.
template <typename Launch> ChaseOutput launch_pinned(int sm, Launch launch, const char* what) {
  DeviceArray<unsigned> claimed(1);
  DeviceArray<ChaseOutput> out(1);
  constexpr int kAttempts = 4;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    claimed.clear();
    out.clear();
    check_cuda(cudaMemset(&out.get()->sm, 0xff, sizeof(int)), what);
    launch(claimed.get(), out.get());
    finish_launch(what);
    const ChaseOutput result = out.download(1)[0];
    if (sm < 0 || result.sm == sm) return result;
  }
  throw std::runtime_error(std::string(what) + ": no block landed on SM " + std::to_string(sm));
}

Address base_of(const DeviceBuffer& buffer) { return reinterpret_cast<Address>(buffer.data()); }

void check_range(const DeviceBuffer& buffer, std::uint64_t offset, std::uint64_t bytes, const char* what) {
  if (offset + bytes > buffer.bytes()) throw std::runtime_error(std::string(what) + ": range outside the probe buffer");
}

unsigned blocks_for(std::size_t count, unsigned threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

} // namespace

// ----- public functions -------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::uint64_t bytes) : bytes_(bytes) {
  const cudaError_t status = cudaMalloc(&data_, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError(); // an allocation failure is not sticky: clear it so later checks see their own errors
    check_cuda(status, "cudaMalloc (probe buffer)");
  }
  zero(0, bytes);
}

DeviceBuffer::~DeviceBuffer() { cudaFree(data_); }

void DeviceBuffer::zero(std::uint64_t offset, std::uint64_t bytes) const {
  check_range(*this, offset, bytes, "zero");
  check_cuda(cudaMemset(static_cast<char*>(data_) + offset, 0, bytes), "cudaMemset (probe buffer)");
  check_cuda(cudaDeviceSynchronize(), "cudaMemset (probe buffer)");
}

void write_chains(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets, std::size_t chain_length) {
  if (offsets.empty()) return;
  if (chain_length == 0) throw std::runtime_error("write_chains: chain length 0");
  for (std::uint64_t offset : offsets) check_range(buffer, offset, 8, "write_chain");
  DeviceArray<Address> device_offsets(offsets.size());
  device_offsets.upload(std::vector<Address>(offsets.begin(), offsets.end()));
  constexpr unsigned kThreads = 256;
  write_chain_kernel<<<blocks_for(offsets.size(), kThreads), kThreads>>>(
      base_of(buffer), device_offsets.get(), static_cast<long long>(offsets.size()),
      static_cast<long long>(chain_length));
  finish_launch("write_chain_kernel");
}

void write_chain(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets) {
  write_chains(buffer, offsets, std::max<std::size_t>(offsets.size(), 1));
}

void write_self_loops(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets) {
  write_chains(buffer, offsets, 1);
}

std::uint32_t eviction_test_cycles(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets,
                                   const EvictionTest& test) {
  if (test.op == CacheOp::plain) throw std::runtime_error("eviction_test_cycles: pick ca or cg");
  if (test.chain_length == 0) throw std::runtime_error("eviction_test_cycles: chain length 0");
  const std::size_t walkers = (offsets.size() + test.chain_length - 1) / test.chain_length;
  if (walkers > kMaxWalkers) throw std::runtime_error("eviction_test_cycles: more chains than walkers");
  check_range(buffer, test.probe, 8, "eviction_test_cycles");
  if (test.has_target) check_range(buffer, test.target, 8, "eviction_test_cycles");
  std::vector<Address> starts;
  std::vector<long long> hops;
  const Address base = base_of(buffer);
  for (std::size_t first = 0; first < offsets.size(); first += test.chain_length) {
    starts.push_back(base + offsets[first]);
    hops.push_back(static_cast<long long>(std::min(test.chain_length, offsets.size() - first)) * test.walks);
  }
  DeviceArray<Address> device_starts(starts.size());
  DeviceArray<long long> device_hops(hops.size());
  if (!starts.empty()) {
    device_starts.upload(starts);
    device_hops.upload(hops);
  }
  const Address target = test.has_target ? base + test.target : 0;
  const unsigned threads = static_cast<unsigned>(std::max<std::size_t>(32, (walkers + 31) / 32 * 32));
  auto kernel = test.op == CacheOp::ca ? eviction_test_kernel<CacheOp::ca> : eviction_test_kernel<CacheOp::cg>;
  const ChaseOutput result = launch_pinned(
      test.sm,
      [&](unsigned* claimed, ChaseOutput* out) {
        kernel<<<pinned_grid(test.sm), threads>>>(target, device_starts.get(), device_hops.get(),
                                                  static_cast<int>(walkers), base + test.probe, 1, test.sm, claimed,
                                                  out);
      },
      "eviction_test_kernel");
  return static_cast<std::uint32_t>(result.cycles);
}

std::uint64_t free_device_memory_bytes() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return free_bytes;
}

double chase_mean_cycles(const DeviceBuffer& buffer, std::uint64_t start_offset, const ChaseOptions& options) {
  const long long timed = std::max<long long>(8, (options.timed_hops + 7) / 8 * 8);
  const Address start = base_of(buffer) + start_offset;
  if (options.op == CacheOp::plain) throw std::runtime_error("chase_mean_cycles: pick ca or cg");
  const bool set_carveout = options.l1_carveout_percent >= 0;
  auto kernel = options.op == CacheOp::ca ? (set_carveout ? chase_kernel<CacheOp::ca, true> : chase_kernel<CacheOp::ca, false>)
                                          : (set_carveout ? chase_kernel<CacheOp::cg, true> : chase_kernel<CacheOp::cg, false>);
  if (set_carveout) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, options.l1_carveout_percent),
               "cudaFuncSetAttribute (carveout)");
  }
  const ChaseOutput result = launch_pinned(
      options.sm,
      [&](unsigned* claimed, ChaseOutput* out) {
        kernel<<<pinned_grid(options.sm), 32>>>(start, options.warm_hops, timed, options.sm, claimed, out);
      },
      "chase_kernel");
  return static_cast<double>(result.cycles) / static_cast<double>(timed);
}

std::vector<std::uint32_t> chase_per_hop(const DeviceBuffer& buffer, std::uint64_t start_offset, int hops, int sm) {
  hops = std::clamp(hops, 1, kMaxTimedHops);
  DeviceArray<unsigned> latencies(static_cast<std::size_t>(hops));
  const Address start = base_of(buffer) + start_offset;
  launch_pinned(
      sm,
      [&](unsigned* claimed, ChaseOutput* out) {
        chase_per_hop_kernel<<<pinned_grid(sm), 32>>>(start, hops, 1, sm, claimed, latencies.get(), out);
      },
      "chase_per_hop_kernel");
  return latencies.download(static_cast<std::size_t>(hops));
}

std::vector<double> self_loop_latencies(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets, int sm,
                                        int warm_loads, int timed_loads) {
  if (offsets.empty()) return {};
  DeviceArray<Address> device_offsets(offsets.size());
  device_offsets.upload(std::vector<Address>(offsets.begin(), offsets.end()));
  DeviceArray<float> latencies(offsets.size());
  const int count = static_cast<int>(offsets.size());
  launch_pinned(
      sm,
      [&](unsigned* claimed, ChaseOutput* out) {
        self_loop_kernel<<<pinned_grid(sm), 32>>>(base_of(buffer), device_offsets.get(), count, warm_loads, timed_loads, sm, claimed,
                                                   latencies.get(), out);
      },
      "self_loop_kernel");
  const std::vector<float> values = latencies.download(offsets.size());
  return {values.begin(), values.end()};
}

void stream_through_l2(const DeviceBuffer& buffer, std::uint64_t offset, std::uint64_t bytes) {
  check_range(buffer, offset, bytes, "stream_through_l2");
  DeviceArray<uint4> sink(1);
  const auto* data = reinterpret_cast<const uint4*>(static_cast<const char*>(buffer.data()) + offset);
  stream_kernel<<<static_cast<unsigned>(4 * current_sm_count()), 512>>>(data, bytes / sizeof(uint4), sink.get());
  finish_launch("stream_kernel");
}

void gather_through_l2(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets) {
  if (offsets.empty()) return;
  DeviceArray<Address> device_offsets(offsets.size());
  device_offsets.upload(std::vector<Address>(offsets.begin(), offsets.end()));
  DeviceArray<Address> sink(1);
  constexpr unsigned kThreads = 256;
  gather_kernel<<<blocks_for(offsets.size(), kThreads), kThreads>>>(base_of(buffer), device_offsets.get(),
                                                                    static_cast<long long>(offsets.size()), sink.get());
  finish_launch("gather_kernel");
}

std::vector<std::uint32_t> run_script(const DeviceBuffer& buffer, const std::vector<ScriptStep>& steps, int sm) {
  if (steps.empty() || steps.size() > static_cast<std::size_t>(kMaxScriptSteps)) {
    throw std::runtime_error("run_script: 1 to " + std::to_string(kMaxScriptSteps) + " steps");
  }
  std::vector<DeviceStep> host;
  for (const ScriptStep& step : steps) {
    check_range(buffer, step.offset, 8, "run_script");
    host.push_back({static_cast<unsigned>(step.op), step.timed ? 1u : 0u, step.offset});
  }
  DeviceArray<DeviceStep> device_steps(host.size());
  device_steps.upload(host);
  DeviceArray<unsigned> latencies(host.size());
  DeviceArray<int> timed_count(1);
  const int count = static_cast<int>(host.size());
  launch_pinned(
      sm,
      [&](unsigned* claimed, ChaseOutput* out) {
        script_kernel<<<pinned_grid(sm), 32>>>(base_of(buffer), device_steps.get(), count, 1, sm, claimed,
                                               latencies.get(), timed_count.get(), out);
      },
      "script_kernel");
  return latencies.download(static_cast<std::size_t>(timed_count.download(1)[0]));
}

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
/// Seconds per `launch()` by CUDA events, `repeats` times after one warm-up launch (module
/// load, TLB, and the cache state the repeats then see).
std::vector<double> event_seconds(const std::function<void()>& launch, int repeats, const char* kernel_name) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> seconds;
  try {
    launch();
    finish_launch(kernel_name);
    for (int r = 0; r < repeats; ++r) {
      check_cuda(cudaEventRecord(start), "cudaEventRecord");
      launch();
      check_cuda(cudaEventRecord(stop), "cudaEventRecord");
      finish_launch(kernel_name);
      float milliseconds = 0;
      check_cuda(cudaEventElapsedTime(&milliseconds, start, stop), "cudaEventElapsedTime");
      seconds.push_back(milliseconds * 1e-3);
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return seconds;
}

/// A thread copies kBurst 16-byte vectors, all loads before its stores; a block's vectors are
/// contiguous (vector e of thread t at block_base + e * blockDim.x + t).
template <int kBurst> __global__ void burst_copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out) {
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
__global__ void sparse_line_store_kernel(unsigned char* data, unsigned long long groups, unsigned long long iterations) {
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
    throw std::runtime_error(std::string(what) + ": bytes must be a positive multiple of " + vectors_name + " x 128 x 16");
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

std::vector<double> tile_copy_seconds(const DeviceBuffer& buffer, std::uint64_t n, int tile, bool mirrored, int repeats) {
  if (tile != 32 && tile != 64 && tile != 128) throw std::runtime_error("tile_copy: tile must be 32, 64 or 128, got " + std::to_string(tile));
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
  const int shared_bytes =
      kernels::current_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, "cudaDeviceGetAttribute (shared per block)");
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
