// gemm: C[M][N] = A[M][K] * B[K][N] with shared-memory block tiles and a register thread tile
// (docs/pattern-families.md). The thread tile is compiled (the accumulators must live in
// registers); block tile and pad are run-time values.
#include <string>

#include "batched_moves.cuh"
#include "launchers.hpp"
#include "numeric.cuh"

namespace cachewise::kernels {
namespace {

struct GemmShape {
  long long cols_n, depth_k; ///< N and K (M is the grid's rows of blocks)
  int bm, bn, bk, pad;
};

/// How a tile sweep's idx = t + s*threads moves per step s in (row, col) = (idx / width,
/// idx % width): by whole_rows rows and extra_cols columns, plus a carry.
struct SweepStep {
  int width, whole_rows, extra_cols;
};

/// One thread's position in a tile sweep, advanced without a division per element.
struct SweepCursor {
  int row, col;
  __device__ __forceinline__ void advance(const SweepStep& step) {
    row += step.whole_rows;
    col += step.extra_cols;
    if (col >= step.width) {
      col -= step.width;
      ++row;
    }
  }
};

/// Elements of a sweep over `elements` that thread t moves: idx = t, t + threads, ...
__device__ __forceinline__ int sweep_elements_of(int t, int elements, int threads) {
  return t < elements ? (elements - t + threads - 1) / threads : 0;
}

/// One function on purpose (86 lines): moving the inner product and the epilogue into inline
/// helpers reorders ptxas's schedule and changes its registers (f64 4x4: 82 -> 96, f32 4x2:
/// 52 -> 55), which the model reads from model/data/kernel_facts_sm90.json.
template <typename T, int TM, int TN>
__global__ void gemm_tiled(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, GemmShape s) {
  using Acc = typename AccumulatorOf<T>::type;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  const int a_stride = s.bk + s.pad;
  const int b_stride = s.bn + s.pad;
  T* a_tile = reinterpret_cast<T*>(shared_raw);
  T* b_tile = a_tile + s.bm * a_stride;
  const int threads = blockDim.x * blockDim.y * blockDim.z;
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int tx = t % (s.bn / TN);
  const int ty = t / (s.bn / TN);
  const long long row0 = static_cast<long long>(blockIdx.y) * s.bm;
  const long long col0 = static_cast<long long>(blockIdx.x) * s.bn;
  const int a_elements = s.bm * s.bk;
  const int b_elements = s.bk * s.bn;
  const SweepStep a_sweep{s.bk, threads / s.bk, threads % s.bk};
  const SweepStep b_sweep{s.bn, threads / s.bn, threads % s.bn};
  const SweepCursor a_first{t / s.bk, t % s.bk};
  const SweepCursor b_first{t / s.bn, t % s.bn};
  // The thread's loads in the contract's order: A's and B's element of each sweep step
  // alternate while both tiles have one for it, then only the larger tile's remain.
  const int a_count = sweep_elements_of(t, a_elements, threads);
  const int b_count = sweep_elements_of(t, b_elements, threads);
  const int alternating = 2 * min(a_count, b_count);
  const bool b_outlasts_a = b_count > a_count;
  const auto from_b = [&](int e) { return e < alternating ? (e & 1) != 0 : b_outlasts_a; };

  Acc acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0;
  }
  const T* a_rows = a + row0 * s.depth_k; // A[row0][0]
  const T* b_cols = b + col0;             // B[0][col0]
  for (long long k0 = 0; k0 < s.depth_k; k0 += s.bk) {
    // kMoveBatch loads in flight per thread, then their shared stores (the model's rounds).
    // batched_moves loads, and stores, by increasing e: each side walks its own cursors.
    SweepCursor a_load = a_first, b_load = b_first, a_store = a_first, b_store = b_first;
    const T* a_step = a_rows + k0;            // A[row0][k0]
    const T* b_step = b_cols + k0 * s.cols_n; // B[k0][col0]
    batched_moves<T>(
        a_count + b_count,
        [&](int e, T& value) {
          if (from_b(e)) {
            value = b_step[static_cast<long long>(b_load.row) * s.cols_n + b_load.col];
            b_load.advance(b_sweep);
          } else {
            value = a_step[static_cast<long long>(a_load.row) * s.depth_k + a_load.col];
            a_load.advance(a_sweep);
          }
          return true;
        },
        [&](int e, const T& value) {
          if (from_b(e)) {
            b_tile[b_store.row * b_stride + b_store.col] = value;
            b_store.advance(b_sweep);
          } else {
            a_tile[a_store.row * a_stride + a_store.col] = value;
            a_store.advance(a_sweep);
          }
        });
    __syncthreads();
    for (int kk = 0; kk < s.bk; ++kk) {
      Acc a_values[TM];
      Acc b_values[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a_values[i] = to_accumulator(a_tile[(ty * TM + i) * a_stride + kk]);
#pragma unroll
      for (int j = 0; j < TN; ++j) b_values[j] = to_accumulator(b_tile[kk * b_stride + tx * TN + j]);
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a_values[i] * b_values[j];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      c[(row0 + ty * TM + i) * s.cols_n + col0 + tx * TN + j] = from_accumulator<T>(acc[i][j]);
    }
  }
}

template <typename T, int TM, int TN>
void launch_tiles(const LaunchRequest& request, const GemmShape& shape) {
  const std::int64_t shared_bytes = shared_bytes_per_block(request.pattern);
  allow_shared_bytes(reinterpret_cast<const void*>(&gemm_tiled<T, TM, TN>), shared_bytes);
  gemm_tiled<T, TM, TN><<<to_dim3(request.pattern.grid, "gemm grid"), to_dim3(request.pattern.block, "gemm block"),
                          static_cast<size_t>(shared_bytes), request.stream>>>(
      static_cast<const T*>(request.arrays[0]), static_cast<const T*>(request.arrays[1]),
      static_cast<T*>(request.arrays[2]), shape);
  check_launch("gemm_tiled");
}

/// Compiled thread tiles: tm, tn in {1, 2, 4, 8}.
template <typename T, int TM>
void dispatch_tn(const LaunchRequest& request, const GemmShape& shape, std::int64_t tn) {
  switch (tn) {
  case 1: launch_tiles<T, TM, 1>(request, shape); return;
  case 2: launch_tiles<T, TM, 2>(request, shape); return;
  case 4: launch_tiles<T, TM, 4>(request, shape); return;
  case 8: launch_tiles<T, TM, 8>(request, shape); return;
  default:
    throw InputError("kernels: gemm tn=" + std::to_string(tn) + " has no compiled kernel (compiled: 1, 2, 4, 8)");
  }
}

struct GemmLauncher {
  const LaunchRequest& request;
  template <typename T>
  void operator()() const {
    const Config& config = request.config;
    const GemmShape shape{request.shape.m,
                          request.shape.k,
                          static_cast<int>(config.get("bm")),
                          static_cast<int>(config.get("bn")),
                          static_cast<int>(config.get("bk")),
                          static_cast<int>(config.get_or("pad", 0))};
    const std::int64_t tn = config.get("tn");
    switch (const std::int64_t tm = config.get("tm")) {
    case 1: dispatch_tn<T, 1>(request, shape, tn); return;
    case 2: dispatch_tn<T, 2>(request, shape, tn); return;
    case 4: dispatch_tn<T, 4>(request, shape, tn); return;
    case 8: dispatch_tn<T, 8>(request, shape, tn); return;
    default:
      throw InputError("kernels: gemm tm=" + std::to_string(tm) + " has no compiled kernel (compiled: 1, 2, 4, 8)");
    }
  }
};

} // namespace

void launch_gemm(const LaunchRequest& request) { dispatch_data_type(request.problem.dtype, GemmLauncher{request}); }

} // namespace cachewise::kernels
