// cachewise::tuner device source: where a tuning run gets its GPUs and each candidate's
// Measure. Production lists the CUDA driver's devices and measures with the real timer; tests
// inject a fake list through the same interface (tests/tuner/fake_devices.hpp), so the device
// selection, pinning, child processes, journal and pick are the production code's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cachewise/tuner/devices.hpp"
#include "cachewise/tuner/execution.hpp"

namespace cachewise::tuner {

class DeviceSource {
public:
  virtual ~DeviceSource() = default;
  /// The GPUs of this host; empty when there are none, then `why_none` (if given) says why.
  virtual std::vector<MeasuringDevice> list(std::string* why_none) const = 0;
  /// A candidate's Measure: `real` makes the one that launches it on the GPU it is pinned to.
  virtual Measure measure(const std::function<Measure()>& real) const = 0;
};

/// The CUDA driver's devices (list_devices), measured by the real Measure.
class CudaDeviceSource final : public DeviceSource {
public:
  std::vector<MeasuringDevice> list(std::string* why_none) const override { return list_devices(why_none); }
  Measure measure(const std::function<Measure()>& real) const override { return real(); }
};

} // namespace cachewise::tuner
