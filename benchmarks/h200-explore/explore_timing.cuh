// Shared by the explorations (explore_st3.cu, explore_dram.cu, explore_inflight.cu, ...): a
// fatal-error check and the timing they report, as `advisor validate` times kernels.
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
/// A kTile x kTile tile of an kN-wide f32 matrix, copied untransposed from tile (tx, ty) of `in`
/// to tile (ox, oy) of `out` by kThreads threads: all of a thread's loads, then its stores.
template <int kN, int kTile, int kThreads>
__device__ __forceinline__ void copy_tile(const float* __restrict__ in, float* __restrict__ out, int tx, int ty, int ox,
                                          int oy) {
  constexpr int kPerThread = kTile * kTile / kThreads;
  float values[kPerThread];
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int element = i * kThreads + threadIdx.x;
    values[i] = in[(ty * kTile + element / kTile) * kN + tx * kTile + element % kTile];
  }
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int element = i * kThreads + threadIdx.x;
    out[(oy * kTile + element / kTile) * kN + ox * kTile + element % kTile] = values[i];
  }
}

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

/// `sets` input/output pairs of `elements` floats each, the inputs filled, for harnesses that
/// alternate them so that no launch finds the previous one's data in L2 (session 10).
struct AlternatingSets {
  std::vector<float*> in, out;
  AlternatingSets(size_t elements, int sets) : in(sets), out(sets) {
    for (int s = 0; s < sets; ++s) {
      CK(cudaMalloc(&in[s], elements * sizeof(float)));
      CK(cudaMalloc(&out[s], elements * sizeof(float)));
      CK(cudaMemset(in[s], 1, elements * sizeof(float)));
    }
  }
  ~AlternatingSets() {
    for (size_t s = 0; s < in.size(); ++s) {
      cudaFree(in[s]);
      cudaFree(out[s]);
    }
  }
};

/// One line: two rounds of median_launch_us(launch, 31), to show the spread, and the bandwidth
/// of the faster for `bytes` moved.
inline void report_two_rounds(const char* name, double bytes, const std::function<void(int)>& launch) {
  const double first = median_launch_us(launch, 31), second = median_launch_us(launch, 31);
  std::printf("%-52s %8.2f %8.2f us  %5.0f GB/s\n", name, first, second, bytes / std::min(first, second) / 1e3);
}
