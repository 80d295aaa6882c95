// cachewise::advisor::in_parallel — a thread utility: indexed work on a few threads, the first
// exception rethrown. The advisor's screening, the front end's compiles and the tuner's builds use it.
#pragma once

#include <cstddef>
#include <functional>

namespace cachewise::advisor {

/// Runs run_one(0 .. count-1) on `threads` threads (0: one per hardware thread); the first
/// exception stops the rest and is rethrown.
void in_parallel(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& run_one);

} // namespace cachewise::advisor
