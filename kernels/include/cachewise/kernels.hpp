// cachewise::kernels — real CUDA kernels for every built-in pattern family, launched from the
// same ProblemSpec + Config the model simulates (docs/pattern-families.md), a CPU reference to
// check them, and event-based timing. No CUDA type appears here: streams travel as void*.
// An umbrella over the one-concept headers in cachewise/kernels/.
#pragma once

#include "cachewise/kernels/device.hpp"
#include "cachewise/kernels/family_kernel.hpp"
#include "cachewise/kernels/reference.hpp"
#include "cachewise/kernels/timing.hpp"
#include "cachewise/kernels/workload.hpp"
