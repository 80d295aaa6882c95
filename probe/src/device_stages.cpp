// Stages: device identity and clocks.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <optional>

#include "device_info.hpp"
#include "probe_stages.hpp"

namespace cachewise::probe::detail {

void Probe::identity() {
  DeviceIdentity& device = profile_.device;
  read_device_identity(options_.device, device, profile_.shared_memory);
  device.probed_at = utc_now();
  device.probe_command = options_.command_line;
  device.probe_version = std::string("cachewise probe 1") + (quick() ? " (quick)" : "");
  // One buffer for every stage, laid out in fixed regions (see kBufferBytes).
  buffer_ = std::make_unique<DeviceBuffer>(kBufferBytes);
  // A 2 ms spin first, so the clocks read are those of a busy GPU.
  const double spun_clock_mhz = gpu::measured_sm_clock_mhz();
  sm_ids_ = gpu::sm_ids();
  home_sm_ = sm_ids_.front();
  const std::optional<ObservedClocks> clocks = read_clocks_nvml(options_.device);
  device.sm_clock_mhz_before = clocks ? clocks->sm_mhz : static_cast<int>(std::lround(spun_clock_mhz));
  device.memory_clock_mhz = clocks ? clocks->memory_mhz : 0;
}

void Probe::clocks_after() {
  const std::optional<ObservedClocks> clocks = read_clocks_nvml(options_.device);
  profile_.device.sm_clock_mhz_after =
      clocks ? clocks->sm_mhz : static_cast<int>(std::lround(gpu::measured_sm_clock_mhz()));
  if (clocks && profile_.device.memory_clock_mhz == 0) profile_.device.memory_clock_mhz = clocks->memory_mhz;
}

} // namespace cachewise::probe::detail
