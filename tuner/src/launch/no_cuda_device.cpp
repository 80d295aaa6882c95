// A build without CUDA has no device to open: tuning takes the static path.
#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/device.hpp"
#include "cachewise/tuner/devices.hpp"

namespace cachewise::tuner {

std::unique_ptr<Device> open_cuda_device(int /*ordinal*/) { throw NoDeviceError("no CUDA device: built without CUDA"); }

std::vector<MeasuringDevice> list_cuda_devices() { throw NoDeviceError("no CUDA device: built without CUDA"); }

} // namespace cachewise::tuner
