// transpose: out[j][i] = in[i][j], in is n x m (docs/pattern-families.md). Pure data movement,
// so the kernels move words of the element's width and serve every dtype.
//
// Speed without touching other addresses: each thread walks the contract's (r, c) order
// incrementally (no division), in batches whose loads are issued before their stores so
// several loads are in flight per thread; offsets are 32-bit from per-thread base pointers
// (the launcher checks they fit) and the bounds become two per-thread limits.
#include <algorithm>

#include "launchers.hpp"

namespace cachewise::kernels {
namespace {

inline constexpr int kTransposeBatch = 8;

/// Calls load(r, c, word) for the thread's elements in the contract's order (r outer, step
/// row_step; c inner, step col_step; both in [0, tile)), kTransposeBatch at a time, then
/// store(r, c, word) for those whose load returned true, in the same order.
template <typename Word, typename Load, typename Store>
__device__ __forceinline__ void walk_tile(int tile, int row_step, int col_step, Load load, Store store) {
  const int per_thread = (tile / row_step) * (tile / col_step);
  int r = 0;
  int c = 0;
  for (int first = 0; first < per_thread; first += kTransposeBatch) {
    Word values[kTransposeBatch];
    bool loaded[kTransposeBatch];
    int rows[kTransposeBatch];
    int cols[kTransposeBatch];
#pragma unroll
    for (int u = 0; u < kTransposeBatch; ++u) {
      rows[u] = r;
      cols[u] = c;
      loaded[u] = first + u < per_thread && load(r, c, values[u]);
      c += col_step;
      if (c == tile) {
        c = 0;
        r += row_step;
      }
    }
#pragma unroll
    for (int u = 0; u < kTransposeBatch; ++u) {
      if (loaded[u]) store(rows[u], cols[u], values[u]);
    }
  }
}

/// How many of the tile's rows (or columns) starting at `first` lie inside `extent`.
__device__ __forceinline__ int inside(long long extent, long long first, int tile) {
  return static_cast<int>(max(0LL, min(extent - first, static_cast<long long>(tile))));
}

/// Load of base[r * row_step + c * col_step] for the elements inside rows_inside x cols_inside.
template <typename Word>
__device__ __forceinline__ auto guarded_load(const Word* base, int row_step, int col_step, int rows_inside,
                                             int cols_inside) {
  return [=](int r, int c, Word& value) {
    if (r >= rows_inside || c >= cols_inside) return false;
    value = base[r * row_step + c * col_step];
    return true;
  };
}

/// Store to base[r * row_step + c * col_step].
template <typename Word> __device__ __forceinline__ auto strided_store(Word* base, int row_step, int col_step) {
  return [=](int r, int c, const Word& value) { base[r * row_step + c * col_step] = value; };
}

template <typename Word>
__global__ void transpose_direct(const Word* __restrict__ in, Word* __restrict__ out, long long n, long long m, int tile) {
  const long long row0 = static_cast<long long>(blockIdx.y) * tile + threadIdx.y;
  const long long col0 = static_cast<long long>(blockIdx.x) * tile + threadIdx.x;
  const int rows_inside = inside(n, row0, tile);
  const int cols_inside = inside(m, col0, tile);
  const int in_row = static_cast<int>(m);
  const int out_row = static_cast<int>(n);
  const Word* src = in + row0 * m + col0;
  Word* dst = out + col0 * n + row0;
  walk_tile<Word>(tile, blockDim.y, blockDim.x, guarded_load(src, in_row, 1, rows_inside, cols_inside),
                  strided_store(dst, 1, out_row));
}

template <typename Word>
__global__ void transpose_shared(const Word* __restrict__ in, Word* __restrict__ out, long long n, long long m, int tile,
                                 int pad) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  Word* buffer = reinterpret_cast<Word*>(shared_raw);
  const int row_stride = tile + pad;
  const long long x0 = static_cast<long long>(blockIdx.x) * tile;
  const long long y0 = static_cast<long long>(blockIdx.y) * tile;
  const int in_rows_inside = inside(n, y0 + threadIdx.y, tile);
  const int in_cols_inside = inside(m, x0 + threadIdx.x, tile);
  const int out_rows_inside = inside(m, x0 + threadIdx.y, tile); // out is m x n
  const int out_cols_inside = inside(n, y0 + threadIdx.x, tile);
  const int in_row = static_cast<int>(m);
  const int out_row = static_cast<int>(n);
  const Word* src = in + (y0 + threadIdx.y) * m + x0 + threadIdx.x;
  Word* dst = out + (x0 + threadIdx.y) * n + y0 + threadIdx.x;
  Word* buffer_load = buffer + threadIdx.y * row_stride + threadIdx.x;  // buf[r+ty][c+tx]
  const Word* buffer_store = buffer + threadIdx.x * row_stride + threadIdx.y; // buf[c+tx][r+ty]
  walk_tile<Word>(tile, blockDim.y, blockDim.x, guarded_load(src, in_row, 1, in_rows_inside, in_cols_inside),
                  strided_store(buffer_load, row_stride, 1));
  __syncthreads();
  walk_tile<Word>(tile, blockDim.y, blockDim.x,
                  guarded_load(buffer_store, 1, row_stride, out_rows_inside, out_cols_inside),
                  strided_store(dst, out_row, 1));
}

template <typename Word> void launch_words(const LaunchRequest& request) {
  const auto* in = static_cast<const Word*>(request.arrays[0]);
  auto* out = static_cast<Word*>(request.arrays[1]);
  const int tile = static_cast<int>(request.config.get("tile"));
  const dim3 grid = to_dim3(request.pattern.grid, "transpose grid");
  const dim3 block = to_dim3(request.pattern.block, "transpose block");
  const auto& shape = request.shape;
  require_int32_offsets(static_cast<std::int64_t>(tile) * std::max(shape.n, shape.m), "a transpose tile");
  if (request.config.get("smem") == 0) {
    transpose_direct<Word><<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, tile);
    check_launch("transpose_direct");
    return;
  }
  const std::int64_t shared_bytes = shared_bytes_per_block(request.pattern);
  allow_shared_bytes(reinterpret_cast<const void*>(&transpose_shared<Word>), shared_bytes);
  transpose_shared<Word><<<grid, block, static_cast<size_t>(shared_bytes), request.stream>>>(
      in, out, shape.n, shape.m, tile, static_cast<int>(request.config.get_or("pad", 0)));
  check_launch("transpose_shared");
}

} // namespace

void launch_transpose(const LaunchRequest& request) {
  switch (element_bytes(request.problem.dtype)) {
  case 2: launch_words<WordOfBytes<2>::type>(request); break;
  case 4: launch_words<WordOfBytes<4>::type>(request); break;
  default: launch_words<WordOfBytes<8>::type>(request); break;
  }
}

} // namespace cachewise::kernels
