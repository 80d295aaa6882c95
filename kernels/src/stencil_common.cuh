// What stencil2d.cu and stencil3d.cu share: the stencil weights in constant memory, and vectors
// of points moved as one native word. Each translation unit gets its own copy of the weights
// (the kernels are not compiled for separable linking), uploaded by its launcher.
#pragma once

#include "cachewise/model/families/family_kernels.hpp"
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

template <typename Acc>
__device__ __forceinline__ Acc weight(int distance) {
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

/// `kVector` elements moved as one access (the `vector` key): aligned to its whole width.
template <typename T, int kVector>
struct alignas(sizeof(T) * kVector) Packed {
  T lane[kVector];
};

/// The vector moves as one native word of its width. Stores go through inline PTX: nvcc split
/// plain vector stores into one STG.32 per lane when the edge branch stores the same points one
/// by one (CUPTI counted 3-4x the store requests the contract describes).
template <typename T, int kVector>
using PackedWord = typename WordOfBytes<sizeof(T) * kVector>::type;

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

template <typename T, int kVector>
__device__ __forceinline__ Packed<T, kVector> load_packed(const T* address) {
  const PackedWord<T, kVector> word = *reinterpret_cast<const PackedWord<T, kVector>*>(address);
  Packed<T, kVector> packed;
  memcpy(&packed, &word, sizeof(word));
  return packed;
}

template <typename T, int kVector>
__device__ __forceinline__ void store_packed(T* address, const Packed<T, kVector>& packed) {
  PackedWord<T, kVector> word;
  memcpy(&word, &packed, sizeof(word));
  store_word(reinterpret_cast<PackedWord<T, kVector>*>(address), word);
}

} // namespace
} // namespace cachewise::kernels
