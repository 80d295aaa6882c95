// cachewise::kernels device utilities: which device is there, and the cache and bandwidth
// state kernels are timed against. No CUDA type appears here.
#pragma once

#include <cstdint>
#include <string>

#include "cachewise/model/errors.hpp"

namespace cachewise::kernels {

/// Name of CUDA device 0 ("NVIDIA H200"), or empty when no device is usable.
std::string local_device_name();

/// Throws NoDeviceError("no CUDA device: <reason>") unless `device` is usable; selects it.
void require_device(int device = 0);

/// Reads a scratch buffer twice the size of the device's L2, so the next kernel starts with
/// none of its data cached and nothing dirty in L2 (what the model assumes, and what
/// `ncu --cache-control all` does).
void evict_l2();

/// Device-to-device cudaMemcpy bandwidth copying `bytes`, counting bytes read + written (2 *
/// bytes per copy); median of repeats after a warm-up, rotating over buffer pairs that together
/// exceed 3x L2 so every copy reads DRAM. The ceiling kernels are held to.
double measure_copy_bandwidth_gb_per_s(std::int64_t bytes);

} // namespace cachewise::kernels
