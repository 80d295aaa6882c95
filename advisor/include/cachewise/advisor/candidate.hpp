// cachewise::advisor::Candidate — one config with its resource use, prediction and reason, and
// the order candidates rank in.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "cachewise/advisor/compiler_resources.hpp"
#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// A config with its pattern's resource use and its prediction.
struct Candidate {
  Config config;
  std::int64_t threads_per_block = 0;
  std::int64_t shared_bytes_per_block = 0;
  std::int64_t registers_per_thread = 0;
  int blocks_per_sm = 0;
  Prediction prediction;
  std::string reason;                        ///< one line naming the mechanism, from the numbers
  std::optional<CompilerResources> compiled; ///< user kernels only
  /// The predicted time's error band (the profile calibration's, docs/calibration.md); none
  /// when the calibration has no band.
  std::optional<TimeInterval> time_band;
  /// Not the best, but its band overlaps the best's: the model cannot tell them apart; measure.
  bool tie_with_best = false;
};

/// Orders candidates best first: shortest predicted time first, ties broken by fewer threads,
/// then less shared memory, then fewer registers.
bool ranks_before(const Candidate& a, const Candidate& b);
void rank_candidates(std::span<Candidate> candidates);

} // namespace cachewise::advisor
