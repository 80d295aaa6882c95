// transpose: out[j][i] = in[i][j], in is n x m (docs/pattern-families.md). Pure data movement,
// so the kernels move words of the element's width and serve every dtype.
//
// Speed without touching other addresses: a block whose tile lies wholly inside the matrix
// takes a path compiled for its shape (kCols = tile/block_x columns per thread, kBatch
// elements per batch, both fixed at compile time) with no bounds checks and every batch's
// loads issued before its stores; on the H200 that moved a 4096^2 f32 transpose from 69% to
// 92-97% of copy bandwidth (docs/kernels.md). Edge tiles, and shapes with no compiled path,
// walk the contract's (r, c) order incrementally with per-element bounds. Offsets are 32-bit
// from per-thread base pointers (the launcher checks they fit).
#include <algorithm>

#include "cachewise/model/families/family_kernels.hpp"
#include "launchers.hpp"

namespace cachewise::kernels {
namespace {

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

/// A full tile's moves: element (i, j) of the thread (row i*row_step, column j*col_step, i in
/// [0, rows), j in [0, kCols)) goes from src[i*src_i + j*src_j] to dst[i*dst_i + j*dst_j], in
/// the contract's order, kBatch / kCols rows at a time (loads first). `rows` is a multiple of
/// kBatch / kCols (the dispatcher picks kBatch so).
template <int kCols, int kBatch, typename Word>
__device__ __forceinline__ void move_full_tile(const Word* src, int src_i, int src_j, Word* dst, int dst_i, int dst_j,
                                               int rows) {
  constexpr int kRowsPerBatch = kBatch / kCols;
  static_assert(kRowsPerBatch * kCols == kBatch, "a batch holds whole rows of the thread's elements");
  for (int i0 = 0; i0 < rows; i0 += kRowsPerBatch) {
    Word values[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) values[u] = src[(i0 + u / kCols) * src_i + (u % kCols) * src_j];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) dst[(i0 + u / kCols) * dst_i + (u % kCols) * dst_j] = values[u];
  }
}

/// Whether the block's tile lies wholly inside the n x m input (the same for all its threads).
__device__ __forceinline__ bool full_tile(long long n, long long m, long long x0, long long y0, int tile) {
  return x0 + tile <= m && y0 + tile <= n;
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
template <typename Word>
__device__ __forceinline__ auto strided_store(Word* base, int row_step, int col_step) {
  return [=](int r, int c, const Word& value) { base[r * row_step + c * col_step] = value; };
}

template <typename Word, int kCols, int kBatch>
__global__ void transpose_direct(const Word* __restrict__ in, Word* __restrict__ out, long long n, long long m,
                                 int tile) {
  const long long y0 = static_cast<long long>(blockIdx.y) * tile;
  const long long x0 = static_cast<long long>(blockIdx.x) * tile;
  const long long row0 = y0 + threadIdx.y;
  const long long col0 = x0 + threadIdx.x;
  const int in_row = static_cast<int>(m);
  const int out_row = static_cast<int>(n);
  const Word* src = in + row0 * m + col0;
  Word* dst = out + col0 * n + row0;
  if constexpr (kCols > 0) {
    if (full_tile(n, m, x0, y0, tile)) {
      const int row_step = blockDim.y;
      const int col_step = blockDim.x;
      move_full_tile<kCols, kBatch>(src, row_step * in_row, col_step, dst, row_step, col_step * out_row,
                                    tile / row_step);
      return;
    }
  }
  const int rows_inside = inside(n, row0, tile);
  const int cols_inside = inside(m, col0, tile);
  walk_tile<Word>(tile, blockDim.y, blockDim.x, guarded_load(src, in_row, 1, rows_inside, cols_inside),
                  strided_store(dst, 1, out_row));
}

template <typename Word, int kCols, int kBatch>
__global__ void transpose_shared(const Word* __restrict__ in, Word* __restrict__ out, long long n, long long m,
                                 int tile, int pad) {
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
  Word* buffer_load = buffer + threadIdx.y * row_stride + threadIdx.x;        // buf[r+ty][c+tx]
  const Word* buffer_store = buffer + threadIdx.x * row_stride + threadIdx.y; // buf[c+tx][r+ty]
  if constexpr (kCols > 0) {
    if (full_tile(n, m, x0, y0, tile)) { // uniform over the block: the barrier is safe
      const int row_step = blockDim.y;
      const int col_step = blockDim.x;
      const int rows = tile / row_step;
      move_full_tile<kCols, kBatch>(src, row_step * in_row, col_step, buffer_load, row_step * row_stride, col_step,
                                    rows);
      __syncthreads();
      move_full_tile<kCols, kBatch>(buffer_store, row_step, col_step * row_stride, dst, row_step * out_row, col_step,
                                    rows);
      return;
    }
  }
  walk_tile<Word>(tile, blockDim.y, blockDim.x, guarded_load(src, in_row, 1, in_rows_inside, in_cols_inside),
                  strided_store(buffer_load, row_stride, 1));
  __syncthreads();
  walk_tile<Word>(tile, blockDim.y, blockDim.x,
                  guarded_load(buffer_store, 1, row_stride, out_rows_inside, out_cols_inside),
                  strided_store(dst, out_row, 1));
}

/// kCols == 0 compiles no full-tile path: every tile walks with bounds.
template <typename Word, int kCols, int kBatch>
void launch_shape(const LaunchRequest& request) {
  const auto* in = static_cast<const Word*>(request.arrays[0]);
  auto* out = static_cast<Word*>(request.arrays[1]);
  const int tile = static_cast<int>(request.config.get("tile"));
  const dim3 grid = to_dim3(request.pattern.grid, "transpose grid");
  const dim3 block = to_dim3(request.pattern.block, "transpose block");
  const auto& shape = request.shape;
  if (request.config.get("smem") == 0) {
    transpose_direct<Word, kCols, kBatch><<<grid, block, 0, request.stream>>>(in, out, shape.n, shape.m, tile);
    check_launch("transpose_direct");
    return;
  }
  const std::int64_t shared_bytes = shared_bytes_per_block(request.pattern);
  allow_shared_bytes(reinterpret_cast<const void*>(&transpose_shared<Word, kCols, kBatch>), shared_bytes);
  transpose_shared<Word, kCols, kBatch><<<grid, block, static_cast<size_t>(shared_bytes), request.stream>>>(
      in, out, shape.n, shape.m, tile, static_cast<int>(request.config.get_or("pad", 0)));
  check_launch("transpose_shared");
}

/// The compiled full-tile path for kCols columns per thread: the batch is the thread's whole
/// tile up to kMaxFullTileBatch elements (both powers of two, so whole rows fit a batch).
template <typename Word, int kCols>
void launch_batches(const LaunchRequest& request, std::int64_t per_thread) {
  switch (std::min<std::int64_t>(per_thread, kMaxFullTileBatch)) {
  case 1:
    if constexpr (kCols <= 1) return launch_shape<Word, kCols, 1>(request);
    break;
  case 2:
    if constexpr (kCols <= 2) return launch_shape<Word, kCols, 2>(request);
    break;
  case 4:
    if constexpr (kCols <= 4) return launch_shape<Word, kCols, 4>(request);
    break;
  case 8: return launch_shape<Word, kCols, 8>(request);
  case 16: return launch_shape<Word, kCols, 16>(request);
  default: break;
  }
  launch_shape<Word, 0, 1>(request);
}

template <typename Word>
void launch_words(const LaunchRequest& request) {
  const std::int64_t tile = request.config.get("tile");
  const std::int64_t block_x = request.pattern.block.x;
  const std::int64_t block_y = request.pattern.block.y;
  require_int32_offsets(tile * std::max(request.shape.n, request.shape.m), "a transpose tile");
  const std::int64_t cols = tile / block_x;
  const std::int64_t rows = tile / block_y;
  const auto power_of_two = [](std::int64_t v) { return (v & (v - 1)) == 0; };
  if (!power_of_two(cols) || !power_of_two(rows)) return launch_shape<Word, 0, 1>(request);
  switch (cols) {
  case 1: return launch_batches<Word, 1>(request, rows * cols);
  case 2: return launch_batches<Word, 2>(request, rows * cols);
  case 4: return launch_batches<Word, 4>(request, rows * cols);
  case 8: return launch_batches<Word, 8>(request, rows * cols);
  default: return launch_shape<Word, 0, 1>(request);
  }
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
