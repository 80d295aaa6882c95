// transpose: out[j][i] = in[i][j], in is n x m (docs/pattern-families.md). Pure data movement,
// so the kernels move words of the element's width and serve every dtype. The plain nested
// loops are deliberate: a batched walk (batched_moves.cuh) needs a division per element here
// and measured 1.6x slower on the H200 (docs/validation-h200.md).
#include "launchers.hpp"

namespace cachewise::kernels {
namespace {

template <typename Word>
__global__ void transpose_direct(const Word* __restrict__ in, Word* __restrict__ out, long long n, long long m, int tile) {
  const long long x0 = static_cast<long long>(blockIdx.x) * tile;
  const long long y0 = static_cast<long long>(blockIdx.y) * tile;
  for (int r = 0; r < tile; r += blockDim.y) {
    for (int c = 0; c < tile; c += blockDim.x) {
      const long long row = y0 + r + threadIdx.y;
      const long long col = x0 + c + threadIdx.x;
      if (row < n && col < m) out[col * n + row] = in[row * m + col];
    }
  }
}

template <typename Word>
__global__ void transpose_shared(const Word* __restrict__ in, Word* __restrict__ out, long long n, long long m, int tile,
                                 int pad) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  Word* buffer = reinterpret_cast<Word*>(shared_raw);
  const int row_stride = tile + pad;
  const long long x0 = static_cast<long long>(blockIdx.x) * tile;
  const long long y0 = static_cast<long long>(blockIdx.y) * tile;
  for (int r = 0; r < tile; r += blockDim.y) {
    for (int c = 0; c < tile; c += blockDim.x) {
      const long long row = y0 + r + threadIdx.y;
      const long long col = x0 + c + threadIdx.x;
      if (row < n && col < m) buffer[(r + threadIdx.y) * row_stride + c + threadIdx.x] = in[row * m + col];
    }
  }
  __syncthreads();
  for (int r = 0; r < tile; r += blockDim.y) {
    for (int c = 0; c < tile; c += blockDim.x) {
      const long long out_row = x0 + r + threadIdx.y; // out is m x n
      const long long out_col = y0 + c + threadIdx.x;
      if (out_row < m && out_col < n) out[out_row * n + out_col] = buffer[(c + threadIdx.x) * row_stride + r + threadIdx.y];
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
