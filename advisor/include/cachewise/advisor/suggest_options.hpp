// cachewise::advisor::SuggestOptions — how a suggestion screens, refines and ranks its
// candidates (shared by suggest(), rank_pool(), CandidateRanking and the kernel front end).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// Predicts one pattern: model::simulate by default; tests inject their own.
using Predictor = std::function<Prediction(const KernelPattern&, const DeviceProfile&, const SimulationOptions&)>;

struct SuggestOptions {
  std::size_t top = 5;
  Config fixed; ///< keys pinned by the user (--fix)
  /// Every candidate is predicted with `screening`; the best `refined` of them are predicted
  /// again with `refinement` (unless screening simulated them exactly, Prediction::sampled
  /// false) and ranked on that. Screening simulates 4 SMs' worth of blocks on a small budget
  /// (docs/advisor.md: its near-ties are reordered, so the refined set is generous).
  SimulationOptions screening{.work_budget = std::int64_t{1} << 13, .simulated_sm_count = 4};
  SimulationOptions refinement{};
  /// Unset: the profile calibration's screening_refined_candidates (docs/calibration.md).
  std::optional<std::size_t> refined;
  /// Of the `refined`, those screened at this many times the `top`-th screened time or more are
  /// not refined (0: none is left out). Unset: the calibration's screening_refine_margin.
  std::optional<double> refine_margin;
  /// Candidates are predicted on this many threads (0: one per hardware thread); the
  /// predictor must then be safe to call concurrently (model simulate is).
  std::size_t threads = 0;
  Predictor predictor; ///< empty: model simulate
  /// Called after each simulation (screening and refinement alike) with how many are done and
  /// how many there will be, from the simulating threads (it must be thread-safe).
  std::function<void(std::size_t simulated, std::size_t total)> on_simulated;
};

} // namespace cachewise::advisor
