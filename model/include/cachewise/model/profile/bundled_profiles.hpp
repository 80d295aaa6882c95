// cachewise bundled device profiles (profiles/): where they are searched for and which one a
// device gets.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace cachewise {

/// Folders searched for bundled profiles, in order: $CACHEWISE_PROFILE_DIR, share/cachewise/profiles
/// beside the running executable's prefix, the configured install prefix, the source tree.
std::vector<std::filesystem::path> bundled_profile_dirs();
/// The bundled profile for a device name (e.g. "NVIDIA H200"), or the H200 one when none matches.
std::filesystem::path bundled_profile_path(std::string_view device_name = {});

} // namespace cachewise
