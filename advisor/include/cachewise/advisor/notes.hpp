// Warnings for the CLI to print on stderr: facts about the user's problem that change what the
// numbers mean, but are not errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// "32 blocks on 132 SMs: 100 SMs idle" when the grid has fewer blocks than the device SMs.
std::optional<std::string> idle_sm_warning(std::int64_t grid_blocks, int sm_count);

/// For a family whose n is not a side length (copy: an element count), what the size is:
/// "copy n=4096 elements = 16 KiB per array".
std::optional<std::string> size_warning(const ProblemSpec& problem);

} // namespace cachewise::advisor
