// cachewise device profile files: reading one, writing one atomically.
#pragma once

#include <filesystem>

#include "cachewise/model/profile/device_profile.hpp"

namespace cachewise {

/// Reads a profile file; errors are prefixed by the file name.
DeviceProfile load_profile(const std::filesystem::path& path);
/// Writes atomically (temporary file in the same folder, then rename).
void save_profile(const DeviceProfile& profile, const std::filesystem::path& path);

} // namespace cachewise
