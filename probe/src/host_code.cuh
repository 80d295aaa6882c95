// Host-side helpers of the probe's benchmark launches (included by the probe's .cu files only):
// device scratch arrays, launch checks, pinned launches, CUDA-event timing.
#pragma once

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "benchmarks.hpp"
#include "cuda_check.hpp"
#include "device_code.cuh"

namespace cachewise::probe::gpu {

using kernels::check_cuda;

/// A typed device array freed on scope exit.
template <typename T>
class DeviceArray {
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
    check_cuda(cudaMemcpy(data_, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice),
               "cudaMemcpy (upload)");
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

inline int current_sm_count() {
  return kernels::current_device_attribute(cudaDevAttrMultiProcessorCount, "cudaDeviceGetAttribute (SM count)");
}

/// Grid of a pinned latency launch: enough one-warp blocks that every SM receives some.
inline unsigned pinned_grid(int sm) { return sm < 0 ? 1u : static_cast<unsigned>(4 * current_sm_count()); }

inline void finish_launch(const char* what) {
  check_cuda(cudaGetLastError(), what);
  check_cuda(cudaDeviceSynchronize(), what);
}

/// Runs `launch` (a pinned latency kernel writing `out`) until the block landed on SM `sm`.
template <typename Launch>
ChaseOutput launch_pinned(int sm, Launch launch, const char* what) {
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

inline Address base_of(const DeviceBuffer& buffer) { return reinterpret_cast<Address>(buffer.data()); }

inline void check_range(const DeviceBuffer& buffer, std::uint64_t offset, std::uint64_t bytes, const char* what) {
  if (offset + bytes > buffer.bytes()) throw std::runtime_error(std::string(what) + ": range outside the probe buffer");
}

inline unsigned blocks_for(std::size_t count, unsigned threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

/// Seconds per `launch()` by CUDA events, `repeats` times after one warm-up launch (module
/// load, TLB, and the cache state the repeats then see).
inline std::vector<double> event_seconds(const std::function<void()>& launch, int repeats, const char* kernel_name) {
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

} // namespace cachewise::probe::gpu
