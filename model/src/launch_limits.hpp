// The limits and occupancy of a launch, whatever describes the kernel (a KernelPattern or a traced kernel):
// does it fit the device, and how many of its blocks are resident on an SM.
#pragma once

#include <cstdint>
#include <string_view>

#include "cachewise/model.hpp"

namespace cachewise::detail {

/// CUDA's launch limits (every compute capability since 3.0): a grid of at most 2^31 - 1 blocks
/// in x and 65535 in y and z; a block of at most 1024 threads, 1024 in x and y, 64 in z.
inline constexpr Dim3 kMaxGridDims = {(std::int64_t{1} << 31) - 1, 65535, 65535};
inline constexpr Dim3 kMaxBlockDims = {1024, 1024, 64};
inline constexpr std::int64_t kMaxBlockThreads = 1024;

/// What occupancy depends on.
struct LaunchShape {
  Dim3 grid;
  Dim3 block;
  std::int64_t shared_bytes_per_block = 0;
  std::int64_t registers_per_thread = 32;
};

/// Throws InputError "<subject> needs ..." naming the first per-block limit the launch exceeds.
void check_launch_fits(const LaunchShape& launch, const DeviceProfile& profile, std::string_view subject);

/// Resident blocks per SM (0 if a block cannot launch).
int resident_blocks_per_sm(const LaunchShape& launch, const DeviceProfile& profile);

} // namespace cachewise::detail
