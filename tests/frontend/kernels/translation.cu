// Kernels for the block translation tests (extract_translation_test.cpp).

// A 32 x 64 tile per block, 32 x 8 threads walking it in 8 rows: the block index reaches only
// additions and multiplications, so every block is a translation of any other.
extern "C" __global__ void tile_copy(float* out, const float* in, int width) {
  const int x = blockIdx.x * 32 + threadIdx.x;
  for (int row = threadIdx.y; row < 64; row += 8) {
    const int y = blockIdx.y * 64 + row;
    out[y * width + x] = in[y * width + x];
  }
}

// The usual bounds guard: a comparison of a value made from the block index.
extern "C" __global__ void guarded_copy(float* out, const float* in, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// A 32-bit index that wraps: block b writes element (b * 2^30 + threadIdx.x) mod 2^32, so the
// blocks from 4 on start over at element 0.
extern "C" __global__ void wrapping_index(float* out) {
  const unsigned i = blockIdx.x * 0x40000000u + threadIdx.x;
  out[i] = 1.0f;
}

// Each lane's address moves by its own step per block: (threadIdx.x + 1) elements.
extern "C" __global__ void lane_scaled(float* out) {
  out[blockIdx.x * (threadIdx.x + 1) + threadIdx.x] = 0.0f;
}
