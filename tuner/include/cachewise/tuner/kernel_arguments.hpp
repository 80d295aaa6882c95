// cachewise::tuner kernel arguments: the marshalled argument buffer of a launch, laid out by
// the entry's .param list (sizes and alignment from the PTX).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cachewise/tuner/device.hpp"

namespace cachewise::tuner {

struct KernelParameter {
  std::string name;
  std::int64_t bytes = 0;
  std::int64_t align = 1;
};

/// Packs one value per parameter (a pointer's device address, or an integer argument as
/// two's complement). Throws InputError for a count mismatch, a parameter wider than 8 bytes
/// (an aggregate passed by value), a bad alignment, or a value that does not fit its size.
PackedArguments pack_arguments(const std::vector<KernelParameter>& parameters, const std::vector<std::uint64_t>& values);

} // namespace cachewise::tuner
