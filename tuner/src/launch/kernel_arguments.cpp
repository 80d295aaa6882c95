// Argument marshalling and the launch-limit check shared by every Device.
#include "cachewise/tuner/kernel_arguments.hpp"

#include <bit>

#include "cachewise/model/errors.hpp"

namespace cachewise::tuner {
namespace {

std::string dims(const Dim3& d) { return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z); }

} // namespace

PackedArguments pack_arguments(const std::vector<KernelParameter>& parameters,
                               const std::vector<std::vector<std::uint8_t>>& values) {
  if (parameters.size() != values.size()) {
    throw InputError("kernel arguments: " + std::to_string(values.size()) + " values for " +
                     std::to_string(parameters.size()) + " parameters");
  }
  PackedArguments packed;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const KernelParameter& parameter = parameters[i];
    if (parameter.bytes < 1 || static_cast<std::size_t>(parameter.bytes) != values[i].size()) {
      throw InputError("kernel parameter '" + parameter.name + "' is " + std::to_string(parameter.bytes) +
                       " bytes, its value " + std::to_string(values[i].size()));
    }
    if (parameter.align < 1 || !std::has_single_bit(static_cast<std::uint64_t>(parameter.align))) {
      throw InputError("kernel parameter '" + parameter.name + "': alignment " + std::to_string(parameter.align) +
                       " is not a power of two");
    }
    const auto align = static_cast<std::size_t>(parameter.align);
    const std::size_t offset = (packed.bytes.size() + align - 1) / align * align;
    packed.bytes.resize(offset + values[i].size(), std::byte{0});
    for (std::size_t b = 0; b < values[i].size(); ++b) packed.bytes[offset + b] = static_cast<std::byte>(values[i][b]);
    packed.offsets.push_back(offset);
  }
  return packed;
}

void check_launch_limits(const LaunchShape& shape, const DeviceLimits& limits) {
  const std::int64_t threads = shape.block.count();
  if (shape.block.x < 1 || shape.block.y < 1 || shape.block.z < 1 || shape.grid.x < 1 || shape.grid.y < 1 ||
      shape.grid.z < 1) {
    throw InputError("launch: grid " + dims(shape.grid) + ", block " + dims(shape.block) +
                     ": every dimension must be >= 1");
  }
  if (threads > limits.max_threads_per_block) {
    throw InputError("launch past the device's limits: block " + dims(shape.block) + " = " + std::to_string(threads) +
                     " threads > " + std::to_string(limits.max_threads_per_block) + " per block");
  }
  const auto over = [](const Dim3& d, const Dim3& max) { return d.x > max.x || d.y > max.y || d.z > max.z; };
  if (over(shape.block, limits.max_block)) {
    throw InputError("launch past the device's limits: block " + dims(shape.block) + " > " + dims(limits.max_block));
  }
  if (over(shape.grid, limits.max_grid)) {
    throw InputError("launch past the device's limits: grid " + dims(shape.grid) + " > " + dims(limits.max_grid));
  }
  if (shape.dynamic_shared_bytes > limits.max_shared_bytes_per_block) {
    throw InputError("launch past the device's limits: " + std::to_string(shape.dynamic_shared_bytes) +
                     " bytes of dynamic shared memory > " + std::to_string(limits.max_shared_bytes_per_block) +
                     " per block");
  }
}

} // namespace cachewise::tuner
