// cachewise::advisor::Suggestion — a ranking with its contrast, counts and rejections, and its
// JSON (`advisor suggest --json`).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cachewise/advisor/candidate.hpp"
#include "cachewise/advisor/rejection_tally.hpp"
#include "cachewise/model.hpp"

namespace cachewise::advisor {

struct Suggestion {
  ProblemSpec problem;
  std::vector<Candidate> ranked;          ///< best first, at most `top`
  std::optional<Candidate> worst;         ///< the slowest feasible candidate, for contrast
  std::uint64_t space_size = 0;           ///< unconstrained product of the value lists
  std::int64_t enumerated = 0;            ///< configs left after the space's policy constraints
  std::int64_t feasible = 0;              ///< configs that built, fit the device and were predicted
  std::vector<RejectionCount> rejections; ///< most frequent first
  SimulationOptions screening;            ///< what every candidate was predicted with
  SimulationOptions refinement;           ///< what the best `refined` were predicted with again
  std::int64_t refined = 0;
  /// When the refine margin left shortlisted candidates unrefined: the screened time (us) from
  /// which on none was refined (SuggestOptions::refine_margin x the `top`-th screened time).
  std::optional<double> refine_cut_us;
  std::string calibration;                      ///< the profile calibration's name ("defaults" without one)
  std::optional<TimeErrorBand> time_error_band; ///< the band applied to every candidate, if any
  std::chrono::duration<double> elapsed{};
};

nlohmann::json suggestion_to_json(const Suggestion& suggestion);

} // namespace cachewise::advisor
