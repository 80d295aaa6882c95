// cachewise occupancy: whether a pattern can launch on a device, and how many of its blocks an
// SM holds at once.
#pragma once

#include "cachewise/model/pattern/pattern.hpp"
#include "cachewise/model/profile/device_profile.hpp"

namespace cachewise {

/// Throws InputError naming the limit when the pattern cannot launch on the device
/// (threads per block, shared memory per block, registers, ...).
void check_fits_device(const KernelPattern& pattern, const DeviceProfile& profile);

/// Resident blocks per SM for the pattern on the device (0 if it cannot launch).
int blocks_per_sm(const KernelPattern& pattern, const DeviceProfile& profile);

} // namespace cachewise
