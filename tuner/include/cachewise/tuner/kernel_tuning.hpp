// cachewise::tuner kernel tuning: a user kernel's spec (cachewise/frontend/spec.hpp) measured
// on a Device; an umbrella over its one-concept headers.
#pragma once

#include "cachewise/tuner/autotuner.hpp"
#include "cachewise/tuner/kernel_buffers.hpp"
#include "cachewise/tuner/kernel_candidates.hpp"
#include "cachewise/tuner/loaded_kernel.hpp"
#include "cachewise/tuner/size_bucket.hpp"
