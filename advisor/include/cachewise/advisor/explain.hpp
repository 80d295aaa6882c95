// cachewise::advisor::explain — one-line reasons for a candidate, from the predicted numbers.
#pragma once

#include <string>

#include "cachewise/advisor/candidate.hpp"
#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// One line explaining `candidate` against `other`, a config differing in the parameters
/// that the text names, e.g. "pad=1 (vs 0) removes the 32-way bank conflict of shared
/// loads: 1.9x faster". The mechanism is the counter that differs most among those feeding
/// the slower one's bottleneck.
std::string explain_against(const Candidate& candidate, const Candidate& other);

/// One line explaining a candidate on its own numbers (no neighbour to compare with).
std::string explain_alone(const Candidate& candidate, const DeviceProfile& profile);

} // namespace cachewise::advisor
