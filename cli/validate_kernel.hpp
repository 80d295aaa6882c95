// `advisor validate --kernel FILE.cu | --spec FILE.json`: the front end's predictions for a
// user kernel's best-ranked candidates next to their measured times and CUPTI counters,
// launched through the tuner's launch layer. Built only with CUDA; runs only on a GPU.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "suggest_kernel.hpp"

namespace cachewise::cli {

struct KernelValidateArguments {
  KernelOptions kernel;
  std::string profile;
  std::size_t top = 3; ///< the front end's K best candidates
  int repeats = 15;
  bool json = false;
  bool no_counters = false;
};

/// `counters`: the CUPTI metrics to read (those `validate --pattern` compares).
void run_validate_kernel(const KernelValidateArguments& arguments, const std::vector<std::string>& counters);

} // namespace cachewise::cli
