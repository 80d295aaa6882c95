// Shared by the session-3 explorations (explore_st3.cu, explore_dram.cu, explore_inflight.cu):
// a fatal-error check and the timing they report, as `advisor validate` times kernels.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

#define CK(x)                                                                                                          \
  do {                                                                                                                 \
    cudaError_t err_ = (x);                                                                                            \
    if (err_ != cudaSuccess) {                                                                                         \
      printf("CUDA %s at %d\n", cudaGetErrorString(err_), __LINE__);                                                   \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

/// Median of `repeats` CUDA-event times in us, launches back to back with no host
/// synchronisation between them, after 5 warm-ups. `launch(k)` gets the launch's index k
/// (warm-ups included), for callers that rotate buffers.
inline double median_launch_us(const std::function<void(int)>& launch, int repeats) {
  constexpr int kWarmup = 5;
  std::vector<cudaEvent_t> events(2 * repeats);
  for (auto& e : events) cudaEventCreate(&e);
  for (int i = 0; i < kWarmup; ++i) launch(i);
  for (int i = 0; i < repeats; ++i) {
    cudaEventRecord(events[2 * i]);
    launch(kWarmup + i);
    cudaEventRecord(events[2 * i + 1]);
  }
  CK(cudaEventSynchronize(events.back()));
  CK(cudaGetLastError());
  std::vector<float> ts;
  for (int i = 0; i < repeats; ++i) {
    float ms;
    cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]);
    ts.push_back(ms * 1000);
  }
  for (auto& e : events) cudaEventDestroy(e);
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}
