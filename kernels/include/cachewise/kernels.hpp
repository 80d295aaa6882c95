// cachewise::kernels — real CUDA kernels for every built-in pattern family, launched from the
// same Config the model simulates, plus the small device helpers the GPU components share.
#pragma once

#include <string>

#include "cachewise/model.hpp"

namespace cachewise::kernels {

/// Name of CUDA device 0 ("NVIDIA H200"), or empty when no device is usable.
std::string local_device_name();

/// Throws NoDeviceError("no CUDA device: <reason>") unless `device` is usable; selects it.
void require_device(int device = 0);

} // namespace cachewise::kernels
