// cachewise::cupti — CUDA 13 Range Profiler wrapper: metric names + a launch in, values out.
#pragma once

#include "cachewise/kernels.hpp"

namespace cachewise::cupti {} // namespace cachewise::cupti
