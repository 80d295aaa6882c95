// cachewise device profile's JSON form (docs/profile-format.md), read strictly and written back.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "cachewise/model/profile/device_profile.hpp"

namespace cachewise {

/// Validates and converts; errors name the JSON path, e.g.
/// "profile.l2.line_bytes: expected a power of two, got 100".
DeviceProfile profile_from_json(const nlohmann::json& json);
nlohmann::json profile_to_json(const DeviceProfile& profile);

} // namespace cachewise
