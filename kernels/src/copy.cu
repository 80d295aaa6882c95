// copy: out[i] = in[i*stride] (docs/pattern-families.md). A thread moves `vector` elements
// as one word of vector*sizeof(T) bytes, so one kernel per word width serves every dtype.
#include <string>

#include "batched_moves.cuh"
#include "launchers.hpp"

namespace cachewise::kernels {
namespace {

/// `word_stride` is the contract's stride; it is 1 whenever a word holds several elements.
/// `word_stride` is the contract's stride; it is 1 whenever a word holds several elements.
template <typename Word>
__global__ void copy_words(const Word* __restrict__ in, Word* __restrict__ out, long long words, long long word_stride,
                           int elements_per_thread) {
  const auto word_index = [&](int e) {
    return (static_cast<long long>(blockIdx.x) * elements_per_thread + e) * blockDim.x + threadIdx.x;
  };
  batched_moves<Word>(
      elements_per_thread,
      [&](int e, Word& value) {
        const long long v = word_index(e);
        if (v >= words) return false;
        value = in[v * word_stride];
        return true;
      },
      [&](int e, const Word& value) { out[word_index(e)] = value; });
}

template <typename Word>
void launch_words(const LaunchRequest& request, long long words) {
  const dim3 grid = to_dim3(request.pattern.grid, "copy grid");
  const dim3 block = to_dim3(request.pattern.block, "copy block");
  copy_words<Word><<<grid, block, 0, request.stream>>>(
      static_cast<const Word*>(request.arrays[0]), static_cast<Word*>(request.arrays[1]), words,
      request.shape.copy_stride, static_cast<int>(request.config.get("ept")));
  check_launch("copy_words");
}

} // namespace

void launch_copy(const LaunchRequest& request) {
  const std::int64_t vector = request.config.get_or("vector", 1);
  const std::int64_t word_bytes = vector * element_bytes(request.problem.dtype);
  const long long words = request.shape.n / vector;
  switch (word_bytes) {
  case 2: launch_words<WordOfBytes<2>::type>(request, words); break;
  case 4: launch_words<WordOfBytes<4>::type>(request, words); break;
  case 8: launch_words<WordOfBytes<8>::type>(request, words); break;
  case 16: launch_words<WordOfBytes<16>::type>(request, words); break;
  default:
    throw InputError("kernels: copy vector=" + std::to_string(vector) + " gives " + std::to_string(word_bytes) +
                     "-byte accesses; compiled widths are 2, 4, 8 and 16 bytes");
  }
}

} // namespace cachewise::kernels
