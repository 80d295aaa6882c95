// transpose: out[j][i] = in[i][j], in is n x m (docs/pattern-families.md). Pure data movement,
// so the kernels move words of the element's width and serve every dtype.
#include "batched_moves.cuh"
#include "launchers.hpp"

namespace cachewise::kernels {
namespace {

/// Element e of a thread's tile walk: r = (e / cols)*block_y, c = (e % cols)*block_x — the
/// contract's `for r step block_y: for c step block_x` order.
struct TileWalk {
  int cols; ///< tile / block_x
  __device__ int row(int e) const { return (e / cols) * static_cast<int>(blockDim.y); }
  __device__ int col(int e) const { return (e % cols) * static_cast<int>(blockDim.x); }
};

/// Loads element e of a thread's walk over the `in` tile at (y0, x0), when it exists.
template <typename Word> struct TileLoad {
  const Word* __restrict__ in;
  long long n, m, y0, x0;
  TileWalk walk;
  __device__ bool operator()(int e, Word& value) const {
    const long long row = y0 + walk.row(e) + threadIdx.y;
    const long long col = x0 + walk.col(e) + threadIdx.x;
    if (row >= n || col >= m) return false;
    value = in[row * m + col];
    return true;
  }
};

template <typename Word>
__global__ void transpose_direct(const Word* __restrict__ in, Word* __restrict__ out, long long n, long long m, int tile) {
  const long long x0 = static_cast<long long>(blockIdx.x) * tile;
  const long long y0 = static_cast<long long>(blockIdx.y) * tile;
  const TileWalk walk{tile / static_cast<int>(blockDim.x)};
  const int count = walk.cols * (tile / static_cast<int>(blockDim.y));
  batched_moves<Word>(count, TileLoad<Word>{in, n, m, y0, x0, walk}, [&](int e, const Word& value) {
    out[(x0 + walk.col(e) + threadIdx.x) * n + y0 + walk.row(e) + threadIdx.y] = value;
  });
}

template <typename Word>
__global__ void transpose_shared(const Word* __restrict__ in, Word* __restrict__ out, long long n, long long m, int tile,
                                 int pad) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  Word* buffer = reinterpret_cast<Word*>(shared_raw);
  const int row_stride = tile + pad;
  const long long x0 = static_cast<long long>(blockIdx.x) * tile;
  const long long y0 = static_cast<long long>(blockIdx.y) * tile;
  const TileWalk walk{tile / static_cast<int>(blockDim.x)};
  const int count = walk.cols * (tile / static_cast<int>(blockDim.y));
  batched_moves<Word>(count, TileLoad<Word>{in, n, m, y0, x0, walk}, [&](int e, const Word& value) {
    buffer[(walk.row(e) + threadIdx.y) * row_stride + walk.col(e) + threadIdx.x] = value;
  });
  __syncthreads();
  for (int e = 0; e < count; ++e) {
    const long long out_row = x0 + walk.row(e) + threadIdx.y; // out is m x n
    const long long out_col = y0 + walk.col(e) + threadIdx.x;
    if (out_row < m && out_col < n) {
      out[out_row * n + out_col] = buffer[(walk.col(e) + threadIdx.x) * row_stride + walk.row(e) + threadIdx.y];
    }
  }
}

template <typename Word> void launch_words(const LaunchRequest& request) {
  const auto* in = static_cast<const Word*>(request.arrays[0]);
  auto* out = static_cast<Word*>(request.arrays[1]);
  const int tile = static_cast<int>(request.config.get("tile"));
  const dim3 grid = to_dim3(request.pattern.grid, "transpose grid");
  const dim3 block = to_dim3(request.pattern.block, "transpose block");
  if (request.config.get("smem") == 0) {
    transpose_direct<Word><<<grid, block, 0, request.stream>>>(in, out, request.shape.n, request.shape.m, tile);
    check_launch("transpose_direct");
    return;
  }
  const std::int64_t shared_bytes = shared_bytes_per_block(request.pattern);
  allow_shared_bytes(reinterpret_cast<const void*>(&transpose_shared<Word>), shared_bytes);
  transpose_shared<Word><<<grid, block, static_cast<size_t>(shared_bytes), request.stream>>>(
      in, out, request.shape.n, request.shape.m, tile, static_cast<int>(request.config.get_or("pad", 0)));
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
