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
    first_target[e * thread_row_step] = from_accumulator<T>(star_point<T, kRadius>(first_centre + e * thread_row_step, row, radius));
  }
}

/// `kVector` elements moved as one access (the `vector` key): aligned to its whole width.
template <typename T, int kVector> struct alignas(sizeof(T) * kVector) Packed {
  T lane[kVector];
};

/// The vector moves as one native word of its width. Stores go through inline PTX: nvcc split
/// plain vector stores into one STG.32 per lane when the edge branch stores the same points one
/// by one (CUPTI counted 3-4x the store requests the contract describes).
template <typename T, int kVector> using PackedWord = typename WordOfBytes<sizeof(T) * kVector>::type;

__device__ __forceinline__ void store_word(unsigned int* address, unsigned int word) {
  asm volatile("st.global.b32 [%0], %1;" ::"l"(address), "r"(word) : "memory");
}
__device__ __forceinline__ void store_word(uint2* address, uint2 word) {
  asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(address), "r"(word.x), "r"(word.y) : "memory");
}
__device__ __forceinline__ void store_word(uint4* address, uint4 word) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(address), "r"(word.x), "r"(word.y), "r"(word.z),
               "r"(word.w)
               : "memory");
}

template <typename T, int kVector> __device__ __forceinline__ Packed<T, kVector> load_packed(const T* address) {
  const PackedWord<T, kVector> word = *reinterpret_cast<const PackedWord<T, kVector>*>(address);
  Packed<T, kVector> packed;
  memcpy(&packed, &word, sizeof(word));
  return packed;
}

template <typename T, int kVector> __device__ __forceinline__ void store_packed(T* address, const Packed<T, kVector>& packed) {
  PackedWord<T, kVector> word;
  memcpy(&word, &packed, sizeof(word));
  store_word(reinterpret_cast<PackedWord<T, kVector>*>(address), word);
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
        for (int e = 0; e < kRows; ++e) store_vector_points<T, kVector>(first_target + e * thread_row_step, x0, m, radius, sums[e]);
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
  batched_moves<T>(
      (tile_elements - linear_thread + threads - 1) / threads,
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
      sum += weight<Acc>(d) *
             (to_accumulator(centre[-d]) + to_accumulator(centre[d]) + to_accumulator(centre[-d * tile_w]) +
              to_accumulator(centre[d * tile_w]));
    }
    out[y * m + x] = from_accumulator<T>(sum);
  }
}

/// Volume is k planes of n rows of m points; index (z*n + y)*m + x. Offsets from the centre
/// are 32-bit (the launcher checks a plane fits). Every interior row (y and z interior) is
/// written whole: its border points x = 0 and x = m-1 carry in[] through. Left unwritten, they
/// would leave the row's first and last sectors written in part, which L2 merges with a DRAM
/// read (H200: about +10% time at 256^3, +3-8% at 512^3).
template <typename T>
__global__ void stencil3d_blocked(const T* __restrict__ in, T* __restrict__ out, long long n, long long m, long long k) {
  using Acc = typename AccumulatorOf<T>::type;
  const long long x = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long y = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  const long long z = static_cast<long long>(blockIdx.z) * blockDim.z + threadIdx.z;
  if (x >= m || y < 1 || y >= n - 1 || z < 1 || z >= k - 1) return;
  const int row = static_cast<int>(m);
  const int plane = static_cast<int>(n * m);
  const long long offset = (z * n + y) * m + x;
  const T* centre = in + offset;
  // A border point loads its taps too (x-1 of x = 0 and x+1 of x = m-1 are the neighbouring
  // rows' ends, inside the array): one select at the end, no branch around the loads.
  const Acc neighbours = to_accumulator(centre[-1]) + to_accumulator(centre[1]) + to_accumulator(centre[-row]) +
                         to_accumulator(centre[row]) + to_accumulator(centre[-plane]) + to_accumulator(centre[plane]);
  const bool inside = x >= 1 && x < m - 1;
  out[offset] = inside ? from_accumulator<T>(weight<Acc>(0) * to_accumulator(centre[0]) + weight<Acc>(1) * neighbours)
                       : centre[0];
}

/// Planes per batch of the streaming kernels' interior paths: z_chunk values that are multiples
/// of it load this many planes' taps before storing their outputs. The vector kernel's taps are
/// wider: 2 planes keep it at 32-66 registers (8 took 127-246, too many for large blocks).
inline constexpr int kStreamingPlaneBatch = 8;
inline constexpr int kVectorPlaneBatch = 2;

/// Registers per thread of stencil3d_streaming_vector, the model's `registers_per_thread` for
/// it (model/src/families.cpp): with both walk directions compiled ptxas took f32 vector 2 from
/// 32 to 34-48 registers: 6 blocks of 256 threads per SM instead of 8, up to 28% slower (H200).
template <typename T, int kVector> constexpr int vector_walk_registers() {
  return sizeof(T) > 4 || kVector > 4 ? 56 : kVector == 4 ? 40 : 32;
}

/// The planes a 2.5D chunk writes: [first, end) = [max(z0, 1), min(z0 + z_chunk, k - 1)).
struct WrittenPlanes {
  long long first, end;
};
__device__ __forceinline__ WrittenPlanes written_planes(long long z0, int z_chunk, long long k) {
  return {z0 >= 1 ? z0 : 1, min(z0 + z_chunk, k - 1)};
}

/// 2.5D: each thread walks the planes its chunk writes, keeping z-1, z, z+1 in registers:
/// in[first-1] and in[first] first, then per plane in[z+1] and the four in-plane neighbours
/// (the loads the model lists, in its order; for the bottom chunk in[0], in[1] are the model's
/// in[z0] and its first in[z+1]). The border columns x = 0 and x = m-1 walk and load too,
/// storing their centre (stencil3d_blocked says why; predicating their in-plane loads away took
/// ptxas from 34 to 56 registers in the batched f32 loop). kBatch > 0 (z_chunk a multiple of
/// it): whole batches of kBatch planes load all their taps before their stores (5 x kBatch loads
/// in flight instead of ~5), the planes left over one by one -- edge chunks batch too, so they
/// do not outlast the others in the last wave.
template <typename T, int kBatch>
__global__ void stencil3d_streaming(const T* __restrict__ in, T* __restrict__ out, long long n, long long m, long long k,
                                    int z_chunk) {
  using Acc = typename AccumulatorOf<T>::type;
  const long long x = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long y = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (x >= m || y < 1 || y >= n - 1) return;
  const bool inside = x >= 1 && x < m - 1;
  const int row = static_cast<int>(m);
  const int plane = static_cast<int>(n * m);
  const WrittenPlanes planes = written_planes(static_cast<long long>(blockIdx.z) * z_chunk, z_chunk, k);
  if (planes.first >= planes.end) return;
  const long long first_offset = planes.first * n * m + y * m + x;
  const T* here = in + first_offset;
  T* target = out + first_offset;
  Acc below = to_accumulator(here[-plane]);
  Acc centre = to_accumulator(here[0]);
  const Acc c0 = weight<Acc>(0);
  const Acc c1 = weight<Acc>(1);
  // The output at the window's centre: the stencil inside, the centre itself on a border column.
  const auto output = [&](Acc in_plane, Acc above) {
    return from_accumulator<T>(inside ? c0 * centre + c1 * (in_plane + below + above) : centre);
  };
  const auto in_plane_sum = [&](const T* p) {
    return to_accumulator(p[-1]) + to_accumulator(p[1]) + to_accumulator(p[-row]) + to_accumulator(p[row]);
  };
  int left = static_cast<int>(planes.end - planes.first);
  if constexpr (kBatch > 0) {
    for (; left >= kBatch; left -= kBatch) {
      Acc above[kBatch];
      Acc in_plane[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const T* p = here + static_cast<long long>(u) * plane;
        above[u] = to_accumulator(p[plane]);
        in_plane[u] = in_plane_sum(p);
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        target[static_cast<long long>(u) * plane] = output(in_plane[u], above[u]);
        below = centre;
        centre = above[u];
      }
      here += static_cast<long long>(kBatch) * plane;
      target += static_cast<long long>(kBatch) * plane;
    }
  }
#pragma unroll 4
  for (; left > 0; --left) {
    const Acc above = to_accumulator(here[plane]);
    target[0] = output(in_plane_sum(here), above);
    below = centre;
    centre = above;
    here += plane;
    target += plane;
  }
}

/// One thread's walk through its chunk's planes in the direction kStep (+1 up, -1 down), from
/// the plane `here` points at, keeping the planes behind, at and ahead of it in registers.
/// Offsets within a batch stay 32-bit (u * step is within a plane) and the pointers move a
/// plane at a time: with 64-bit offsets the f32 vector-2 batch ran 1-4% slower (H200).
template <typename T, int kVector, int kStep>
__device__ __forceinline__ void stencil3d_walk_vector(const T* __restrict__ here, T* __restrict__ target, int plane,
                                                      int row, int planes, bool batched, bool has_left,
                                                      bool has_right) {
  using Acc = typename AccumulatorOf<T>::type;
  using Pack = Packed<T, kVector>;
  const int step = kStep * plane;
  Pack behind = load_packed<T, kVector>(here - step);
  Pack centre = load_packed<T, kVector>(here);
  const Acc c0 = weight<Acc>(0);
  const Acc c1 = weight<Acc>(1);
  // The outputs of one plane from its loaded taps; then the window moves on.
  const auto emit = [&](T* plane_target, const Pack& ahead, Acc left, Acc right, const Pack& y_minus, const Pack& y_plus) {
    Pack result;
#pragma unroll
    for (int i = 0; i < kVector; ++i) {
      const Acc l = i > 0 ? to_accumulator(centre.lane[i > 0 ? i - 1 : 0]) : left;
      const Acc r = i + 1 < kVector ? to_accumulator(centre.lane[i + 1 < kVector ? i + 1 : 0]) : right;
      const bool border = (i == 0 && !has_left) || (i == kVector - 1 && !has_right);
      result.lane[i] = border ? centre.lane[i]
                              : from_accumulator<T>(c0 * to_accumulator(centre.lane[i]) +
                                                    c1 * (l + r + to_accumulator(y_minus.lane[i]) +
                                                          to_accumulator(y_plus.lane[i]) + to_accumulator(behind.lane[i]) +
                                                          to_accumulator(ahead.lane[i])));
    }
    store_packed<T, kVector>(plane_target, result);
  };
  int left_planes = planes;
  if (batched) {
    for (; left_planes >= kVectorPlaneBatch; left_planes -= kVectorPlaneBatch) {
      Pack ahead[kVectorPlaneBatch];
      Pack y_minus[kVectorPlaneBatch];
      Pack y_plus[kVectorPlaneBatch];
      Acc left[kVectorPlaneBatch];
      Acc right[kVectorPlaneBatch];
#pragma unroll
      for (int u = 0; u < kVectorPlaneBatch; ++u) {
        const T* p = here + u * step;
        ahead[u] = load_packed<T, kVector>(p + step);
        left[u] = has_left ? to_accumulator(p[-1]) : Acc(0);
        right[u] = has_right ? to_accumulator(p[kVector]) : Acc(0);
        y_minus[u] = load_packed<T, kVector>(p - row);
        y_plus[u] = load_packed<T, kVector>(p + row);
      }
#pragma unroll
      for (int u = 0; u < kVectorPlaneBatch; ++u) {
        emit(target + u * step, ahead[u], left[u], right[u], y_minus[u], y_plus[u]);
        behind = centre;
        centre = ahead[u];
      }
#pragma unroll
      for (int u = 0; u < kVectorPlaneBatch; ++u) {
        here += step;
        target += step;
      }
    }
  }
  for (; left_planes > 0; --left_planes) {
    const Pack ahead = load_packed<T, kVector>(here + step);
    const Acc left = has_left ? to_accumulator(here[-1]) : Acc(0);
    const Acc right = has_right ? to_accumulator(here[kVector]) : Acc(0);
    const Pack y_minus = load_packed<T, kVector>(here - row);
    const Pack y_plus = load_packed<T, kVector>(here + row);
    emit(target, ahead, left, right, y_minus, y_plus);
    behind = centre;
    centre = ahead;
    here += step;
    target += step;
  }
}

/// 2.5D streaming with kVector > 1 points per thread along x (x0 = (bx*block_x + tx)*kVector):
/// per plane the vector in[z+1], the scalars x0-1 and x0+kVector (inside the row) and the y
/// neighbours as vectors, in the model's order; one vector store per plane, the border points
/// x = 0 and x = m-1 carrying their centre (stencil3d_blocked says why). Planes as
/// stencil3d_streaming, in batches of kVectorPlaneBatch. Odd chunks walk down: neighbouring
/// chunks then read the planes they share at the same time (both at their start or both at
/// their end), not a whole chunk apart, so L2 still holds them the second time (H200, 256^3 in
/// 32-plane chunks: 70.8 -> 67.2 MB read from DRAM, 3-4% faster).
template <typename T, int kVector>
__global__ void __maxnreg__((vector_walk_registers<T, kVector>()))
    stencil3d_streaming_vector(const T* __restrict__ in, T* __restrict__ out, long long n, long long m, long long k,
                               int z_chunk) {
  const long long x0 = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * kVector;
  const long long y = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (x0 >= m || y < 1 || y >= n - 1) return;
  const int row = static_cast<int>(m);
  const int plane = static_cast<int>(n * m);
  const WrittenPlanes planes = written_planes(static_cast<long long>(blockIdx.z) * z_chunk, z_chunk, k);
  if (planes.first >= planes.end) return;
  const int count = static_cast<int>(planes.end - planes.first);
  const bool batched = z_chunk % kVectorPlaneBatch == 0;
  const bool has_left = x0 >= 1;
  const bool has_right = x0 + kVector < m;
  if ((blockIdx.z & 1u) != 0) {
    const long long offset = (planes.end - 1) * n * m + y * m + x0;
    stencil3d_walk_vector<T, kVector, -1>(in + offset, out + offset, plane, row, count, batched, has_left, has_right);
  } else {
    const long long offset = planes.first * n * m + y * m + x0;
    stencil3d_walk_vector<T, kVector, 1>(in + offset, out + offset, plane, row, count, batched, has_left, has_right);
  }
}

struct Stencil2dLauncher {
  const LaunchRequest& request;

  /// vector > 1 (the model admits it with smem=0 only, at most 16 bytes): radius 1 and the
  /// advisor's ept_y values are compiled.
  template <typename T, int kVector, typename Launch> void launch_vector(const Launch& launch, int rows_per_thread) const {
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

  template <typename T> void operator()() const {
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

struct Stencil3dLauncher {
  const LaunchRequest& request;

  /// vector > 1 (mode 1 only, at most 16 bytes).
  template <typename T, int kVector> void launch_vector(dim3 grid, dim3 block, int z_chunk) const {
    if constexpr (kVector * sizeof(T) <= 16) {
      const auto& shape = request.shape;
      stencil3d_streaming_vector<T, kVector><<<grid, block, 0, request.stream>>>(
          static_cast<const T*>(request.arrays[0]), static_cast<T*>(request.arrays[1]), shape.n, shape.m, shape.k, z_chunk);
      check_launch("stencil3d_streaming_vector");
    } else {
      throw InputError("kernels: stencil3d vector=" + std::to_string(kVector) + " exceeds 16 bytes");
    }
  }
  template <typename T> void operator()() const {
    const auto* in = static_cast<const T*>(request.arrays[0]);
    auto* out = static_cast<T*>(request.arrays[1]);
    const dim3 grid = to_dim3(request.pattern.grid, "stencil3d grid");
    const dim3 block = to_dim3(request.pattern.block, "stencil3d block");
    const auto& shape = request.shape;
    require_int32_offsets(shape.n * shape.m, "a stencil3d plane");
    if (request.config.get("mode") == 0) {
      stencil3d_blocked<T><<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, shape.k);
      check_launch("stencil3d_blocked");
      return;
    }
    const int z_chunk = static_cast<int>(request.config.get("z_chunk"));
    switch (request.config.get_or("vector", 1)) {
    case 2: launch_vector<T, 2>(grid, block, z_chunk); return;
    case 4: launch_vector<T, 4>(grid, block, z_chunk); return;
    case 8: launch_vector<T, 8>(grid, block, z_chunk); return;
    default: break;
    }
    if (z_chunk % kStreamingPlaneBatch == 0) {
      stencil3d_streaming<T, kStreamingPlaneBatch><<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, shape.k,
                                                                                      z_chunk);
    } else {
      stencil3d_streaming<T, 0><<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, shape.k, z_chunk);
    }
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
