// stencil2d (star, radius r) and stencil3d (7-point) as docs/pattern-families.md defines
// them, interior points only; f16 computes in f32.
#include "batched_moves.cuh"
#include "cuda_check.hpp"
#include "launchers.hpp"
#include "numeric.cuh"

namespace cachewise::kernels {
namespace {

// Weights live in constant memory: a weight array passed by value and indexed by the run-time
// distance d would be copied to local memory by every thread (seen on the H200: 30x the L2
// write traffic of the output).
__constant__ float weights_f32[kMaxStencilRadius + 1];
__constant__ double weights_f64[kMaxStencilRadius + 1];

template <typename Acc> __device__ __forceinline__ Acc weight(int distance) {
  if constexpr (std::is_same_v<Acc, double>) {
    return weights_f64[distance];
  } else {
    return weights_f32[distance];
  }
}

void upload_stencil_weights() {
  static const bool uploaded = [] {
    double f64[kMaxStencilRadius + 1];
    float f32[kMaxStencilRadius + 1];
    for (int d = 0; d <= kMaxStencilRadius; ++d) {
      f64[d] = stencil_coefficient(d);
      f32[d] = static_cast<float>(f64[d]);
    }
    check_cuda(cudaMemcpyToSymbol(weights_f64, f64, sizeof(f64)), "cudaMemcpyToSymbol(stencil weights)");
    check_cuda(cudaMemcpyToSymbol(weights_f32, f32, sizeof(f32)), "cudaMemcpyToSymbol(stencil weights)");
    return true;
  }();
  (void)uploaded;
}

template <typename T>
__global__ void stencil2d_global(const T* __restrict__ in, T* __restrict__ out, long long n, long long m, int radius,
                                 int rows_per_thread) {
  using Acc = typename AccumulatorOf<T>::type;
  const long long x = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int e = 0; e < rows_per_thread; ++e) {
    const long long y = static_cast<long long>(blockIdx.y) * blockDim.y * rows_per_thread + e * blockDim.y + threadIdx.y;
    if (y < radius || y >= n - radius || x < radius || x >= m - radius) continue;
    const T* centre = in + y * m + x;
    Acc sum = weight<Acc>(0) * to_accumulator(centre[0]);
#pragma unroll 4
    for (int d = 1; d <= radius; ++d) {
      const Acc left = to_accumulator(centre[-d]);
      const Acc right = to_accumulator(centre[d]);
      const Acc up = to_accumulator(centre[-d * m]);
      const Acc down = to_accumulator(centre[d * m]);
      sum += weight<Acc>(d) * (left + right + up + down);
    }
    out[y * m + x] = from_accumulator<T>(sum);
  }
}

template <typename T>
__global__ void stencil2d_shared(const T* __restrict__ in, T* __restrict__ out, long long n, long long m, int radius,
                                 int rows_per_thread) {
  using Acc = typename AccumulatorOf<T>::type;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* tile = reinterpret_cast<T*>(shared_raw);
  const int tile_w = blockDim.x + 2 * radius;
  const int tile_h = blockDim.y * rows_per_thread + 2 * radius;
  const long long x0 = static_cast<long long>(blockIdx.x) * blockDim.x;
  const long long y0 = static_cast<long long>(blockIdx.y) * blockDim.y * rows_per_thread;
  const int threads = blockDim.x * blockDim.y;
  const int linear_thread = threadIdx.y * blockDim.x + threadIdx.x;
  const int tile_elements = tile_h * tile_w;
  batched_moves<T>(
      (tile_elements - linear_thread + threads - 1) / threads,
      [&](int i, T& value) {
        const int idx = linear_thread + i * threads;
        const long long gy = y0 - radius + idx / tile_w;
        const long long gx = x0 - radius + idx % tile_w;
        if (gy < 0 || gy >= n || gx < 0 || gx >= m) return false;
        value = in[gy * m + gx];
        return true;
      },
      [&](int i, const T& value) { tile[linear_thread + i * threads] = value; });
  __syncthreads();
  const long long x = x0 + threadIdx.x;
  for (int e = 0; e < rows_per_thread; ++e) {
    const int local_y = e * blockDim.y + threadIdx.y + radius;
    const long long y = y0 + local_y - radius;
    if (y < radius || y >= n - radius || x < radius || x >= m - radius) continue;
    const T* centre = tile + local_y * tile_w + threadIdx.x + radius;
    Acc sum = weight<Acc>(0) * to_accumulator(centre[0]);
#pragma unroll 4
    for (int d = 1; d <= radius; ++d) {
      sum += weight<Acc>(d) *
             (to_accumulator(centre[-d]) + to_accumulator(centre[d]) + to_accumulator(centre[-d * tile_w]) +
              to_accumulator(centre[d * tile_w]));
    }
    out[y * m + x] = from_accumulator<T>(sum);
  }
}

/// Volume is k planes of n rows of m points; index (z*n + y)*m + x.
template <typename T>
__global__ void stencil3d_blocked(const T* __restrict__ in, T* __restrict__ out, long long n, long long m, long long k) {
  using Acc = typename AccumulatorOf<T>::type;
  const long long x = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long y = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  const long long z = static_cast<long long>(blockIdx.z) * blockDim.z + threadIdx.z;
  if (x < 1 || x >= m - 1 || y < 1 || y >= n - 1 || z < 1 || z >= k - 1) return;
  const long long plane = n * m;
  const T* centre = in + (z * n + y) * m + x;
  const Acc neighbours = to_accumulator(centre[-1]) + to_accumulator(centre[1]) + to_accumulator(centre[-m]) +
                         to_accumulator(centre[m]) + to_accumulator(centre[-plane]) + to_accumulator(centre[plane]);
  out[(z * n + y) * m + x] = from_accumulator<T>(weight<Acc>(0) * to_accumulator(centre[0]) +
                                                 weight<Acc>(1) * neighbours);
}

/// 2.5D: each thread walks z_chunk planes of its (x, y) column from z0, keeping z-1, z, z+1 in
/// registers: in[z0-1] and in[z0] before the first plane, then per plane in[z+1] and the four
/// in-plane neighbours (the loads the model lists, in its order).
template <typename T>
__global__ void stencil3d_streaming(const T* __restrict__ in, T* __restrict__ out, long long n, long long m, long long k,
                                    int z_chunk) {
  using Acc = typename AccumulatorOf<T>::type;
  const long long x = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long y = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (x < 1 || x >= m - 1 || y < 1 || y >= n - 1) return;
  const long long plane = n * m;
  const T* column = in + y * m + x;
  const long long z0 = static_cast<long long>(blockIdx.z) * z_chunk;
  Acc below = z0 >= 1 && z0 - 1 < k ? to_accumulator(column[(z0 - 1) * plane]) : Acc(0);
  Acc centre = z0 < k ? to_accumulator(column[z0 * plane]) : Acc(0);
  const Acc c0 = weight<Acc>(0);
  const Acc c1 = weight<Acc>(1);
  const long long z_end = min(z0 + z_chunk, k);
  for (long long z = z0; z < z_end; ++z) {
    const T* here = column + z * plane;
    const Acc above = z + 1 < k ? to_accumulator(here[plane]) : Acc(0);
    if (z >= 1 && z < k - 1) {
      const Acc in_plane = to_accumulator(here[-1]) + to_accumulator(here[1]) + to_accumulator(here[-m]) +
                           to_accumulator(here[m]);
      out[z * plane + y * m + x] = from_accumulator<T>(c0 * centre + c1 * (in_plane + below + above));
    }
    below = centre;
    centre = above;
  }
}

struct Stencil2dLauncher {
  const LaunchRequest& request;
  template <typename T> void operator()() const {
    const auto* in = static_cast<const T*>(request.arrays[0]);
    auto* out = static_cast<T*>(request.arrays[1]);
    const dim3 grid = to_dim3(request.pattern.grid, "stencil2d grid");
    const dim3 block = to_dim3(request.pattern.block, "stencil2d block");
    const int rows_per_thread = static_cast<int>(request.config.get("ept_y"));
    const auto& shape = request.shape;
    if (request.config.get("smem") == 0) {
      stencil2d_global<T><<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, shape.stencil_radius,
                                                              rows_per_thread);
      check_launch("stencil2d_global");
      return;
    }
    const std::int64_t shared_bytes = shared_bytes_per_block(request.pattern);
    allow_shared_bytes(reinterpret_cast<const void*>(&stencil2d_shared<T>), shared_bytes);
    stencil2d_shared<T><<<grid, block, static_cast<size_t>(shared_bytes), request.stream>>>(
        in, out, shape.n, shape.m, shape.stencil_radius, rows_per_thread);
    check_launch("stencil2d_shared");
  }
};

struct Stencil3dLauncher {
  const LaunchRequest& request;
  template <typename T> void operator()() const {
    const auto* in = static_cast<const T*>(request.arrays[0]);
    auto* out = static_cast<T*>(request.arrays[1]);
    const dim3 grid = to_dim3(request.pattern.grid, "stencil3d grid");
    const dim3 block = to_dim3(request.pattern.block, "stencil3d block");
    const auto& shape = request.shape;
    if (request.config.get("mode") == 0) {
      stencil3d_blocked<T><<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, shape.k);
      check_launch("stencil3d_blocked");
      return;
    }
    stencil3d_streaming<T><<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, shape.k,
                                                               static_cast<int>(request.config.get("z_chunk")));
    check_launch("stencil3d_streaming");
  }
};

} // namespace

void launch_stencil2d(const LaunchRequest& request) {
  upload_stencil_weights();
  dispatch_data_type(request.problem.dtype, Stencil2dLauncher{request});
}
void launch_stencil3d(const LaunchRequest& request) {
  upload_stencil_weights();
  dispatch_data_type(request.problem.dtype, Stencil3dLauncher{request});
}

} // namespace cachewise::kernels
