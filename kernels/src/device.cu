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

void require_device(int device) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw NoDeviceError(std::string("no CUDA device: ") + cudaGetErrorString(status));
  }
  if (device < 0 || device >= count) {
    throw NoDeviceError("no CUDA device: device " + std::to_string(device) + " requested, " + std::to_string(count) +
                        " present");
  }
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
}

} // namespace cachewise::kernels
