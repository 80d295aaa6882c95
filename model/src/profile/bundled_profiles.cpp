// Locating the bundled device profiles.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "cachewise/model/errors.hpp"
#include "cachewise/model/profile/bundled_profiles.hpp"

namespace cachewise {
namespace {

/// "NVIDIA H200" -> "nvidia-h200": profiles are named after the device in lower case.
std::string slug(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

constexpr std::string_view kDefaultProfile = "h200.json";

} // namespace

std::vector<std::filesystem::path> bundled_profile_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("CACHEWISE_PROFILE_DIR"); env != nullptr && *env != '\0') dirs.emplace_back(env);
  // An installed `advisor` finds the profiles beside it (PREFIX/bin -> PREFIX/share/...), wherever it was installed.
  std::error_code error;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) dirs.push_back(executable.parent_path().parent_path() / "share" / "cachewise" / "profiles");
  dirs.emplace_back(CACHEWISE_INSTALL_PROFILE_DIR);
  dirs.emplace_back(CACHEWISE_SOURCE_PROFILE_DIR);
  return dirs;
}

std::filesystem::path bundled_profile_path(std::string_view device_name) {
  const std::vector<std::filesystem::path> dirs = bundled_profile_dirs();
  std::error_code ignored;
  if (!device_name.empty()) {
    // "NVIDIA H200" matches nvidia-h200.json or h200.json.
    const std::string full = slug(device_name);
    std::vector<std::string> candidates{full + ".json"};
    if (full.starts_with("nvidia-")) candidates.push_back(full.substr(7) + ".json");
    for (const auto& dir : dirs) {
      for (const auto& candidate : candidates) {
        if (std::filesystem::is_regular_file(dir / candidate, ignored)) return dir / candidate;
      }
    }
  }
  for (const auto& dir : dirs) {
    if (std::filesystem::is_regular_file(dir / kDefaultProfile, ignored)) return dir / kDefaultProfile;
  }
  std::string searched;
  for (const auto& dir : dirs) searched += (searched.empty() ? "" : ", ") + dir.string();
  throw InputError("no bundled profile found (searched " + searched + "); pass --profile FILE");
}

} // namespace cachewise
