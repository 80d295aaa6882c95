// Shared by the stencil3d explorations (explore_st3.cu, explore_st3b.cu, explore_st3c.cu,
// explore_pitch.cu): the 7-point reference, the copy they are compared with, the rotated input
// sets, their timing and the check against the reference. Factored out of explore_st3.cu after
// its run (session 3), unchanged; explore_st3b.cu (session 4) ran with the same code. The
// vector-2 walk st3_walk was moved here from explore_st3c.cu and explore_pitch.cu after their
// runs (session 5), the plane pitch made a parameter, and explore_st3b.cu's and
// explore_st3c.cu's copies and variant lines (time_copies, report_variant) after theirs: what
// they launch and print is unchanged.
#pragma once
#include <cmath>
#include <cstring>

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

/// The copies a variant is compared with (explore_st3b, explore_st3c): a float4 copy kernel and
/// cudaMemcpy of the same bytes, printed as "n3=N WHEN: ..."; returns the cudaMemcpy time in us.
inline double time_copies(Buffers& b, int n, const char* when) {
  const size_t bytes = b.bytes;
  const double copy = time_us(
      b, [&](const float* i, float* o) { copy4<<<bytes / 16 / 128, 128>>>((const float4*)i, (float4*)o, bytes / 16); });
  const double memcpy_us =
      time_us(b, [&](const float* i, float* o) { cudaMemcpyAsync(o, i, bytes, cudaMemcpyDeviceToDevice); });
  printf("n3=%d %s: copy4x128 %.1f us, cudaMemcpy %.1f us (%.0f GB/s)\n", n, when, copy, memcpy_us,
         2.0 * bytes / memcpy_us / 1e3);
  return memcpy_us;
}

/// Checks one variant against the reference, times it and prints its line (explore_st3b,
/// explore_st3c; `name_width` pads the name as each printed it); skipped when `only` is given
/// and the name does not contain it.
inline void report_variant(Buffers& b, int n, double memcpy_us, const char* only, int name_width, const char* name,
                           int v, const std::function<void(const float*, float*)>& launch) {
  if (only && !strstr(name, only)) return;
  const double err = check(b, n, v, launch);
  const double t = time_us(b, launch);
  printf("n3=%d %-*s %7.1f us %6.0f GB/s %5.1f%% of cudaMemcpy  max_err %.1e\n", n, name_width, name, t,
         2.0 * b.bytes / t / 1e3, 100 * memcpy_us / t, err);
  fflush(stdout);
}

inline void free_buffers(Buffers& b) {
  for (auto p : b.in) cudaFree(p);
  for (auto p : b.out) cudaFree(p);
}

inline void print_max_clock() {
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  printf("device max SM clock %d MHz (clocks never set)\n", clock_khz / 1000);
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

__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/// The library's stencil3d_streaming_vector for f32, V=2, batches of 2 planes, over planes
/// `plane` floats apart (n*n, or more for a padded pitch: explore_pitch.cu), plus L2 prefetches
/// of the above planes PF batches ahead (one per 128-byte line: every 16th lane; explore_st3c).
/// `offset_phase` (explore_st3c, third run): blocks with odd blockIdx.y compute their first
/// plane alone, so their load and store phases run half a batch out of step with the even ones'.
template <int PF>
__global__ void st3_walk(const float* __restrict__ in, float* __restrict__ out, int n, long long plane, int zc,
                         bool offset_phase = false) {
  constexpr int V = 2, NB = 2;
  const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (y < 1 || y >= n - 1) return;
  const int z0 = max(static_cast<int>(blockIdx.z) * zc, 1), z1 = min(static_cast<int>(blockIdx.z) * zc + zc, n - 1);
  if (z0 >= z1) return;
  const float* h = in + z0 * plane + static_cast<long long>(y) * n + x0;
  float* o = out + z0 * plane + static_cast<long long>(y) * n + x0;
  const bool prefetcher = PF > 0 && (threadIdx.x % 16) == 0;
  if (prefetcher) {
    for (int d = 1; d <= PF * NB; ++d) {
      if (z0 + d < n) prefetch_l2(h + d * plane);
    }
  }
  float2 below = *reinterpret_cast<const float2*>(h - plane);
  float2 centre = *reinterpret_cast<const float2*>(h);
  const bool has_left = x0 >= 1, has_right = x0 + V < n;
  int z = z0;
  auto emit = [&](float* po, float2 above, float l, float r, float2 ym, float2 yp) {
    float2 v;
    v.x = 0.4f * centre.x + 0.1f * (l + centre.y + ym.x + yp.x + below.x + above.x);
    v.y = 0.4f * centre.y + 0.1f * (centre.x + r + ym.y + yp.y + below.y + above.y);
    if (has_left && has_right) *reinterpret_cast<float2*>(po) = v;
    below = centre;
    centre = above;
  };
  if (offset_phase && (blockIdx.y & 1) && z < z1) {
    const float2 above = *reinterpret_cast<const float2*>(h + plane);
    emit(o, above, has_left ? h[-1] : 0.0f, has_right ? h[V] : 0.0f, *reinterpret_cast<const float2*>(h - n),
         *reinterpret_cast<const float2*>(h + n));
    h += plane;
    o += plane;
    ++z;
  }
  for (; z + NB <= z1; z += NB) {
    if (prefetcher) {
#pragma unroll
      for (int u = 0; u < NB; ++u) {
        const int ahead = z + 1 + PF * NB + u;
        if (ahead < n) prefetch_l2(h + (PF * NB + 1 + u) * plane);
      }
    }
    float2 above[NB], ym[NB], yp[NB];
    float l[NB], r[NB];
#pragma unroll
    for (int u = 0; u < NB; ++u) {
      const float* p = h + u * plane;
      above[u] = *reinterpret_cast<const float2*>(p + plane);
      l[u] = has_left ? p[-1] : 0.0f;
      r[u] = has_right ? p[V] : 0.0f;
      ym[u] = *reinterpret_cast<const float2*>(p - n);
      yp[u] = *reinterpret_cast<const float2*>(p + n);
    }
#pragma unroll
    for (int u = 0; u < NB; ++u) emit(o + u * plane, above[u], l[u], r[u], ym[u], yp[u]);
    h += NB * plane;
    o += NB * plane;
  }
  for (; z < z1; ++z) {
    const float2 above = *reinterpret_cast<const float2*>(h + plane);
    emit(o, above, has_left ? h[-1] : 0.0f, has_right ? h[V] : 0.0f, *reinterpret_cast<const float2*>(h - n),
         *reinterpret_cast<const float2*>(h + n));
    h += plane;
    o += plane;
  }
}
