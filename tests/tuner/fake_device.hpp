// A fake Device for launch-layer tests: host memory at hand-derivable addresses, every call
// recorded, the launch limits checked as the driver would, and each launch's time and
// effect on memory supplied by the test.
#pragma once

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/device.hpp"

namespace cachewise::tuner::testing {

struct RecordedLaunch {
  std::string entry;
  LaunchShape shape;
  PackedArguments arguments;
};

class FakeDevice final : public Device {
public:
  /// Buffer k (from 1, in allocation order) lies at kFirstAddress + k * kAddressStep.
  static constexpr std::uint64_t kFirstAddress = 0x7f0000000000;
  static constexpr std::uint64_t kAddressStep = 0x100000;

  struct Log {
    std::vector<std::string> modules;      ///< images loaded
    std::vector<std::int64_t> allocations; ///< bytes, in order
    std::int64_t releases = 0;
    std::vector<RecordedLaunch> launches;
  };

  /// `time_ms` gives each launch's time; `effect` may change memory (reached by address).
  FakeDevice(DeviceLimits limits, Log& log, std::function<double(const RecordedLaunch&)> time_ms,
             std::function<void(const RecordedLaunch&, FakeDevice&)> effect = {})
      : limits_(std::move(limits)), log_(log), time_ms_(std::move(time_ms)), effect_(std::move(effect)) {}

  DeviceLimits limits() const override { return limits_; }
  std::uint64_t load_module(const std::string& image) override {
    log_.modules.push_back(image);
    return log_.modules.size() - 1;
  }
  std::uint64_t function(std::uint64_t module, const std::string& entry) override {
    entries_.push_back(entry);
    static_cast<void>(module);
    return entries_.size() - 1;
  }
  DeviceBuffer allocate(std::int64_t bytes) override {
    log_.allocations.push_back(bytes);
    const std::uint64_t id = log_.allocations.size();
    memory_[id].assign(static_cast<std::size_t>(bytes), std::byte{0});
    return {id, kFirstAddress + id * kAddressStep, bytes};
  }
  void release(const DeviceBuffer& buffer) override {
    memory_.erase(buffer.id);
    ++log_.releases;
  }
  void copy_to_device(const DeviceBuffer& buffer, std::span<const std::byte> bytes) override {
    std::vector<std::byte>& memory = memory_.at(buffer.id);
    if (bytes.size() > memory.size()) throw InputError("fake device: copy past the buffer");
    std::memcpy(memory.data(), bytes.data(), bytes.size());
  }
  std::vector<std::byte> copy_from_device(const DeviceBuffer& buffer) override { return memory_.at(buffer.id); }
  double launch_timed(std::uint64_t function, const LaunchShape& shape, const PackedArguments& arguments) override {
    check_launch_limits(shape, limits_);
    log_.launches.push_back({entries_.at(function), shape, arguments});
    if (effect_) effect_(log_.launches.back(), *this);
    return time_ms_(log_.launches.back());
  }

  /// The memory of the buffer at `address` (its start).
  std::vector<std::byte>& memory_at(std::uint64_t address) {
    return memory_.at((address - kFirstAddress) / kAddressStep);
  }

private:
  DeviceLimits limits_;
  Log& log_;
  std::function<double(const RecordedLaunch&)> time_ms_;
  std::function<void(const RecordedLaunch&, FakeDevice&)> effect_;
  std::vector<std::string> entries_;
  std::map<std::uint64_t, std::vector<std::byte>> memory_;
};

/// An H200-like device with a small L2, so buffer sets are few and countable.
inline DeviceLimits fake_limits(std::int64_t l2_bytes) {
  DeviceLimits limits;
  limits.name = "Fake GPU";
  limits.compute_capability = 90;
  limits.max_threads_per_block = 1024;
  limits.max_block = {1024, 1024, 64};
  limits.max_grid = {2147483647, 65535, 65535};
  limits.max_shared_bytes_per_block = 227 * 1024;
  limits.l2_bytes = l2_bytes;
  limits.global_memory_bytes = std::int64_t{1} << 30;
  return limits;
}

} // namespace cachewise::tuner::testing
