// Exploration (session 3): can stencil3d reach 90% of a same-size copy at 256^3 on the H200?
// Variants of the 2.5D streaming kernel, all with `vector` points per thread along x:
//  - chunk: one block per (column tile, z chunk), as the library's kernel;
//  - PIPE: the next batch of planes is loaded before the current batch is computed and stored;
//  - balanced: a resident-sized 1-D grid, each block walking an equal share of the
//    (column tile, plane) steps, so every block finishes at the same time (no tail wave).
// Timing: CUDA events, median of 20 back-to-back launches after 5 warm-ups, rotating input
// sets > 3x L2 (as `advisor validate`); the
// denominator is the library's copy shape (float4, 128-thread blocks) on the same bytes.
// Interior points only; x-border vectors and y-border rows are skipped (timing probe).
#include <cstring>

#include "explore_st3_common.cuh"

template <int V> struct Vec;
template <> struct Vec<2> { using type = float2; };
template <> struct Vec<4> { using type = float4; };
template <int V> __device__ __forceinline__ float lane(const typename Vec<V>::type& v, int i) {
  return reinterpret_cast<const float*>(&v)[i];
}

template <int V> struct Taps {
  typename Vec<V>::type above, y_minus, y_plus;
  float left, right;
};

template <int V> __device__ __forceinline__ Taps<V> load_taps(const float* p, int n, long long plane) {
  using T = typename Vec<V>::type;
  Taps<V> t;
  t.above = *reinterpret_cast<const T*>(p + plane);
  t.left = p[-1];
  t.right = p[V];
  t.y_minus = *reinterpret_cast<const T*>(p - n);
  t.y_plus = *reinterpret_cast<const T*>(p + n);
  return t;
}

template <int V>
__device__ __forceinline__ void emit(float* o, const typename Vec<V>::type& below, const typename Vec<V>::type& centre,
                                     const Taps<V>& t) {
  typename Vec<V>::type v;
  float* out = reinterpret_cast<float*>(&v);
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const float l = i > 0 ? lane<V>(centre, i > 0 ? i - 1 : 0) : t.left;
    const float r = i + 1 < V ? lane<V>(centre, i + 1 < V ? i + 1 : 0) : t.right;
    out[i] = 0.4f * lane<V>(centre, i) +
             0.1f * (l + r + lane<V>(t.y_minus, i) + lane<V>(t.y_plus, i) + lane<V>(below, i) + lane<V>(t.above, i));
  }
  *reinterpret_cast<typename Vec<V>::type*>(o) = v;
}

/// Planes [z0, z1) of the column at (x0, y): window primed with z0-1 and z0, batches of NB planes.
template <int V, int NB, bool PIPE>
__device__ __forceinline__ void stream_column(const float* __restrict__ in, float* __restrict__ out, int n, int x0, int y,
                                              int z0, int z1) {
  using T = typename Vec<V>::type;
  const long long plane = static_cast<long long>(n) * n;
  const long long offset = z0 * plane + static_cast<long long>(y) * n + x0;
  const float* h = in + offset;
  float* o = out + offset;
  T below = *reinterpret_cast<const T*>(h - plane);
  T centre = *reinterpret_cast<const T*>(h);
  int z = z0;
  if (z1 - z >= NB) {
    Taps<V> cur[NB];
#pragma unroll
    for (int u = 0; u < NB; ++u) cur[u] = load_taps<V>(h + u * plane, n, plane);
    while (true) {
      const bool more = z1 - (z + NB) >= NB;
      Taps<V> next[NB];
      if (PIPE && more) {
#pragma unroll
        for (int u = 0; u < NB; ++u) next[u] = load_taps<V>(h + (NB + u) * plane, n, plane);
      }
#pragma unroll
      for (int u = 0; u < NB; ++u) {
        emit<V>(o + u * plane, below, centre, cur[u]);
        below = centre;
        centre = cur[u].above;
      }
      h += NB * plane;
      o += NB * plane;
      z += NB;
      if (!more) break;
      if (PIPE) {
#pragma unroll
        for (int u = 0; u < NB; ++u) cur[u] = next[u];
      } else {
#pragma unroll
        for (int u = 0; u < NB; ++u) cur[u] = load_taps<V>(h + u * plane, n, plane);
      }
    }
  }
  for (; z < z1; ++z) { // fewer than NB planes left
    const Taps<V> t = load_taps<V>(h, n, plane);
    emit<V>(o, below, centre, t);
    below = centre;
    centre = t.above;
    h += plane;
    o += plane;
  }
}

template <int V, int NB, bool PIPE>
__global__ void st3_chunk(const float* __restrict__ in, float* __restrict__ out, int n, int zc) {
  const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x0 < V || x0 + V >= n || y < 1 || y >= n - 1) return;
  const int z0 = 1 + blockIdx.z * zc;
  const int z1 = min(z0 + zc, n - 1);
  if (z0 < z1) stream_column<V, NB, PIPE>(in, out, n, x0, y, z0, z1);
}

/// 1-D grid; block b takes steps [b*S/G, (b+1)*S/G) of S = tiles x (n-2) (tile, plane) steps,
/// tile-major, so a block's steps are one or two column segments.
template <int V, int NB, bool PIPE>
__global__ void st3_balanced(const float* __restrict__ in, float* __restrict__ out, int n, int tiles_x) {
  const long long planes = n - 2;
  const long long tiles = static_cast<long long>(tiles_x) * ((n + blockDim.y - 1) / blockDim.y);
  const long long steps = tiles * planes;
  long long s = steps * blockIdx.x / gridDim.x;
  const long long s_end = steps * (blockIdx.x + 1) / gridDim.x;
  while (s < s_end) {
    const long long tile = s / planes;
    const int z0 = 1 + static_cast<int>(s % planes);
    const int z1 = static_cast<int>(min(static_cast<long long>(n - 1), z0 + (s_end - s)));
    const int x0 = ((tile % tiles_x) * blockDim.x + threadIdx.x) * V;
    const int y = (tile / tiles_x) * blockDim.y + threadIdx.y;
    if (x0 >= V && x0 + V < n && y >= 1 && y < n - 1) stream_column<V, NB, PIPE>(in, out, n, x0, y, z0, z1);
    s += z1 - z0;
  }
}

template <int V, int NB, bool PIPE> int resident_blocks(int threads) {
  int per_sm = 0, sms = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, st3_balanced<V, NB, PIPE>, threads, 0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return per_sm * sms;
}

int main(int argc, char** argv) {
  const char* only = argc > 1 ? argv[1] : nullptr; // run only the variants whose name contains it
  warm_clocks();
  for (int n : {256, 512}) {
    const size_t bytes = static_cast<size_t>(n) * n * n * 4;
    Buffers b = make(bytes);
    const double moved = 2.0 * bytes;
    const double copy =
        time_us(b, [&](const float* i, float* o) { copy4<<<bytes / 16 / 128, 128>>>((const float4*)i, (float4*)o, bytes / 16); });
    const double memcpy_us =
        time_us(b, [&](const float* i, float* o) { cudaMemcpyAsync(o, i, bytes, cudaMemcpyDeviceToDevice); });
    printf("n3=%d copy4x128 %.1f us %.0f GB/s; cudaMemcpy %.1f us\n", n, copy, moved / copy / 1e3, memcpy_us);
    auto rep = [&](const char* name, int v, const std::function<void(const float*, float*)>& l) {
      if (only && !strstr(name, only)) return;
      const double err = check(b, n, v, l);
      const double t = time_us(b, l);
      printf("n3=%d %-34s %7.1f us %6.0f GB/s %5.1f%% of copy  max_err %.1e\n", n, name, t, moved / t / 1e3, 100 * copy / t,
             err);
      fflush(stdout);
    };
#define CHUNK(V, BX, BY, NB, PIPE, ZC)                                                                                 \
  rep("chunk v" #V " " #BX "x" #BY " nb" #NB " pipe" #PIPE " z" #ZC, V, [&](const float* i, float* o) {                \
    st3_chunk<V, NB, PIPE><<<dim3(n / (BX * V), n / BY, (n - 2 + ZC - 1) / ZC), dim3(BX, BY)>>>(i, o, n, ZC);          \
  })
#define BALANCED(V, BX, BY, NB, PIPE, OVER)                                                                            \
  rep("balanced v" #V " " #BX "x" #BY " nb" #NB " pipe" #PIPE " x" #OVER, V, [&](const float* i, float* o) {           \
    const int grid = OVER * resident_blocks<V, NB, PIPE>(BX * BY);                                                     \
    st3_balanced<V, NB, PIPE><<<grid, dim3(BX, BY)>>>(i, o, n, n / (BX * V));                                          \
  })
    CHUNK(2, 128, 2, 2, false, 8);
    CHUNK(2, 64, 4, 2, false, 8);
    CHUNK(2, 128, 2, 2, false, 4);
    CHUNK(2, 64, 4, 2, false, 4);
    CHUNK(2, 128, 2, 2, false, 2);
    CHUNK(4, 32, 4, 2, false, 8);
    CHUNK(4, 32, 4, 2, false, 4);
    CHUNK(2, 128, 2, 2, true, 8);
    CHUNK(2, 128, 2, 2, true, 16);
    CHUNK(2, 128, 2, 2, true, 32);
    CHUNK(2, 128, 2, 4, true, 16);
    CHUNK(2, 128, 2, 4, true, 32);
    CHUNK(2, 128, 2, 2, false, 32);
    BALANCED(2, 128, 2, 2, false, 1);
    BALANCED(2, 128, 2, 2, true, 1);
    BALANCED(2, 128, 2, 4, true, 1);
    BALANCED(2, 64, 4, 2, true, 1);
    BALANCED(4, 32, 4, 2, true, 1);
    BALANCED(2, 128, 2, 2, true, 2);
    BALANCED(2, 128, 2, 2, false, 2);
    BALANCED(2, 128, 1, 2, true, 1);
    const double copy_after =
        time_us(b, [&](const float* i, float* o) { copy4<<<bytes / 16 / 128, 128>>>((const float4*)i, (float4*)o, bytes / 16); });
    printf("n3=%d copy4x128 after the variants %.1f us\n", n, copy_after);
    for (auto p : b.in) cudaFree(p);
    for (auto p : b.out) cudaFree(p);
  }
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  printf("device max SM clock %d MHz (clocks never set)\n", clock_khz / 1000);
  return 0;
}
