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

} // namespace cachewise::kernels
