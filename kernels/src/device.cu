#include <dlfcn.h>

#include <cuda_runtime.h>

#include "cachewise/kernels.hpp"
#include "cuda_check.hpp"

namespace cachewise::kernels {

std::string local_device_name() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError(); // clear the sticky "no device" error
    return {};
  }
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, 0) != cudaSuccess) return {};
  return properties.name;
}

namespace {

/// The CUDA runtime reports a machine without the driver as cudaErrorInsufficientDriver ("CUDA
/// driver version is insufficient"): whether libcuda loads at all tells the two apart.
bool driver_library_loads() {
  void* library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) return false;
  dlclose(library);
  return true;
}

std::string no_device_message(cudaError_t status) {
  if (status == cudaErrorInsufficientDriver && !driver_library_loads()) {
    return "no NVIDIA driver found (libcuda.so.1 cannot be loaded): this command runs on a GPU";
  }
  return std::string("no CUDA device: ") + cudaGetErrorString(status);
}

} // namespace

void require_device(int device) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw NoDeviceError(no_device_message(status));
  }
  if (device < 0 || device >= count) {
    throw NoDeviceError("no CUDA device: device " + std::to_string(device) + " requested, " + std::to_string(count) +
                        " present");
  }
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
}

} // namespace cachewise::kernels
