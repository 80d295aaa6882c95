// cachewise simulation: a KernelPattern run against a DeviceProfile (coalescing, banks, L1,
// partitioned L2, DRAM, time), exactly or by steady-state sampling (docs/model.md).
#pragma once

#include <cstdint>

#include "cachewise/model/pattern/pattern.hpp"
#include "cachewise/model/timing/prediction.hpp"
#include "cachewise/model/profile/device_profile.hpp"

namespace cachewise {

struct SimulationOptions {
  /// Steady-state sampling (docs/model.md): once this much work (warp instructions plus the
  /// cache lines they touch) has been simulated, stop after the current wave and scale the
  /// counts to all blocks; when one wave alone is over budget, simulate part of it (the same
  /// number of blocks per SM); a phase loop (gemm's k-steps) longer than the budget allows is
  /// cut to its first iterations the same way. 0 = simulate everything exactly. The default
  /// keeps one candidate of an n=4096 transpose well under 50 ms; tests bound the error.
  std::int64_t work_budget = std::int64_t{1} << 17;
  /// 0 = no extra limit; otherwise also cap the simulated blocks (rounded up to whole waves).
  std::int64_t max_simulated_blocks = 0;
  /// Screening (0 = off): simulate as if the device had only this many SMs, with the L2
  /// capacity scaled by this / sm_count, and scale the counts to all blocks. A wave then
  /// needs only this many blocks instead of one per SM, so a candidate costs a fraction of a
  /// full simulation; counters stay within the bounds of tests/model/screening_test.cpp, and
  /// the prediction is marked sampled. The advisor ranks with it, then refines the best.
  int simulated_sm_count = 0;
};

Prediction simulate(const KernelPattern& pattern, const DeviceProfile& profile, const SimulationOptions& options = {});

} // namespace cachewise
