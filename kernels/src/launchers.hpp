// Per-family launchers (one .cu file each). Each receives the pattern model::build_pattern
// made from the same problem + config, and launches with exactly its grid, block and shared
// memory, so kernel and model cannot disagree on the launch shape.
#pragma once

#include <vector>

#include <cuda_runtime.h>

#include "cachewise/model.hpp"
#include "family_arrays.hpp"

namespace cachewise::kernels {

struct LaunchRequest {
  const ProblemSpec& problem;
  const Config& config;
  const KernelPattern& pattern;
  const FamilyShape& shape;
  const std::vector<void*>& arrays; ///< inputs in family order, then the output
  cudaStream_t stream;
};

/// Launches the request's family; no validation (launch_family_kernel() and time_kernel() did that once).
void launch_request(const LaunchRequest& request);

void launch_transpose(const LaunchRequest& request);
void launch_copy(const LaunchRequest& request);
void launch_stencil2d(const LaunchRequest& request);
void launch_stencil3d(const LaunchRequest& request);
void launch_gemm(const LaunchRequest& request);

/// dim3 from the pattern's Dim3; throws InputError when a grid extent exceeds CUDA's limits.
dim3 to_dim3(const Dim3& extent, const char* what);

/// Allows more than 48 KiB of dynamic shared memory for `kernel` when needed, then launches
/// nothing: the caller launches with `shared_bytes`.
void allow_shared_bytes(const void* kernel, std::int64_t shared_bytes);

/// The kernels index from per-thread base pointers with 32-bit offsets; throws InputError
/// naming `what` when `largest_offset_elements` does not fit in an int.
void require_int32_offsets(std::int64_t largest_offset_elements, const char* what);

/// Throws std::runtime_error naming the kernel when the launch failed.
void check_launch(const char* kernel_name);

/// Word types by byte width: data movement needs no arithmetic, only the width.
template <int Bytes>
struct WordOfBytes;
template <>
struct WordOfBytes<2> {
  using type = unsigned short;
};
template <>
struct WordOfBytes<4> {
  using type = unsigned int;
};
template <>
struct WordOfBytes<8> {
  using type = uint2;
};
template <>
struct WordOfBytes<16> {
  using type = uint4;
};

} // namespace cachewise::kernels
