// Shared by the GPU components (kernels, cupti, probe): CUDA status -> exception.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace cachewise::kernels {

/// Throws std::runtime_error "<what>: <CUDA error string>" unless `status` is cudaSuccess.
inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

/// An attribute of the current device, e.g. cudaDevAttrL2CacheSize.
inline int current_device_attribute(cudaDeviceAttr attribute, const char* what) {
  int device = 0;
  int value = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&value, attribute, device), what);
  return value;
}

} // namespace cachewise::kernels
