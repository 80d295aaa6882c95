// cachewise::advisor::suggest — a built-in family's layouts ranked by the model's predicted
// time, and one custom pattern predicted and explained.
#pragma once

#include "cachewise/advisor/suggest_options.hpp"
#include "cachewise/advisor/suggestion.hpp"
#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// Enumerates the family's space, builds each config's pattern, drops those the model or the
/// device rejects (counted by reason), predicts the rest and ranks them (ranks_before).
/// Throws InputError for a bad problem, an unknown family, or when no config is feasible
/// (naming the most frequent rejection).
Suggestion suggest(const ProblemSpec& problem, const DeviceProfile& profile, const SuggestOptions& options = {});

/// Predicts and explains one custom pattern (from --pattern-file).
Suggestion suggest_pattern(const KernelPattern& pattern, const DeviceProfile& profile,
                           const SuggestOptions& options = {});

} // namespace cachewise::advisor
