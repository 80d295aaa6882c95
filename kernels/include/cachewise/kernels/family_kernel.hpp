// cachewise::kernels::launch_family_kernel: the real CUDA kernel of every built-in pattern family, launched
// from the same ProblemSpec + Config the model simulates (docs/pattern-families.md).
#pragma once

#include "cachewise/kernels/workload.hpp"
#include "cachewise/model/problem.hpp"

namespace cachewise::kernels {

/// Launches the family's kernel for `config` on the workload's selected set, asynchronously.
/// The config is first checked with model::build_pattern, so a bad config fails with the
/// same InputError as `advisor simulate`; a config the model accepts but no compiled kernel
/// covers (e.g. gemm tm=16) fails with an InputError naming the compiled values.
void launch_family_kernel(const ProblemSpec& problem, const Config& config, Workload& workload, void* stream = nullptr);

} // namespace cachewise::kernels
