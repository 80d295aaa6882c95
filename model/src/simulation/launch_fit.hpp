// The fit and occupancy of a launch, whatever describes the kernel (a KernelPattern or a traced
// kernel): does it fit the device, and how many of its blocks are resident on an SM.
#pragma once

#include <cstdint>
#include <string_view>

#include "cachewise/model/pattern/pattern.hpp"
#include "cachewise/model/profile/device_profile.hpp"
#include "pattern/launch_limits.hpp"

namespace cachewise::detail {

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
