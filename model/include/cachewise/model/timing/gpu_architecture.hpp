// cachewise GPU architecture facts the time model needs by compute capability: FP32 throughput and
// warp schedulers per SM. The table is data, model/data/gpu_architectures.json (from NVIDIA's CUDA
// C++ Programming Guide), embedded at build time.
#pragma once

namespace cachewise {

/// Floating-point FMA lanes x 2 per SM per cycle for a compute capability (the CUDA
/// Programming Guide's arithmetic-instruction throughput table); 0 when not known.
double f32_flops_per_sm_cycle(int compute_capability_major, int compute_capability_minor);
/// Warp schedulers per SM (each issues one warp instruction per cycle); 0 when not known.
int warp_schedulers_per_sm(int compute_capability_major, int compute_capability_minor);

} // namespace cachewise
