// Latency kernels: one thread (optionally pinned to an SM by %smid), every load depending on the
// previous one, clock64 around the timed loads; inline PTX picks the cache operator.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "host_code.cuh"

namespace cachewise::probe::gpu {
namespace {

/// kCarveoutSet: the instantiation whose carveout attribute the host sets; the other one always
/// runs at the driver's default carveout.
template <CacheOp op, bool kCarveoutSet>
__global__ void chase_kernel(Address start, long long warm_hops, long long timed_hops, int target_sm, unsigned* claimed,
                             ChaseOutput* out) {
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

struct DeviceStep {
  unsigned op;
  unsigned timed;
  Address offset;
};

__global__ void script_kernel(Address base, const DeviceStep* steps, int count, int one, int target_sm,
                              unsigned* claimed, unsigned* latencies, int* timed_count, ChaseOutput* out) {
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

/// See first_load_cycles. The address is loaded and waited for (an untimed empty frame) before
/// the first clock read; every timed frame is a loop with a run-time trip count, as timed_loads.
template <CacheOp op>
__global__ void first_load_kernel(Address base, const Address* offsets, int count, int one, int target_sm,
                                  unsigned* claimed, unsigned* empty_out, unsigned* first_out, unsigned* second_out,
                                  ChaseOutput* out) {
  __shared__ unsigned empty[kMaxFirstLoads];
  __shared__ unsigned first[kMaxFirstLoads];
  __shared__ unsigned second[kMaxFirstLoads];
  __shared__ unsigned order;
  if (!claim(target_sm, claimed)) return;
  const unsigned order_address = shared_address_of(&order);
  Address sink = 0;
  for (int i = 0; i < count; ++i) {
    const Address address = timed_moves(base + __ldcg(offsets + i), one, order_address);
    long long begin = clock_now();
    const Address moved = timed_moves(address, one, order_address);
    long long end = clock_now();
    empty[i] = static_cast<unsigned>(end - begin);
    begin = clock_now();
    const Address value = timed_loads<op>(moved, one, order_address); // the word holds zero
    end = clock_now();
    first[i] = static_cast<unsigned>(end - begin);
    begin = clock_now();
    const Address again = timed_loads<op>(address + value, one, order_address);
    end = clock_now();
    second[i] = static_cast<unsigned>(end - begin);
    sink += again;
  }
  for (int i = 0; i < count; ++i) {
    empty_out[i] = empty[i];
    first_out[i] = first[i];
    second_out[i] = second[i];
  }
  out->sink = sink;
  out->sm = static_cast<int>(sm_id());
}

} // namespace

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

double chase_mean_cycles(const DeviceBuffer& buffer, std::uint64_t start_offset, const ChaseOptions& options) {
  const long long timed = std::max<long long>(8, (options.timed_hops + 7) / 8 * 8);
  const Address start = base_of(buffer) + start_offset;
  if (options.op == CacheOp::plain) throw std::runtime_error("chase_mean_cycles: pick ca or cg");
  const bool set_carveout = options.l1_carveout_percent >= 0;
  auto kernel = options.op == CacheOp::ca
                    ? (set_carveout ? chase_kernel<CacheOp::ca, true> : chase_kernel<CacheOp::ca, false>)
                    : (set_carveout ? chase_kernel<CacheOp::cg, true> : chase_kernel<CacheOp::cg, false>);
  if (set_carveout) {
    check_cuda(
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, options.l1_carveout_percent),
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
        self_loop_kernel<<<pinned_grid(sm), 32>>>(base_of(buffer), device_offsets.get(), count, warm_loads, timed_loads,
                                                  sm, claimed, latencies.get(), out);
      },
      "self_loop_kernel");
  const std::vector<float> values = latencies.download(offsets.size());
  return {values.begin(), values.end()};
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

FirstLoadTimes first_load_cycles(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets, CacheOp op,
                                 int sm) {
  if (offsets.empty() || offsets.size() > static_cast<std::size_t>(kMaxFirstLoads)) {
    throw std::runtime_error("first_load_cycles: 1 to " + std::to_string(kMaxFirstLoads) + " addresses");
  }
  if (op == CacheOp::plain) throw std::runtime_error("first_load_cycles: pick ca or cg");
  for (std::uint64_t offset : offsets) check_range(buffer, offset, 8, "first_load_cycles");
  DeviceArray<Address> device_offsets(offsets.size());
  device_offsets.upload(std::vector<Address>(offsets.begin(), offsets.end()));
  DeviceArray<unsigned> empty(offsets.size());
  DeviceArray<unsigned> first(offsets.size());
  DeviceArray<unsigned> second(offsets.size());
  const int count = static_cast<int>(offsets.size());
  auto kernel = op == CacheOp::ca ? first_load_kernel<CacheOp::ca> : first_load_kernel<CacheOp::cg>;
  launch_pinned(
      sm,
      [&](unsigned* claimed, ChaseOutput* out) {
        kernel<<<pinned_grid(sm), 32>>>(base_of(buffer), device_offsets.get(), count, 1, sm, claimed, empty.get(),
                                        first.get(), second.get(), out);
      },
      "first_load_kernel");
  return {empty.download(offsets.size()), first.download(offsets.size()), second.download(offsets.size())};
}

} // namespace cachewise::probe::gpu
