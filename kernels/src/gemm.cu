// gemm: C[M][N] = A[M][K] * B[K][N] with shared-memory block tiles and a register thread tile
// (docs/pattern-families.md). The thread tile is compiled (the accumulators must live in
// registers); block tile and pad are run-time values.
#include <string>

#include "launchers.hpp"
#include "numeric.cuh"

namespace cachewise::kernels {
namespace {

struct GemmShape {
  long long rows_m, cols_n, depth_k;
  int bm, bn, bk, pad;
};

template <typename T, int TM, int TN> __global__ void gemm_tiled(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, GemmShape s) {
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

  Acc acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0;
  }
  for (long long k0 = 0; k0 < s.depth_k; k0 += s.bk) {
    // One sweep moves an element of each tile per thread: A's, then B's (the model's order).
    for (int idx = t; idx < a_elements || idx < b_elements; idx += threads) {
      if (idx < a_elements) {
        const int r = idx / s.bk, col = idx % s.bk;
        a_tile[r * a_stride + col] = a[(row0 + r) * s.depth_k + k0 + col];
      }
      if (idx < b_elements) {
        const int r = idx / s.bn, col = idx % s.bn;
        b_tile[r * b_stride + col] = b[(k0 + r) * s.cols_n + col0 + col];
      }
    }
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

template <typename T, int TM, int TN> void launch_tiles(const LaunchRequest& request, const GemmShape& shape) {
  const std::int64_t shared_bytes = shared_bytes_per_block(request.pattern);
  allow_shared_bytes(reinterpret_cast<const void*>(&gemm_tiled<T, TM, TN>), shared_bytes);
  gemm_tiled<T, TM, TN><<<to_dim3(request.pattern.grid, "gemm grid"), to_dim3(request.pattern.block, "gemm block"),
                          static_cast<size_t>(shared_bytes), request.stream>>>(
      static_cast<const T*>(request.arrays[0]), static_cast<const T*>(request.arrays[1]),
      static_cast<T*>(request.arrays[2]), shape);
  check_launch("gemm_tiled");
}

/// Compiled thread tiles: tm, tn in {1, 2, 4, 8}.
template <typename T, int TM> void dispatch_tn(const LaunchRequest& request, const GemmShape& shape, std::int64_t tn) {
  switch (tn) {
  case 1: launch_tiles<T, TM, 1>(request, shape); return;
  case 2: launch_tiles<T, TM, 2>(request, shape); return;
  case 4: launch_tiles<T, TM, 4>(request, shape); return;
  case 8: launch_tiles<T, TM, 8>(request, shape); return;
  default: throw InputError("kernels: gemm tn=" + std::to_string(tn) + " has no compiled kernel (compiled: 1, 2, 4, 8)");
  }
}

struct GemmLauncher {
  const LaunchRequest& request;
  template <typename T> void operator()() const {
    const Config& config = request.config;
    const GemmShape shape{request.shape.n,
                          request.shape.m,
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
    default: throw InputError("kernels: gemm tm=" + std::to_string(tm) + " has no compiled kernel (compiled: 1, 2, 4, 8)");
    }
  }
};

} // namespace

void launch_gemm(const LaunchRequest& request) { dispatch_data_type(request.problem.dtype, GemmLauncher{request}); }

} // namespace cachewise::kernels
