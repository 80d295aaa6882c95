// CUDA's launch limits on grid and block dimensions, which a pattern's launch is checked against
// (pattern_json.cpp) and every launch's fit (simulation/launch_fit.hpp).
#pragma once

#include <cstdint>

#include "cachewise/model/pattern/pattern.hpp"

namespace cachewise::detail {

/// CUDA's launch limits (every compute capability since 3.0): a grid of at most 2^31 - 1 blocks
/// in x and 65535 in y and z; a block of at most 1024 threads, 1024 in x and y, 64 in z.
inline constexpr Dim3 kMaxGridDims = {(std::int64_t{1} << 31) - 1, 65535, 65535};
inline constexpr Dim3 kMaxBlockDims = {1024, 1024, 64};
inline constexpr std::int64_t kMaxBlockThreads = 1024;

} // namespace cachewise::detail
