// Shared by the stencil3d explorations (explore_st3.cu, explore_st3b.cu): the 7-point
// reference, the copy they are compared with, the rotated input sets, their timing and the
// check against the reference. Factored out of explore_st3.cu after its run (session 3),
// unchanged; explore_st3b.cu (session 4) ran with the same code.
#pragma once
#include <cmath>

#include "explore_timing.cuh"

__global__ void st3_reference(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
  if (x < 1 || x >= n - 1 || y < 1 || y >= n - 1 || z < 1 || z >= n - 1) return;
  const long long plane = static_cast<long long>(n) * n;
  const float* p = in + z * plane + static_cast<long long>(y) * n + x;
  out[p - in] = 0.4f * p[0] + 0.1f * (p[-1] + p[1] + p[-n] + p[n] + p[-plane] + p[plane]);
}

__global__ void copy4(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n4) out[i] = in[i];
}

__global__ void fill(float* a, size_t count, unsigned seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    a[i] = static_cast<float>((i * 2654435761u + seed) % 1000u) * 1e-3f;
  }
}

struct Buffers {
  std::vector<float*> in, out;
  size_t bytes;
};

inline Buffers make(size_t bytes) {
  Buffers b{{}, {}, bytes};
  const int sets = std::max<int>(2, static_cast<int>((3 * (60ull << 20)) / (2 * bytes)) + 1);
  for (int i = 0; i < sets; ++i) {
    float *a, *o;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&o, bytes));
    fill<<<1024, 256>>>(a, bytes / 4, i);
    CK(cudaMemset(o, 0, bytes));
    b.in.push_back(a);
    b.out.push_back(o);
  }
  CK(cudaDeviceSynchronize());
  return b;
}

/// median_launch_us over 20 launches, rotating the input sets.
inline double time_us(Buffers& b, const std::function<void(const float*, float*)>& launch) {
  return median_launch_us([&](int k) { launch(b.in[k % b.in.size()], b.out[k % b.in.size()]); }, 20);
}

/// Max |out - reference| over the interior the variants write (x-border vectors skipped).
inline double check(Buffers& b, int n, int v, const std::function<void(const float*, float*)>& launch) {
  const size_t count = b.bytes / 4;
  float* ref;
  CK(cudaMalloc(&ref, b.bytes));
  CK(cudaMemset(ref, 0, b.bytes));
  CK(cudaMemset(b.out[0], 0, b.bytes));
  st3_reference<<<dim3(n / 128, n, n), 128>>>(b.in[0], ref, n);
  launch(b.in[0], b.out[0]);
  CK(cudaDeviceSynchronize());
  std::vector<float> got(count), want(count);
  CK(cudaMemcpy(got.data(), b.out[0], b.bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(want.data(), ref, b.bytes, cudaMemcpyDeviceToHost));
  CK(cudaFree(ref));
  double worst = 0;
  for (size_t i = 0; i < count; ++i) {
    const int x = i % n;
    if (x < v || x >= n - v) continue;
    worst = std::max(worst, static_cast<double>(std::abs(got[i] - want[i])));
  }
  return worst;
}

/// Clocks ramp after an idle start: stream 20 GB first so the first copy measures steady state.
inline void warm_clocks() {
  Buffers warm = make(1ull << 30);
  for (int i = 0; i < 10; ++i) {
    cudaMemcpyAsync(warm.out[0], warm.in[0], warm.bytes, cudaMemcpyDeviceToDevice);
    cudaMemcpyAsync(warm.in[0], warm.out[0], warm.bytes, cudaMemcpyDeviceToDevice);
  }
  CK(cudaDeviceSynchronize());
  for (auto p : warm.in) cudaFree(p);
  for (auto p : warm.out) cudaFree(p);
}
