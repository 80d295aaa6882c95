// cachewise::advisor::suggestion_svg — a ranking drawn for people (`advisor suggest --plot FILE.svg`): SVG text
// written here, no plotting dependency.
#pragma once

#include <string>
#include <vector>

#include "cachewise/advisor/suggestion.hpp"

namespace cachewise::advisor {

/// Each ranked candidate's predicted time with its error band (a point on a bar), fastest at the
/// top, labelled by the parameters that vary (in `parameter_order`, then any others); when
/// exactly two parameters vary, a heat map of the predicted time over them as well (each cell
/// the fastest candidate of that pair; an empty cell is a pair with no feasible candidate).
/// At most kPlottedCandidates rows; the rest are counted under the chart.
std::string suggestion_svg(const Suggestion& suggestion, const std::string& title,
                           const std::vector<std::string>& parameter_order);

inline constexpr std::size_t kPlottedCandidates = 100;

} // namespace cachewise::advisor
