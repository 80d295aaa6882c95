// stencil3d (7-point) as docs/pattern-families.md defines it, interior points only; f16
// computes in f32.
#include "stencil_common.cuh"

namespace cachewise::kernels {
namespace {

/// Volume is k planes of n rows of m points; index (z*n + y)*m + x. Offsets from the centre
/// are 32-bit (the launcher checks a plane fits). Every interior row (y and z interior) is
/// written whole: its border points x = 0 and x = m-1 carry in[] through. Left unwritten, they
/// would leave the row's first and last sectors written in part, which L2 merges with a DRAM
/// read (H200: about +10% time at 256^3, +3-8% at 512^3).
template <typename T>
__global__ void stencil3d_blocked(const T* __restrict__ in, T* __restrict__ out, long long n, long long m,
                                  long long k) {
  using Acc = typename AccumulatorOf<T>::type;
  const long long x = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long y = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  const long long z = static_cast<long long>(blockIdx.z) * blockDim.z + threadIdx.z;
  if (x >= m || y < 1 || y >= n - 1 || z < 1 || z >= k - 1) return;
  const int row = static_cast<int>(m);
  const int plane = static_cast<int>(n * m);
  const long long offset = (z * n + y) * m + x;
  const T* centre = in + offset;
  // A border point may load its taps (x-1 of x = 0 and x+1 of x = m-1 are the neighbouring rows'
  // ends, inside the array); nvcc turns the select into a branch (f32, f64: its centre alone).
  const Acc neighbours = to_accumulator(centre[-1]) + to_accumulator(centre[1]) + to_accumulator(centre[-row]) +
                         to_accumulator(centre[row]) + to_accumulator(centre[-plane]) + to_accumulator(centre[plane]);
  const bool inside = x >= 1 && x < m - 1;
  out[offset] = inside ? from_accumulator<T>(weight<Acc>(0) * to_accumulator(centre[0]) + weight<Acc>(1) * neighbours)
                       : centre[0];
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
__global__ void stencil3d_streaming(const T* __restrict__ in, T* __restrict__ out, long long n, long long m,
                                    long long k, int z_chunk) {
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
  const auto emit = [&](T* plane_target, const Pack& ahead, Acc left, Acc right, const Pack& y_minus,
                        const Pack& y_plus) {
    Pack result;
#pragma unroll
    for (int i = 0; i < kVector; ++i) {
      const Acc l = i > 0 ? to_accumulator(centre.lane[i > 0 ? i - 1 : 0]) : left;
      const Acc r = i + 1 < kVector ? to_accumulator(centre.lane[i + 1 < kVector ? i + 1 : 0]) : right;
      const bool border = (i == 0 && !has_left) || (i == kVector - 1 && !has_right);
      result.lane[i] =
          border ? centre.lane[i]
                 : from_accumulator<T>(c0 * to_accumulator(centre.lane[i]) +
                                       c1 * (l + r + to_accumulator(y_minus.lane[i]) + to_accumulator(y_plus.lane[i]) +
                                             to_accumulator(behind.lane[i]) + to_accumulator(ahead.lane[i])));
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
__global__ void __maxnreg__((stencil3d_vector_walk_registers(static_cast<int>(sizeof(T)), kVector)))
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

struct Stencil3dLauncher {
  const LaunchRequest& request;

  /// vector > 1 (mode 1 only, at most 16 bytes).
  template <typename T, int kVector>
  void launch_vector(dim3 grid, dim3 block, int z_chunk) const {
    if constexpr (kVector * sizeof(T) <= 16) {
      const auto& shape = request.shape;
      stencil3d_streaming_vector<T, kVector>
          <<<grid, block, 0, request.stream>>>(static_cast<const T*>(request.arrays[0]),
                                               static_cast<T*>(request.arrays[1]), shape.n, shape.m, shape.k, z_chunk);
      check_launch("stencil3d_streaming_vector");
    } else {
      throw InputError("kernels: stencil3d vector=" + std::to_string(kVector) + " exceeds 16 bytes");
    }
  }
  template <typename T>
  void operator()() const {
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
      stencil3d_streaming<T, kStreamingPlaneBatch>
          <<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, shape.k, z_chunk);
    } else {
      stencil3d_streaming<T, 0><<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, shape.k, z_chunk);
    }
    check_launch("stencil3d_streaming");
  }
};

} // namespace

void launch_stencil3d(const LaunchRequest& request) {
  upload_stencil_weights();
  dispatch_data_type(request.problem.dtype, Stencil3dLauncher{request});
}

} // namespace cachewise::kernels
