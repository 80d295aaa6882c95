// cachewise::kernels timing: CUDA-event timing of a family's kernel.
#pragma once

#include <cstdint>

#include "cachewise/kernels/workload.hpp"
#include "cachewise/model/problem.hpp"

namespace cachewise::kernels {

struct TimingOptions {
  int warmup_launches = 3; ///< at least 1: the first launch also validates the config
  int repeats = 20;
  /// 0: as many sets (up to 8) as make the data at least 3x the device's L2, so repeated
  /// launches do not measure a warm cache; 1: always the same buffers (warm-L2 timing).
  int input_sets = 0;
  std::uint64_t seed = 1;
};

struct Timing {
  double median_ms = 0.0;
  double p25_ms = 0.0;
  double p75_ms = 0.0;
  int repeats = 0;
  /// The pattern's useful bytes (each input read once, each output written once) / median.
  double bandwidth_gb_per_s = 0.0;
};

/// Times one kernel with CUDA events: warm-up launches, then `repeats` launches each timed on
/// its own, rotating through the input sets; reports the median and quartiles.
Timing time_kernel(const ProblemSpec& problem, const Config& config, const TimingOptions& options = {});
/// Same, on a workload the caller keeps (to time many configs of one problem cheaply).
Timing time_kernel(const ProblemSpec& problem, const Config& config, Workload& workload,
                   const TimingOptions& options = {});

/// Input sets time_kernel(problem, config, options) allocates when options.input_sets is 0:
/// enough (up to 8) that the data is at least 3x the device's L2.
int timing_input_sets(const ProblemSpec& problem, const Config& config);

} // namespace cachewise::kernels
