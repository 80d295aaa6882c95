// Exploration (session 4): the library's copy loses 2-7% on the H200 with 4-8 vectors per
// thread against 1 (docs/validation-h200.md), at equal occupancy, and the model does not
// see it. Is it the reads, the writes, or both? Each kernel moves 16-byte vectors, EPT per
// thread in one batch (all loads, then all stores), 128-thread blocks, the vectors of a block
// contiguous (vector e of thread t at block_base + e * 128 + t), as the library's copy:
//  - copy: load EPT vectors, store them;
//  - read: load EPT vectors, fold them into one word stored only if impossible (kept live);
//  - write: store EPT vectors of a constant.
// Timing as explore_st3.cu (median of 20 back-to-back launches after 5 warm-ups, buffers
// rotated over > 3x L2).
#include "explore_timing.cuh"

template <int EPT> __global__ void copy_ept(const float4* __restrict__ in, float4* __restrict__ out) {
  const size_t base = static_cast<size_t>(blockIdx.x) * EPT * blockDim.x + threadIdx.x;
  float4 v[EPT];
#pragma unroll
  for (int e = 0; e < EPT; ++e) v[e] = in[base + e * blockDim.x];
#pragma unroll
  for (int e = 0; e < EPT; ++e) out[base + e * blockDim.x] = v[e];
}

template <int EPT> __global__ void read_ept(const float4* __restrict__ in, float4* __restrict__ out) {
  const size_t base = static_cast<size_t>(blockIdx.x) * EPT * blockDim.x + threadIdx.x;
  float4 v[EPT];
#pragma unroll
  for (int e = 0; e < EPT; ++e) v[e] = in[base + e * blockDim.x];
  float s = 0;
#pragma unroll
  for (int e = 0; e < EPT; ++e) s += v[e].x + v[e].y + v[e].z + v[e].w;
  if (s == -1.0f) out[base] = v[0]; // inputs are >= 0: never taken
}

template <int EPT> __global__ void write_ept(const float4* __restrict__, float4* __restrict__ out) {
  const size_t base = static_cast<size_t>(blockIdx.x) * EPT * blockDim.x + threadIdx.x;
#pragma unroll
  for (int e = 0; e < EPT; ++e) out[base + e * blockDim.x] = make_float4(1, 2, 3, 4);
}

int main() {
  {
    float4 *a, *b;
    CK(cudaMalloc(&a, 1ull << 30));
    CK(cudaMalloc(&b, 1ull << 30));
    CK(cudaMemset(a, 0, 1ull << 30));
    for (int i = 0; i < 20; ++i) cudaMemcpyAsync(b, a, 1ull << 30, cudaMemcpyDeviceToDevice);
    CK(cudaDeviceSynchronize());
    cudaFree(a);
    cudaFree(b);
  }
  for (size_t bytes : {64ull << 20, 512ull << 20}) {
    const int sets = std::max<int>(2, static_cast<int>((3 * (60ull << 20)) / (2 * bytes)) + 1);
    std::vector<float4*> in(sets), out(sets);
    for (int i = 0; i < sets; ++i) {
      CK(cudaMalloc(&in[i], bytes));
      CK(cudaMalloc(&out[i], bytes));
      CK(cudaMemset(in[i], 0, bytes));
    }
    const size_t vectors = bytes / 16;
    auto run = [&](const char* kind, int ept, void (*kernel)(const float4*, float4*), double moved) {
      const double t = median_launch_us(
          [&](int k) { kernel<<<vectors / (ept * 128), 128>>>(in[k % sets], out[k % sets]); }, 20);
      printf("%4zu MiB %-5s ept %d: %8.1f us %6.0f GB/s\n", bytes >> 20, kind, ept, t, moved / t / 1e3);
    };
    const double memcpy_us =
        median_launch_us([&](int k) { cudaMemcpyAsync(out[k % sets], in[k % sets], bytes, cudaMemcpyDeviceToDevice); }, 20);
    printf("%4zu MiB cudaMemcpy %.1f us %.0f GB/s\n", bytes >> 20, memcpy_us, 2.0 * bytes / memcpy_us / 1e3);
    for (int pass = 0; pass < 2; ++pass) { // twice: the spread between passes is the noise
      run("copy", 1, copy_ept<1>, 2.0 * bytes);
      run("copy", 2, copy_ept<2>, 2.0 * bytes);
      run("copy", 4, copy_ept<4>, 2.0 * bytes);
      run("copy", 8, copy_ept<8>, 2.0 * bytes);
      run("read", 1, read_ept<1>, bytes);
      run("read", 2, read_ept<2>, bytes);
      run("read", 4, read_ept<4>, bytes);
      run("read", 8, read_ept<8>, bytes);
      run("write", 1, write_ept<1>, bytes);
      run("write", 2, write_ept<2>, bytes);
      run("write", 4, write_ept<4>, bytes);
      run("write", 8, write_ept<8>, bytes);
    }
    for (int i = 0; i < sets; ++i) {
      cudaFree(in[i]);
      cudaFree(out[i]);
    }
  }
  return 0;
}
