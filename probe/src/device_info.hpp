// Device identity (cudaGetDeviceProperties, driver and runtime versions) and observed clocks.
// Clocks are only read (NVML get calls, dlopen'ed), never set.
#pragma once

#include <optional>

#include "cachewise/model.hpp"

namespace cachewise::probe {

/// Fills everything in DeviceIdentity except the clocks and the probe bookkeeping fields, plus the
/// shared-memory sizes the device reports.
void read_device_identity(int device, DeviceIdentity& identity, SharedMemoryProfile& shared_memory);

struct ObservedClocks {
  int sm_mhz = 0;
  int memory_mhz = 0;
};

/// Current SM and memory clocks from NVML (libnvidia-ml.so.1); nullopt when NVML is unavailable.
std::optional<ObservedClocks> read_clocks_nvml(int device);

} // namespace cachewise::probe
