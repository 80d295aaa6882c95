// The default suggest() screens every candidate cheaply (4 simulated SMs, small budget) and
// refines the best 32 (SuggestOptions). Against ranking every candidate with the model's
// default simulation: the screened best 32 hold the true best three (or a config tied with
// each, within 0.1 %), and the final pick is the true best up to such a tie.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "cachewise/advisor.hpp"

namespace cachewise::advisor {
namespace {

constexpr double kTie = 0.001; // relative: the model cannot order configs closer than this

struct FamilyCase {
  ProblemSpec problem;
  const char* fixed; ///< narrows gemm's 990 configs to keep the full ranking quick
};

class ScreeningRanks : public testing::TestWithParam<FamilyCase> {};

TEST_P(ScreeningRanks, ScreenedShortlistHoldsTheBestThreeAndThePickIsTheBest) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const FamilyCase& c = GetParam();
  SuggestOptions full;
  full.fixed = Config::parse(c.fixed);
  full.screening = SimulationOptions{};
  full.refined = 0;
  full.top = 100000;
  const Suggestion reference = suggest(c.problem, profile, full);
  std::map<std::string, double> full_time_us;
  for (const Candidate& candidate : reference.ranked)
    full_time_us[candidate.config.to_string()] = candidate.prediction.time_us;

  SuggestOptions screening_only;
  screening_only.fixed = full.fixed;
  screening_only.refined = 0;
  screening_only.top = static_cast<std::size_t>(profile.calibration.screening_refined_candidates.value);
  const Suggestion screened = suggest(c.problem, profile, screening_only);
  for (std::size_t rank = 0; rank < 3 && rank < reference.ranked.size(); ++rank) {
    const double target_us = reference.ranked[rank].prediction.time_us;
    bool held = false;
    for (const Candidate& candidate : screened.ranked) {
      held = held || full_time_us.at(candidate.config.to_string()) <= target_us * (1 + kTie);
    }
    EXPECT_TRUE(held) << describe(c.problem) << ": full-simulation #" << rank + 1 << " "
                      << reference.ranked[rank].config.to_string() << " missing from the screened best "
                      << screened.ranked.size();
  }

  SuggestOptions pipeline;
  pipeline.fixed = full.fixed;
  const Suggestion picked = suggest(c.problem, profile, pipeline);
  const double best_us = reference.ranked.front().prediction.time_us;
  EXPECT_LE(full_time_us.at(picked.ranked.front().config.to_string()), best_us * (1 + kTie))
      << describe(c.problem) << ": picked " << picked.ranked.front().config.to_string() << ", best "
      << reference.ranked.front().config.to_string();
}

INSTANTIATE_TEST_SUITE_P(Families, ScreeningRanks,
                         testing::Values(FamilyCase{{"transpose", 512}, ""}, FamilyCase{{"copy", 1 << 18}, ""},
                                         FamilyCase{{"stencil2d", 512}, ""}, FamilyCase{{"stencil3d", 48}, ""},
                                         FamilyCase{{"gemm", 256}, "pad=1"}),
                         [](const testing::TestParamInfo<FamilyCase>& info) { return info.param.problem.family; });

} // namespace
} // namespace cachewise::advisor
