// `advisor validate`: its options, and the runs on a GPU: a built-in family's kernels
// (validate_pattern.cpp) or a user kernel's (validate_kernel.cpp), built only with CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "cachewise/model.hpp"
#include "common.hpp"
#include "suggest_kernel.hpp"

namespace cachewise::cli {

struct ValidateOptions {
  ProblemOptions problem;
  std::string config;
  std::string fix;
  std::size_t top = 0;
  bool all = false;
  std::size_t counters = 3;
  int repeats = 15;
  std::int64_t work_budget = SimulationOptions{}.work_budget;
  std::int64_t checked_points = 4096;
  bool json = false;
  bool no_counters = false;
  KernelOptions kernel;           ///< --kernel/--spec: a user kernel instead of a --pattern
  std::string kernel_tuner_cache; ///< with --spec/--kernel: compare the ranking with this Kernel Tuner cache, no GPU
};

/// Runs the kernels on the local GPU and prints measured beside predicted.
void run_validate_pattern(const CLI::App& command, const ValidateOptions& options);

} // namespace cachewise::cli
