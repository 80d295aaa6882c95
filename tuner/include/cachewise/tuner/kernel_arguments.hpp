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
  std::string type; ///< the PTX type: "u64", "f32", "b8" (a struct's bytes)
};

/// Packs each parameter's bytes (frontend::kernel_parameter_values: an address, a scalar as
/// its type, a struct's fields) at its alignment. Throws InputError for a count mismatch, a
/// value of another size than its parameter, or a bad alignment.
PackedArguments pack_arguments(const std::vector<KernelParameter>& parameters,
                               const std::vector<std::vector<std::uint8_t>>& values);

} // namespace cachewise::tuner
