// stencil2d (star, radius r) as docs/pattern-families.md defines it, interior points only; f16
// computes in f32.
#include "batched_moves.cuh"
#include "stencil_common.cuh"

namespace cachewise::kernels {
namespace {

/// One output point from its taps at `centre` (row pitch `row`), in the contract's order:
/// centre, then for d = 1..radius left, right, up, down.
template <typename T, int kRadius, typename Acc = typename AccumulatorOf<T>::type>
__device__ __forceinline__ Acc star_point(const T* centre, int row, int runtime_radius) {
  const int radius = kRadius > 0 ? kRadius : runtime_radius;
  Acc sum = weight<Acc>(0) * to_accumulator(centre[0]);
#pragma unroll
  for (int d = 1; d <= (kRadius > 0 ? kRadius : kMaxStencilRadius); ++d) {
    if (kRadius == 0 && d > radius) break;
    const Acc left = to_accumulator(centre[-d]);
    const Acc right = to_accumulator(centre[d]);
    const Acc up = to_accumulator(centre[-d * row]);
    const Acc down = to_accumulator(centre[d * row]);
    sum += weight<Acc>(d) * (left + right + up + down);
  }
  return sum;
}

/// kRadius > 0 fixes the radius at compile time (the taps unroll into constant offsets);
/// 0 takes it from `runtime_radius`. kRows > 0 compiles the thread's rows_per_thread (==
/// kRows) rows: a thread whose rows are all interior computes them unrolled, every row's taps
/// loaded before the first store (measured on the H200: ~12% faster than a rolled loop).
/// Offsets are 32-bit from the thread's first point (the launcher checks they fit).
template <typename T, int kRadius, int kRows>
__global__ void stencil2d_global(const T* __restrict__ in, T* __restrict__ out, long long n, long long m,
                                 int runtime_radius, int rows_per_thread) {
  using Acc = typename AccumulatorOf<T>::type;
  const int radius = kRadius > 0 ? kRadius : runtime_radius;
  const long long x = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x < radius || x >= m - radius) return;
  const long long y_first = static_cast<long long>(blockIdx.y) * blockDim.y * rows_per_thread + threadIdx.y;
  const int row = static_cast<int>(m);
  const int thread_row_step = static_cast<int>(blockDim.y) * row;
  const T* first_centre = in + y_first * m + x;
  T* first_target = out + y_first * m + x;
  if constexpr (kRows > 0) {
    if (y_first >= radius && y_first + static_cast<long long>(kRows - 1) * blockDim.y < n - radius) {
      Acc sums[kRows];
#pragma unroll
      for (int e = 0; e < kRows; ++e) sums[e] = star_point<T, kRadius>(first_centre + e * thread_row_step, row, radius);
#pragma unroll
      for (int e = 0; e < kRows; ++e) first_target[e * thread_row_step] = from_accumulator<T>(sums[e]);
      return;
    }
  }
#pragma unroll 2
  for (int e = 0; e < rows_per_thread; ++e) {
    const long long y = y_first + static_cast<long long>(e) * blockDim.y;
    if (y < radius || y >= n - radius) continue;
    first_target[e * thread_row_step] =
        from_accumulator<T>(star_point<T, kRadius>(first_centre + e * thread_row_step, row, radius));
  }
}

/// Stores a vector thread's outputs at `target` (its point x0): one vector store when all its
/// points are interior columns [radius, m - radius), else one scalar store per interior point,
/// the left-edge and right-edge cases as separate branches (the model lists them so).
template <typename T, int kVector, typename Acc>
__device__ __forceinline__ void store_vector_points(T* target, long long x0, long long m, int radius,
                                                    const Acc (&sums)[kVector]) {
  const long long full_end = m - radius - kVector + 1;
  if (x0 >= radius && x0 < full_end) {
    Packed<T, kVector> packed;
#pragma unroll
    for (int i = 0; i < kVector; ++i) packed.lane[i] = from_accumulator<T>(sums[i]);
    store_packed<T, kVector>(target, packed);
  } else if (x0 < radius) {
#pragma unroll
    for (int i = 0; i < kVector; ++i) {
      if (x0 + i >= radius && x0 + i < m - radius) target[i] = from_accumulator<T>(sums[i]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kVector; ++i) {
      if (x0 + i >= radius && x0 + i < m - radius) target[i] = from_accumulator<T>(sums[i]);
    }
  }
}

/// One row of a vector thread's star points x0 .. x0+kVector-1 at `centre` (its point x0): the
/// centre vector, then for d = 1..radius the scalars x0-d and x0+kVector-1+d (when inside the
/// row) and the vectors d rows up and down -- the model's tap order.
template <typename T, int kRadius, int kVector, typename Acc = typename AccumulatorOf<T>::type>
__device__ __forceinline__ void star_vector_row(const T* centre, long long x0, long long m, int row, int runtime_radius,
                                                Acc (&sums)[kVector]) {
  constexpr int kMaxRadius = kRadius > 0 ? kRadius : kMaxStencilRadius;
  const int radius = kRadius > 0 ? kRadius : runtime_radius;
  const Packed<T, kVector> middle = load_packed<T, kVector>(centre);
  Acc left[kMaxRadius + 1];  // left[d]: x0 - d
  Acc right[kMaxRadius + 1]; // right[d]: x0 + kVector - 1 + d
  Packed<T, kVector> up[kMaxRadius + 1];
  Packed<T, kVector> down[kMaxRadius + 1];
#pragma unroll
  for (int d = 1; d <= kMaxRadius; ++d) {
    if (d > radius) break;
    left[d] = x0 - d >= 0 ? to_accumulator(centre[-d]) : Acc(0);
    right[d] = x0 + kVector - 1 + d < m ? to_accumulator(centre[kVector - 1 + d]) : Acc(0);
    up[d] = load_packed<T, kVector>(centre - d * row);
    down[d] = load_packed<T, kVector>(centre + d * row);
  }
#pragma unroll
  for (int i = 0; i < kVector; ++i) {
    Acc sum = weight<Acc>(0) * to_accumulator(middle.lane[i]);
#pragma unroll
    for (int d = 1; d <= kMaxRadius; ++d) {
      if (d > radius) break;
      const Acc l = i - d >= 0 ? to_accumulator(middle.lane[i - d >= 0 ? i - d : 0]) : left[d - i > 0 ? d - i : 1];
      const Acc r = i + d < kVector ? to_accumulator(middle.lane[i + d < kVector ? i + d : 0])
                                    : right[i + d - kVector + 1 > 0 ? i + d - kVector + 1 : 1];
      sum += weight<Acc>(d) * (l + r + to_accumulator(up[d].lane[i]) + to_accumulator(down[d].lane[i]));
    }
    sums[i] = sum;
  }
}

/// stencil2d smem=0 with `vector` = kVector > 1 points per thread along x (x0 = (bx*block_x +
/// tx)*kVector); rows as stencil2d_global (kRows > 0: interior threads unrolled, loads first).
/// Measured on the H200 (standalone, docs/history.md): 93-95% of copy against 83% for scalars.
template <typename T, int kRadius, int kRows, int kVector>
__global__ void stencil2d_vector(const T* __restrict__ in, T* __restrict__ out, long long n, long long m,
                                 int runtime_radius, int rows_per_thread) {
  using Acc = typename AccumulatorOf<T>::type;
  const int radius = kRadius > 0 ? kRadius : runtime_radius;
  const long long x0 = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * kVector;
  if (x0 >= m) return;
  const long long y_first = static_cast<long long>(blockIdx.y) * blockDim.y * rows_per_thread + threadIdx.y;
  const int row = static_cast<int>(m);
  const int thread_row_step = static_cast<int>(blockDim.y) * row;
  const T* first_centre = in + y_first * m + x0;
  T* first_target = out + y_first * m + x0;
  if constexpr (kRows > 0) {
    if (y_first >= radius && y_first + static_cast<long long>(kRows - 1) * blockDim.y < n - radius) {
      Acc sums[kRows][kVector];
#pragma unroll
      for (int e = 0; e < kRows; ++e) {
        star_vector_row<T, kRadius, kVector>(first_centre + e * thread_row_step, x0, m, row, radius, sums[e]);
      }
      // The vector-or-edge choice depends on x0 alone: taken once, so nvcc keeps the vector stores
      // (inside the row loop it turned them into one STG.32 per lane).
      if (x0 >= radius && x0 < m - radius - kVector + 1) {
#pragma unroll
        for (int e = 0; e < kRows; ++e) {
          Packed<T, kVector> packed;
#pragma unroll
          for (int i = 0; i < kVector; ++i) packed.lane[i] = from_accumulator<T>(sums[e][i]);
          store_packed<T, kVector>(first_target + e * thread_row_step, packed);
        }
      } else {
#pragma unroll
        for (int e = 0; e < kRows; ++e)
          store_vector_points<T, kVector>(first_target + e * thread_row_step, x0, m, radius, sums[e]);
      }
      return;
    }
  }
  for (int e = 0; e < rows_per_thread; ++e) {
    const long long y = y_first + static_cast<long long>(e) * blockDim.y;
    if (y < radius || y >= n - radius) continue;
    Acc sums[kVector];
    star_vector_row<T, kRadius, kVector>(first_centre + e * thread_row_step, x0, m, row, radius, sums);
    store_vector_points<T, kVector>(first_target + e * thread_row_step, x0, m, radius, sums);
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
  // The sweep's (row, col) = (idx / tile_w, idx % tile_w), advanced without a division per
  // element: idx grows by `threads`, i.e. by whole_rows rows and extra_cols columns.
  const int whole_rows = threads / tile_w;
  const int extra_cols = threads % tile_w;
  int tile_row = linear_thread / tile_w;
  int tile_col = linear_thread % tile_w;
  const int row = static_cast<int>(m);
  const T* tile_origin = in + (y0 - radius) * m + (x0 - radius);
  batched_moves<T>((tile_elements - linear_thread + threads - 1) / threads,
                   [&](int, T& value) {
                     const long long gy = y0 - radius + tile_row;
                     const long long gx = x0 - radius + tile_col;
                     const int offset = tile_row * row + tile_col;
                     tile_col += extra_cols;
                     tile_row += whole_rows;
                     if (tile_col >= tile_w) {
                       tile_col -= tile_w;
                       ++tile_row;
                     }
                     if (gy < 0 || gy >= n || gx < 0 || gx >= m) return false;
                     value = tile_origin[offset];
                     return true;
                   },
                   [&](int i, const T& value) { tile[linear_thread + i * threads] = value; });
  __syncthreads();
  const long long x = x0 + threadIdx.x;
  if (x < radius || x >= m - radius) return;
  for (int e = 0; e < rows_per_thread; ++e) {
    const int local_y = e * blockDim.y + threadIdx.y + radius;
    const long long y = y0 + local_y - radius;
    if (y < radius || y >= n - radius) continue;
    const T* centre = tile + local_y * tile_w + threadIdx.x + radius;
    Acc sum = weight<Acc>(0) * to_accumulator(centre[0]);
#pragma unroll 4
    for (int d = 1; d <= radius; ++d) {
      sum += weight<Acc>(d) * (to_accumulator(centre[-d]) + to_accumulator(centre[d]) +
                               to_accumulator(centre[-d * tile_w]) + to_accumulator(centre[d * tile_w]));
    }
    out[y * m + x] = from_accumulator<T>(sum);
  }
}

struct Stencil2dLauncher {
  const LaunchRequest& request;

  /// vector > 1 (the model admits it with smem=0 only, at most 16 bytes): radius 1 and the
  /// advisor's ept_y values are compiled.
  template <typename T, int kVector, typename Launch>
  void launch_vector(const Launch& launch, int rows_per_thread) const {
    if constexpr (kVector * sizeof(T) <= 16) {
      if (request.shape.stencil_radius != 1) {
        launch(stencil2d_vector<T, 0, 0, kVector>);
      } else {
        switch (rows_per_thread) {
        case 1: launch(stencil2d_vector<T, 1, 1, kVector>); break;
        case 2: launch(stencil2d_vector<T, 1, 2, kVector>); break;
        case 4: launch(stencil2d_vector<T, 1, 4, kVector>); break;
        case 8: launch(stencil2d_vector<T, 1, 8, kVector>); break;
        default: launch(stencil2d_vector<T, 1, 0, kVector>); break;
        }
      }
      check_launch("stencil2d_vector");
    } else {
      throw InputError("kernels: stencil2d vector=" + std::to_string(kVector) + " exceeds 16 bytes");
    }
  }

  template <typename T>
  void operator()() const {
    const auto* in = static_cast<const T*>(request.arrays[0]);
    auto* out = static_cast<T*>(request.arrays[1]);
    const dim3 grid = to_dim3(request.pattern.grid, "stencil2d grid");
    const dim3 block = to_dim3(request.pattern.block, "stencil2d block");
    const int rows_per_thread = static_cast<int>(request.config.get("ept_y"));
    const auto& shape = request.shape;
    // Offsets reach across a block's rows plus the halo (from a thread's first point, or from
    // the shared tile's origin).
    const std::int64_t halo = 2 * shape.stencil_radius;
    require_int32_offsets((rows_per_thread * request.pattern.block.y + halo) * shape.m + request.pattern.block.x + halo,
                          "a stencil2d block's rows");
    const auto launch = [&](auto kernel) {
      kernel<<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, shape.stencil_radius, rows_per_thread);
    };
    switch (request.config.get_or("vector", 1)) {
    case 2: launch_vector<T, 2>(launch, rows_per_thread); return;
    case 4: launch_vector<T, 4>(launch, rows_per_thread); return;
    case 8: launch_vector<T, 8>(launch, rows_per_thread); return;
    default: break;
    }
    if (request.config.get("smem") == 0) {
      if (shape.stencil_radius != 1) {
        launch(stencil2d_global<T, 0, 0>);
      } else {
        switch (rows_per_thread) { // the advisor's ept_y values are compiled
        case 1: launch(stencil2d_global<T, 1, 1>); break;
        case 2: launch(stencil2d_global<T, 1, 2>); break;
        case 4: launch(stencil2d_global<T, 1, 4>); break;
        case 8: launch(stencil2d_global<T, 1, 8>); break;
        default: launch(stencil2d_global<T, 1, 0>); break;
        }
      }
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

} // namespace

void launch_stencil2d(const LaunchRequest& request) {
  upload_stencil_weights();
  dispatch_data_type(request.problem.dtype, Stencil2dLauncher{request});
}

} // namespace cachewise::kernels
