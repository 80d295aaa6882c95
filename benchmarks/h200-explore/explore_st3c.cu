// Exploration (session 5): stencil3d at 256^3 stays at 81-86% of a same-size copy with the
// library's 2.5D register kernel, and its long z chunks wait longer per load (ncu: 28 against
// 16-18 scoreboard cycles per instruction). Do deeper loads in flight, without registers, help?
//  - `pf`: the library's vector-2 kernel (2 planes per batch) plus prefetch.global.L2 of the
//    above planes PF batches ahead, so the next batch's DRAM reads are L2 hits by then;
//  - `async`: full-row tiles staged through shared memory with cp.async (16 bytes per thread),
//    a ring of S planes, S-3 planes loaded ahead of the one computed; no halo loads from L2
//    beyond the tile's two extra rows;
//  - `bulk`: the same ring filled by one cp.async.bulk (the copy engine, completion on an
//    mbarrier) per plane: a full-row tile's (BY+2) rows are contiguous in memory.
// Timing, inputs and check as explore_st3b.cu (explore_st3_common.cuh).
#include <cstdint>
#include <cstring>

#include "explore_st3_common.cuh"

__device__ __forceinline__ unsigned smem_address(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Ring slot `slot` of S: (BY+2) full rows of n floats.
__device__ __forceinline__ float *ring_slot(float *ring, int slot, int by, int n) { return ring + slot * (by + 2) * n; }

/// One output plane z from the ring: rows 1..BY of slot(z), the same rows of slot(z-1) and
/// slot(z+1); each thread takes 4 columns at a time across the row.
__device__ __forceinline__ void emit_from_ring(const float *below, const float *mid, const float *above, float *out_row,
                                               int ty, int n) {
  for (int x = threadIdx.x * 4; x < n; x += blockDim.x * 4) {
    const float *c = mid + (ty + 1) * n + x;
    const float4 cv = *reinterpret_cast<const float4 *>(c);
    const float4 up = *reinterpret_cast<const float4 *>(c - n);
    const float4 dn = *reinterpret_cast<const float4 *>(c + n);
    const float4 bl = *reinterpret_cast<const float4 *>(below + (ty + 1) * n + x);
    const float4 ab = *reinterpret_cast<const float4 *>(above + (ty + 1) * n + x);
    const float l = x > 0 ? c[-1] : 0.0f;
    const float r = x + 4 < n ? c[4] : 0.0f;
    float4 v;
    v.x = 0.4f * cv.x + 0.1f * (l + cv.y + up.x + dn.x + bl.x + ab.x);
    v.y = 0.4f * cv.y + 0.1f * (cv.x + cv.z + up.y + dn.y + bl.y + ab.y);
    v.z = 0.4f * cv.z + 0.1f * (cv.y + cv.w + up.z + dn.z + bl.z + ab.z);
    v.w = 0.4f * cv.w + 0.1f * (cv.z + r + up.w + dn.w + bl.w + ab.w);
    *reinterpret_cast<float4 *>(out_row + x) = v;
  }
}

/// First row of the tile in memory: y0-1, clamped so the (BY+2) rows stay inside the plane
/// (border tiles load a shifted window; their rows outside [1, n-2] are not stored).
__device__ __forceinline__ int tile_first_row(int y0, int by, int n) { return min(max(y0 - 1, 0), n - (by + 2)); }

/// A ring kernel's block: BY = blockDim.y rows from y0, the tile's first row in memory, the
/// thread's row y, and the planes [z0, z1) its chunk writes.
struct RingTile {
  int by, row0, y, z0, z1;
};
__device__ __forceinline__ RingTile ring_tile(int n, int zc) {
  const int by = blockDim.y, y0 = blockIdx.y * by;
  return {by, tile_first_row(y0, by, n), y0 + static_cast<int>(threadIdx.y), max(static_cast<int>(blockIdx.z) * zc, 1),
          min(static_cast<int>(blockIdx.z) * zc + zc, n - 1)};
}

/// cp.async ring: plane p's (BY+2) rows into its slot, 16 bytes per thread per step.
__device__ __forceinline__ void issue_plane_cp_async(float *slot, const float *src, int by, int n) {
  const int chunks = (by + 2) * n / 4;
  const int threads = blockDim.x * blockDim.y;
  for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < chunks; i += threads) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_address(slot + 4 * i)), "l"(src + 4 * i));
  }
}

template <int S> __global__ void st3_async(const float *__restrict__ in, float *__restrict__ out, int n, int zc) {
  extern __shared__ float4 ring_storage[];
  float *ring = reinterpret_cast<float *>(ring_storage);
  const RingTile tile = ring_tile(n, zc);
  if (tile.z0 >= tile.z1)
    return;
  const int by = tile.by, row0 = tile.row0, y = tile.y, z0 = tile.z0, z1 = tile.z1;
  const long long plane = static_cast<long long>(n) * n;
  const int ty_in_tile = y - row0 - 1; // the thread's row in the slot, minus 1 (emit adds 1)
  const bool store_row = y >= 1 && y < n - 1;
  auto issue = [&](int p) {
    if (p <= z1)
      issue_plane_cp_async(ring_slot(ring, p % S, by, n), in + p * plane + static_cast<long long>(row0) * n, by, n);
    asm volatile("cp.async.commit_group;");
  };
  // Prologue: planes z0-1 .. z0+S-3.
  for (int p = z0 - 1; p <= z0 + S - 3; ++p)
    issue(p);
  for (int z = z0; z < z1; ++z) {
    // Committed groups end at plane z+S-3; plane z+1 complete leaves S-4 pending.
    asm volatile("cp.async.wait_group %0;" ::"n"(S - 4));
    __syncthreads();
    issue(z + S - 2); // into the slot of plane z-2, which every thread has finished with
    if (store_row)    // border rows' windows reach outside the slot; they store nothing
      emit_from_ring(ring_slot(ring, (z - 1) % S, by, n), ring_slot(ring, z % S, by, n),
                     ring_slot(ring, (z + 1) % S, by, n), out + z * plane + static_cast<long long>(y) * n, ty_in_tile,
                     n);
  }
  asm volatile("cp.async.wait_group 0;");
}

__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned parity) {
  asm volatile("{\n .reg .pred done;\n wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n @!done "
               "bra wait_%=;\n}" ::"r"(bar),
               "r"(parity)
               : "memory");
}

template <int S> __global__ void st3_bulk(const float *__restrict__ in, float *__restrict__ out, int n, int zc) {
  extern __shared__ float4 ring_storage[];
  __shared__ alignas(8) unsigned long long bars[S];
  float *ring = reinterpret_cast<float *>(ring_storage);
  const RingTile tile = ring_tile(n, zc);
  if (tile.z0 >= tile.z1)
    return;
  const int by = tile.by, row0 = tile.row0, y = tile.y, z0 = tile.z0, z1 = tile.z1;
  const long long plane = static_cast<long long>(n) * n;
  const bool leader = threadIdx.x == 0 && threadIdx.y == 0;
  const unsigned slot_bytes = (by + 2) * n * 4;
  if (leader) {
    for (int s = 0; s < S; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&bars[s])));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  auto issue = [&](int p) {
    if (!leader || p > z1)
      return;
    const unsigned bar = smem_address(&bars[p % S]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(slot_bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_address(ring_slot(ring, p % S, by, n))),
                 "l"(in + p * plane + static_cast<long long>(row0) * n), "r"(slot_bytes), "r"(bar)
                 : "memory");
  };
  // Use k of a slot (k = 0, 1, ...) completes phase k: wait for parity k & 1.
  const int first = z0 - 1;
  auto wait_plane = [&](int p) {
    mbarrier_wait(smem_address(&bars[p % S]), static_cast<unsigned>(((p - first) / S) & 1));
  };
  for (int p = first; p <= z0 + S - 3; ++p)
    issue(p);
  wait_plane(z0 - 1);
  wait_plane(z0);
  for (int z = z0; z < z1; ++z) {
    wait_plane(z + 1);
    __syncthreads();
    issue(z + S - 2);
    if (y >= 1 && y < n - 1)
      emit_from_ring(ring_slot(ring, (z - 1) % S, by, n), ring_slot(ring, z % S, by, n),
                     ring_slot(ring, (z + 1) % S, by, n), out + z * plane + static_cast<long long>(y) * n, y - row0 - 1,
                     n);
  }
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : nullptr; // run only the variants whose name contains it
  warm_clocks();
  for (int n : {256, 512}) {
    const size_t bytes = static_cast<size_t>(n) * n * n * 4;
    Buffers b = make(bytes);
    auto copies = [&](const char *when) { return time_copies(b, n, when); };
    copies("warm");
    const double memcpy_us = copies("before");
    auto rep = [&](const char *name, int v, const std::function<void(const float *, float *)> &l) {
      report_variant(b, n, memcpy_us, only, 28, name, v, l);
    };
#define PF(BX, BY, PFD, ZC)                                                                                            \
  rep("pf" #PFD " v2 " #BX "x" #BY " z" #ZC, 2, [&](const float *i, float *o) {                                        \
    st3_walk<PFD><<<dim3(n / (BX * 2), n / BY, (n + ZC - 1) / ZC), dim3(BX, BY)>>>(i, o, n, 1ll * n * n, ZC);          \
  })
#define RING(KIND, KERNEL, BX, BY, S, ZC)                                                                              \
  do {                                                                                                                 \
    const int smem = S * (BY + 2) * n * 4;                                                                             \
    CK(cudaFuncSetAttribute(KERNEL<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));                            \
    rep(KIND " " #BX "x" #BY " s" #S " z" #ZC, 4, [&](const float *i, float *o) {                                      \
      KERNEL<S><<<dim3(1, n / BY, (n + ZC - 1) / ZC), dim3(BX, BY), smem>>>(i, o, n, ZC);                              \
    });                                                                                                                \
  } while (0)
    PF(128, 2, 0, 8);
    PF(128, 2, 1, 8);
    PF(128, 2, 2, 8);
    PF(64, 4, 0, 8);
    PF(64, 4, 1, 8);
    PF(64, 4, 1, 16);
    PF(64, 4, 0, 64);
    PF(64, 4, 1, 64);
    PF(64, 4, 2, 64);
    RING("async", st3_async, 64, 4, 5, 8);
    RING("async", st3_async, 64, 4, 6, 16);
    RING("async", st3_async, 64, 8, 5, 16);
    RING("async", st3_async, 64, 8, 6, 32);
    RING("async", st3_async, 128, 4, 6, 32);
    RING("async", st3_async, 64, 4, 8, 64);
    RING("bulk", st3_bulk, 64, 4, 5, 8);
    RING("bulk", st3_bulk, 64, 4, 6, 16);
    RING("bulk", st3_bulk, 64, 8, 5, 16);
    RING("bulk", st3_bulk, 64, 8, 6, 32);
    RING("bulk", st3_bulk, 128, 4, 6, 32);
    RING("bulk", st3_bulk, 64, 4, 8, 64);
    RING("bulk", st3_bulk, 64, 2, 6, 16);
    RING("bulk", st3_bulk, 32, 4, 6, 16);
    // Second run: deeper rings and longer chunks (the first run's best ring was s8 z64).
    RING("bulk", st3_bulk, 64, 4, 12, 64);
    RING("bulk", st3_bulk, 64, 4, 8, 128);
    RING("bulk", st3_bulk, 64, 4, 12, 128);
    RING("bulk", st3_bulk, 64, 2, 12, 64);
    RING("bulk", st3_bulk, 64, 8, 8, 64);
    RING("bulk", st3_bulk, 64, 8, 10, 128);
    RING("bulk", st3_bulk, 128, 2, 12, 64);
    RING("async", st3_async, 64, 4, 12, 64);
    RING("async", st3_async, 64, 2, 12, 64);
    // Third run: are long walks slow because their blocks run in step (one wave, identical
    // work, loads and stores of every block at the same moments)? Odd rows half a batch out.
#define PHASE(BX, BY, ZC)                                                                                              \
  rep("phase v2 " #BX "x" #BY " z" #ZC, 2, [&](const float *i, float *o) {                                             \
    st3_walk<0><<<dim3(n / (BX * 2), n / BY, (n + ZC - 1) / ZC), dim3(BX, BY)>>>(i, o, n, 1ll * n * n, ZC, true);      \
  })
    PF(64, 4, 0, 8);
    PHASE(64, 4, 8);
    PF(64, 4, 0, 16);
    PHASE(64, 4, 16);
    PF(64, 4, 0, 32);
    PHASE(64, 4, 32);
    PF(64, 4, 0, 64);
    PHASE(64, 4, 64);
    PF(32, 2, 0, 32);
    PHASE(32, 2, 32);
    PF(128, 2, 0, 32);
    PHASE(128, 2, 32);
    copies("after");
    free_buffers(b);
  }
  print_max_clock();
  return 0;
}
