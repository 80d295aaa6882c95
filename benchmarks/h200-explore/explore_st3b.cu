// Exploration (session 4): stencil3d at 256^3 reached 81-88% of a same-size copy on the H200
// (explore_st3.cu, docs/validation-h200.md). Which change to the 2.5D streaming kernel's
// per-plane work brings it to 90%? Variants of one kernel, `vector` V points per thread along x:
//  - R rows per thread along y: a thread keeps R rows' centre and below vectors in registers,
//    so per plane it loads R vectors above plus the rows y0-1 and y0+R, not 3 vectors per row;
//  - SHFL: the x neighbours come from the next lanes' centre vectors (__shfl), only the warp's
//    first and last lane load a scalar;
//  - CS: outputs stored with st.global.cs (evict-first), keeping L2 for the input's halos.
// Timing as explore_st3.cu: median of 20 back-to-back launches after 5 warm-ups, input sets
// rotated over > 3x L2; the denominators are cudaMemcpyAsync and a float4 copy kernel of the
// same bytes, both timed before and after the variants.
#include <cstring>

#include "explore_st3_common.cuh"

template <int V> struct Vec;
template <> struct Vec<2> { using type = float2; };
template <> struct Vec<4> { using type = float4; };

template <int V> __device__ __forceinline__ float& lane(typename Vec<V>::type& v, int i) {
  return reinterpret_cast<float*>(&v)[i];
}
template <int V> __device__ __forceinline__ float lane(const typename Vec<V>::type& v, int i) {
  return reinterpret_cast<const float*>(&v)[i];
}
template <int V> __device__ __forceinline__ typename Vec<V>::type load_vec(const float* p) {
  return *reinterpret_cast<const typename Vec<V>::type*>(p);
}

/// One plane's loads for R rows: the rows' vectors one plane up, the rows y0-1 and y0+R of
/// this plane, and (without SHFL) each row's x neighbours.
template <int V, int R, bool SHFL> struct PlaneTaps {
  typename Vec<V>::type above[R], y_minus, y_plus;
  float left[R], right[R]; // with SHFL: loaded by the warp's first / last lane only
};

template <int V, int R, bool SHFL>
__device__ __forceinline__ PlaneTaps<V, R, SHFL> load_plane(const float* p, int n, long long plane, bool first_lane,
                                                            bool last_lane) {
  PlaneTaps<V, R, SHFL> t;
#pragma unroll
  for (int r = 0; r < R; ++r) t.above[r] = load_vec<V>(p + plane + r * n);
  t.y_minus = load_vec<V>(p - n);
  t.y_plus = load_vec<V>(p + R * n);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    t.left[r] = !SHFL || first_lane ? p[r * n - 1] : 0.0f;
    t.right[r] = !SHFL || last_lane ? p[r * n + V] : 0.0f;
  }
  return t;
}

template <bool CS> __device__ __forceinline__ void store_out(float2* o, float2 v) {
  if constexpr (CS) __stcs(o, v); else *o = v;
}
template <bool CS> __device__ __forceinline__ void store_out(float4* o, float4 v) {
  if constexpr (CS) __stcs(o, v); else *o = v;
}

template <int V, int R, int NB, bool SHFL, bool CS>
__global__ void st3_rows(const float* __restrict__ in, float* __restrict__ out, int n, int zc) {
  using T = typename Vec<V>::type;
  const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  const int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * R;
  const int z0 = 1 + blockIdx.z * zc;
  const int z1 = min(z0 + zc, n - 1);
  // Threads on the borders keep running (their lanes feed the shuffles) but load clamped
  // rows and store nothing there.
  const int yl = max(y0, 1), yh = min(y0 + R, n - 1) - 1; // rows [yl, yh] are stored
  const int ys = min(max(y0, 1), n - 1 - R);             // the rows this thread loads start at ys
  const bool stores_x = x0 >= V && x0 + V < n;
  const unsigned lane_id = threadIdx.x % 32;
  const long long plane = static_cast<long long>(n) * n;
  const float* h = in + z0 * plane + static_cast<long long>(ys) * n + x0;
  float* o = out + z0 * plane + static_cast<long long>(ys) * n + x0;
  T below[R], centre[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    below[r] = load_vec<V>(h - plane + r * n);
    centre[r] = load_vec<V>(h + r * n);
  }
  const bool first_lane = lane_id == 0, last_lane = lane_id == 31;
  auto emit = [&](float* po, const PlaneTaps<V, R, SHFL>& t) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float left, right;
      if constexpr (SHFL) {
        left = __shfl_up_sync(0xffffffffu, lane<V>(centre[r], V - 1), 1);
        right = __shfl_down_sync(0xffffffffu, lane<V>(centre[r], 0), 1);
        if (first_lane) left = t.left[r];
        if (last_lane) right = t.right[r];
      } else {
        left = t.left[r];
        right = t.right[r];
      }
      const T& ym = r > 0 ? centre[r - 1] : t.y_minus;
      const T& yp = r + 1 < R ? centre[r + 1] : t.y_plus;
      T v;
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float l = i > 0 ? lane<V>(centre[r], i > 0 ? i - 1 : 0) : left;
        const float rr = i + 1 < V ? lane<V>(centre[r], i + 1 < V ? i + 1 : 0) : right;
        lane<V>(v, i) = 0.4f * lane<V>(centre[r], i) +
                        0.1f * (l + rr + lane<V>(ym, i) + lane<V>(yp, i) + lane<V>(below[r], i) + lane<V>(t.above[r], i));
      }
      const int y = ys + r;
      if (stores_x && y >= yl && y <= yh) store_out<CS>(reinterpret_cast<T*>(po + r * n), v);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      below[r] = centre[r];
      centre[r] = t.above[r];
    }
  };
  int z = z0;
  for (; z + NB <= z1; z += NB) {
    PlaneTaps<V, R, SHFL> taps[NB];
#pragma unroll
    for (int u = 0; u < NB; ++u) taps[u] = load_plane<V, R, SHFL>(h + u * plane, n, plane, first_lane, last_lane);
#pragma unroll
    for (int u = 0; u < NB; ++u) emit(o + u * plane, taps[u]);
    h += NB * plane;
    o += NB * plane;
  }
  for (; z < z1; ++z) {
    const PlaneTaps<V, R, SHFL> t = load_plane<V, R, SHFL>(h, n, plane, first_lane, last_lane);
    emit(o, t);
    h += plane;
    o += plane;
  }
}

int main(int argc, char** argv) {
  const char* only = argc > 1 ? argv[1] : nullptr; // run only the variants whose name contains it
  warm_clocks();
  for (int n : {256, 512}) {
    const size_t bytes = static_cast<size_t>(n) * n * n * 4;
    Buffers b = make(bytes);
    auto copies = [&](const char* when) { return time_copies(b, n, when); };
    const double memcpy_us = copies("before");
    auto rep = [&](const char* name, int v, const std::function<void(const float*, float*)>& l) {
      report_variant(b, n, memcpy_us, only, 36, name, v, l);
    };
#define ROWS(V, BX, BY, R, NB, SHFL, CS, ZC)                                                                           \
  rep("v" #V " " #BX "x" #BY " R" #R " nb" #NB " shfl" #SHFL " cs" #CS " z" #ZC, V, [&](const float* i, float* o) {  \
    st3_rows<V, R, NB, SHFL, CS><<<dim3(n / (BX * V), n / (BY * R), (n - 2 + ZC - 1) / ZC), dim3(BX, BY)>>>(i, o, n,   \
                                                                                                       ZC);            \
  })
    ROWS(2, 128, 2, 1, 2, 0, 0, 8); // the library's shape (explore_st3 `chunk v2 128x2 nb2 z8`)
    ROWS(2, 64, 4, 1, 2, 0, 0, 8);
    ROWS(2, 128, 2, 1, 2, 0, 1, 8);
    ROWS(2, 128, 2, 1, 2, 1, 0, 8);
    ROWS(2, 128, 2, 1, 2, 1, 1, 8);
    ROWS(2, 128, 1, 2, 2, 0, 0, 8);
    ROWS(2, 128, 1, 2, 2, 1, 0, 8);
    ROWS(2, 128, 1, 2, 2, 1, 1, 8);
    ROWS(2, 64, 2, 2, 2, 1, 0, 8);
    ROWS(2, 128, 1, 4, 1, 1, 0, 8);
    ROWS(2, 128, 1, 4, 2, 1, 0, 8);
    ROWS(2, 64, 2, 4, 1, 1, 0, 8);
    ROWS(2, 128, 1, 2, 2, 1, 0, 4);
    ROWS(2, 128, 1, 2, 2, 1, 0, 16);
    ROWS(4, 32, 4, 1, 2, 1, 0, 8);
    ROWS(4, 64, 2, 2, 1, 1, 0, 8);
    ROWS(4, 64, 2, 2, 2, 1, 0, 8);
    ROWS(4, 32, 4, 2, 2, 1, 0, 4);
    ROWS(4, 64, 1, 4, 1, 1, 0, 8);
    ROWS(4, 64, 2, 2, 1, 1, 1, 8);
    copies("after");
    free_buffers(b);
  }
  print_max_clock();
  return 0;
}
