// Fake GPUs for tests: a device list and deterministic measured times from a JSON file, so
// multi-GPU and MPI scheduling run on a machine without a GPU through the same code: the same
// device selection, pinning, child processes, journal and pick; only the DeviceSource differs.
// The test executable advisor_fake_gpus (tests/cli/) injects the list CACHEWISE_FAKE_DEVICES
// names (docs/tuner.md has the format).
#pragma once

#include <filesystem>
#include <map>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/tuner/device_source.hpp"
#include "cachewise/tuner/devices.hpp"
#include "cachewise/tuner/execution.hpp"

namespace cachewise::tuner {

struct FakeDevice {
  MeasuringDevice device;
  double scale = 1.0;                     ///< every time of this device is multiplied by it
  std::map<std::string, double> times_ms; ///< per config (Config::to_string), over the list's
};

struct FakeDevices {
  std::vector<FakeDevice> devices;        ///< index = position
  std::map<std::string, double> times_ms; ///< per config
  double default_ms = 1.0;                ///< a config in no table
  double sleep_ms = 0.0;                  ///< wall time each call takes (so runs overlap, and can be killed mid-run)
  double jitter_fraction = 0.0;           ///< call i returns t * (1 + jitter * ((i % 3) - 1))
  std::vector<std::string> crash_configs; ///< their measuring process aborts (SIGABRT)
};

/// Throws InputError for a missing or malformed file (the field named).
FakeDevices load_fake_devices(const std::filesystem::path& path);

/// The fake device list's time of `config` on device `index` (before jitter).
double fake_time_ms(const FakeDevices& fakes, int index, const Config& config);

/// A Measure that reads the device it was pinned to from CUDA_VISIBLE_DEVICES in the
/// measuring process (device 0 when unset), as a CUDA program sees only that device, and
/// returns its fake time; throws InputError when the pinned index is not in the list.
Measure fake_measure(FakeDevices fakes);

/// The fake list as a run's device source: its devices, each candidate measured by fake_measure.
class FakeDeviceSource final : public DeviceSource {
public:
  explicit FakeDeviceSource(FakeDevices fakes) : fakes_(std::move(fakes)) {}
  std::vector<MeasuringDevice> list(std::string* why_none) const override;
  Measure measure(const std::function<Measure()>& real) const override;

private:
  FakeDevices fakes_;
};

} // namespace cachewise::tuner
