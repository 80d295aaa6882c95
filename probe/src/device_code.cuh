// Device-side helpers of the probe's latency kernels (included by the probe's .cu files only):
// SM id, clock, loads with an explicit cache operator, and the waits that keep clock reads in
// place around the loads they time.
#pragma once

#include "benchmarks.hpp"

namespace cachewise::probe::gpu {

using Address = unsigned long long;

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

template <CacheOp op>
__device__ __forceinline__ Address load(Address address) {
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
__device__ inline bool claim(int target_sm, unsigned* claimed) {
  if (threadIdx.x != 0) return false;
  if (target_sm < 0) return blockIdx.x == 0;
  if (sm_id() != static_cast<unsigned>(target_sm)) return false;
  return atomicCAS(claimed, 0u, 1u) == 0u;
}

/// `count` dependent loads starting at `p`. The count is a run-time value and every load is
/// waited for inside the loop, so the compiler keeps the loop and cannot move a clock read across
/// these loads: a clock read before the call precedes the first load, one after it follows the
/// last load's return (seen on sm_90: unrolled straight-line loads let the clock reads slide).
template <CacheOp op>
__device__ __forceinline__ Address timed_loads(Address p, int count, unsigned order_address) {
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

/// The empty frame of timed_loads: the same loop and waits around `count` register moves instead
/// of loads, so clock reads around it measure what the timing itself costs.
__device__ __forceinline__ Address timed_moves(Address p, int count, unsigned order_address) {
#pragma unroll 1
  for (int k = 0; k < count; ++k) {
    asm volatile("mov.b64 %0, %1;" : "=l"(p) : "l"(p));
    wait_for(p, order_address);
  }
  return p;
}

} // namespace cachewise::probe::gpu
