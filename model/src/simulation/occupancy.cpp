// The occupancy questions asked of a pattern: does it fit the device, and how many of its
// blocks does an SM hold at once? The limits themselves are launch_fit.cpp's, shared with
// traced kernels.
#include "cachewise/model/simulation/occupancy.hpp"

#include "simulation/launch_fit.hpp"

namespace cachewise {
namespace {

detail::LaunchShape launch_shape(const KernelPattern& pattern) {
  return {pattern.grid, pattern.block, shared_bytes_per_block(pattern), pattern.registers_per_thread};
}

} // namespace

void check_fits_device(const KernelPattern& pattern, const DeviceProfile& profile) {
  detail::check_launch_fits(launch_shape(pattern), profile, "pattern");
}

int blocks_per_sm(const KernelPattern& pattern, const DeviceProfile& profile) {
  return detail::resident_blocks_per_sm(launch_shape(pattern), profile);
}

} // namespace cachewise
