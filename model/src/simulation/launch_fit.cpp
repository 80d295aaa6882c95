// Occupancy: the per-block limits a launch must meet and the blocks an SM holds at once.
#include "simulation/launch_fit.hpp"

#include <algorithm>
#include <string>

namespace cachewise::detail {
namespace {

constexpr std::int64_t kReservedSharedBytesPerBlock = 1024; // the runtime's per-block reservation (sm_80+)
constexpr std::int64_t kRegisterAllocationUnit = 256;       // registers are granted per warp in these units

std::int64_t registers_per_warp(const LaunchShape& launch, int warp_size) {
  const std::int64_t raw = launch.registers_per_thread * warp_size;
  return (raw + kRegisterAllocationUnit - 1) / kRegisterAllocationUnit * kRegisterAllocationUnit;
}

std::int64_t warps_per_block(const LaunchShape& launch, int warp_size) {
  return (launch.block.count() + warp_size - 1) / warp_size;
}

} // namespace

void check_launch_fits(const LaunchShape& launch, const DeviceProfile& profile, std::string_view subject) {
  const DeviceIdentity& device = profile.device;
  const std::int64_t threads = launch.block.count();
  if (threads > device.max_threads_per_block) {
    throw InputError(std::string(subject) + " needs " + std::to_string(threads) +
                     " threads per block; the device allows " + std::to_string(device.max_threads_per_block));
  }
  const std::int64_t shared = launch.shared_bytes_per_block;
  if (shared > profile.shared_memory.per_block_optin_bytes) {
    throw InputError(std::string(subject) + " needs " + std::to_string(shared) +
                     " bytes of shared memory per block; the device allows " +
                     std::to_string(profile.shared_memory.per_block_optin_bytes));
  }
  const std::int64_t registers =
      registers_per_warp(launch, device.warp_size) * warps_per_block(launch, device.warp_size);
  if (registers > device.registers_per_block) {
    throw InputError(std::string(subject) + " needs " + std::to_string(registers) +
                     " registers per block; the device allows " + std::to_string(device.registers_per_block));
  }
  const auto dims = [](const Dim3& d) {
    return std::to_string(d.x) + " x " + std::to_string(d.y) + " x " + std::to_string(d.z);
  };
  if (launch.grid.x > kMaxGridDims.x) {
    throw InputError(std::string(subject) + " grid " + dims(launch.grid) + " exceeds CUDA's limit of " +
                     std::to_string(kMaxGridDims.x) + " blocks in x");
  }
  if (launch.grid.y > kMaxGridDims.y || launch.grid.z > kMaxGridDims.z) {
    throw InputError(std::string(subject) + " grid " + dims(launch.grid) +
                     " exceeds the device's 65535 limit in y or z");
  }
  if (launch.block.x > kMaxBlockDims.x || launch.block.y > kMaxBlockDims.y || launch.block.z > kMaxBlockDims.z) {
    throw InputError(std::string(subject) + " block " + dims(launch.block) +
                     " exceeds CUDA's limits of 1024 threads in x and y, 64 in z");
  }
}

int resident_blocks_per_sm(const LaunchShape& launch, const DeviceProfile& profile) {
  const DeviceIdentity& device = profile.device;
  const std::int64_t threads = launch.block.count();
  const std::int64_t shared = launch.shared_bytes_per_block;
  const std::int64_t warps = warps_per_block(launch, device.warp_size);
  const std::int64_t registers = registers_per_warp(launch, device.warp_size) * warps;
  if (threads > device.max_threads_per_block || shared > profile.shared_memory.per_block_optin_bytes ||
      registers > device.registers_per_block) {
    return 0;
  }
  std::int64_t blocks = device.max_blocks_per_sm;
  blocks = std::min(blocks, device.max_threads_per_sm / (warps * device.warp_size));
  blocks = std::min(blocks, device.registers_per_sm / registers);
  blocks = std::min(blocks, profile.shared_memory.per_sm_bytes / (shared + kReservedSharedBytesPerBlock));
  return static_cast<int>(std::max<std::int64_t>(blocks, 0));
}

} // namespace cachewise::detail
