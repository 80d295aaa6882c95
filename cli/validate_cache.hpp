// `advisor validate --spec S --kernel-tuner-cache FILE`: the front end's ranking of the spec's
// candidates against the times in a Kernel Tuner cache file (tuner/cache_comparison.hpp). No GPU.
#pragma once

#include <string>

#include "suggest_kernel.hpp"

namespace cachewise::cli {

/// `profile` empty: the bundled one.
void run_validate_cache(const KernelOptions& kernel, const std::string& cache_file, const std::string& profile,
                        bool json);

} // namespace cachewise::cli
