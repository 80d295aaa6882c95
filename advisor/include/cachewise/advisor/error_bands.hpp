// cachewise::advisor::mark_error_bands — the calibration's error band on every ranked candidate,
// and which of them the model cannot tell from the best.
#pragma once

#include <string_view>

#include "cachewise/advisor/suggestion.hpp"
#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// Sets the calibration's name, and each candidate's band and tie flag, from `profile`'s
/// calibration: the band of `family` (kAllFamiliesBand for a custom pattern).
void mark_error_bands(Suggestion& suggestion, const DeviceProfile& profile, std::string_view family);

} // namespace cachewise::advisor
