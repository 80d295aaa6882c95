// cachewise::tuner launch layer: the device a user kernel is measured on, as an interface, so
// the same launch path runs on the CUDA driver API (open_cuda_device) and on a fake in tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cachewise/model/pattern/pattern.hpp"

namespace cachewise::tuner {

/// What a launch must respect, as the device reports it.
struct DeviceLimits {
  std::string name;
  int compute_capability = 0; ///< 90 for sm_90
  std::int64_t max_threads_per_block = 0;
  Dim3 max_block;
  Dim3 max_grid;
  std::int64_t max_shared_bytes_per_block = 0; ///< with the opt-in above 48 KiB
  std::int64_t l2_bytes = 0;
  std::int64_t global_memory_bytes = 0;
};

struct LaunchShape {
  Dim3 grid;
  Dim3 block;
  std::int64_t dynamic_shared_bytes = 0;
};

/// The kernel's arguments laid out as its .param list says: each at an offset aligned to
/// its parameter's alignment, `bytes` little-endian.
struct PackedArguments {
  std::vector<std::byte> bytes;
  std::vector<std::size_t> offsets; ///< one per parameter
};

struct DeviceBuffer {
  std::uint64_t id = 0;
  std::uint64_t address = 0; ///< the device address a pointer parameter receives
  std::int64_t bytes = 0;
};

/// Handles are the implementation's own numbers; a handle from another Device is an error.
class Device {
public:
  virtual ~Device() = default;
  virtual DeviceLimits limits() const = 0;
  /// PTX text or a cubin image; throws InputError with the loader's message on failure.
  virtual std::uint64_t load_module(const std::string& image) = 0;
  virtual std::uint64_t function(std::uint64_t module, const std::string& entry) = 0;
  virtual DeviceBuffer allocate(std::int64_t bytes) = 0;
  virtual void release(const DeviceBuffer& buffer) = 0;
  virtual void copy_to_device(const DeviceBuffer& buffer, std::span<const std::byte> bytes) = 0;
  virtual std::vector<std::byte> copy_from_device(const DeviceBuffer& buffer) = 0;
  /// Launches and waits; returns the launch's time in milliseconds (events around it).
  virtual double launch_timed(std::uint64_t function, const LaunchShape& shape, const PackedArguments& arguments) = 0;
};

/// Throws InputError naming the first limit the launch exceeds ("block 64x32x1 = 2048 threads
/// > 1024 per block").
void check_launch_limits(const LaunchShape& shape, const DeviceLimits& limits);

/// The CUDA driver API device `ordinal` (primary context). Throws NoDeviceError when there
/// is no device or the build has no CUDA.
std::unique_ptr<Device> open_cuda_device(int ordinal = 0);

} // namespace cachewise::tuner
