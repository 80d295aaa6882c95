// cachewise::validation — the model against the GPU: a built-in family's kernels
// (validate_pattern) or a user kernel's best-ranked candidates (validate_kernel) run, checked,
// timed and counted (CUPTI) beside the prediction. Libraries return; `advisor validate` prints.
//
// An umbrella over the one-concept headers in cachewise/validation/.
#pragma once

#include "cachewise/validation/evicted_pass.hpp"
#include "cachewise/validation/kernel_validation.hpp"
#include "cachewise/validation/pattern_validation.hpp"
