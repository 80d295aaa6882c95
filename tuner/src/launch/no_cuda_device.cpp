// A build without CUDA has no device to open: tuning takes the static path.
#include "cachewise/errors.hpp"
#include "cachewise/tuner/device.hpp"

namespace cachewise::tuner {

std::unique_ptr<Device> open_cuda_device(int /*ordinal*/) { throw NoDeviceError("no CUDA device: built without CUDA"); }

} // namespace cachewise::tuner
