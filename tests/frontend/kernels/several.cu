// Several kernels in one file, as user files have them: the front end reads only the entry
// asked for. carry_sum uses carry arithmetic (add.cc), which the extractor rejects, and
// env_word reads %envreg3, a register the PTX parser does not know; the others must not care.
// tile_sum is a cooperative-groups reduction: thread_block, sync,
// tiled_partition<32> and its shuffles.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void carry_sum(const unsigned* a, const unsigned* b, unsigned* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned low;
  asm("add.cc.u32 %0, %1, %2;" : "=r"(low) : "r"(a[i]), "r"(b[i]));
  out[i] = low;
}

__global__ void env_word(unsigned* out) {
  unsigned word;
  asm("mov.u32 %0, %%envreg3;" : "=r"(word));
  out[threadIdx.x] = word;
}

__global__ void tile_sum(const float* in, float* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ float partial[32];
  float v = in[block.group_index().x * block.size() + block.thread_rank()];
  for (int offset = warp.size() / 2; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
  if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    v = warp.thread_rank() < warp.meta_group_size() ? partial[warp.thread_rank()] : 0.0f;
    for (int offset = warp.size() / 2; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
    if (block.thread_rank() == 0) out[block.group_index().x] = v;
  }
}

// A 3D grid: one thread per element of an nx x ny x nz volume, blockIdx.z the plane.
__global__ void scale_volume(const float* in, float* out, int nx, int ny) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const long at = (static_cast<long>(blockIdx.z) * ny + y) * nx + x;
  out[at] = 2.0f * in[at];
}

// Sum of pairs, over a type, a block size and whether each thread first adds two elements.
template <typename T, int THREADS, bool FIRST_ADD>
__global__ void pair_sum(const T* in, T* out) {
  __shared__ T sdata[THREADS];
  const unsigned tid = threadIdx.x;
  const unsigned i = blockIdx.x * (FIRST_ADD ? 2 * THREADS : THREADS) + tid;
  sdata[tid] = FIRST_ADD ? in[i] + in[i + THREADS] : in[i];
  __syncthreads();
  for (unsigned s = THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
