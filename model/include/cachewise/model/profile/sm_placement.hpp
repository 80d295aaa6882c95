// cachewise SM placement: which near L2 partition a block of a wave starts on, by the device
// profile's SmPlacement (the order the hardware deals blocks to SMs, docs/probe.md).
#pragma once

#include <cstdint>

#include "cachewise/model/profile/device_profile.hpp"

namespace cachewise {

/// Near partition of the i-th block of a wave: that of the SM the hardware deals it to.
int near_partition_of_block(const SmPlacement& placement, std::int64_t block);

/// Pairs of neighbouring blocks (i, i + 1) among the first dispatch_sm_ids.size() of a wave
/// that start on SMs of one near partition.
int neighbours_sharing_a_partition(const SmPlacement& placement);

} // namespace cachewise
