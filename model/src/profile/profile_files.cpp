// Device profile files: read through the strict JSON reader, written atomically.
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cachewise/model/profile/profile_files.hpp"
#include "cachewise/model/profile/profile_json.hpp"
#include "json_node.hpp"

namespace cachewise {

using nlohmann::json;

DeviceProfile load_profile(const std::filesystem::path& path) {
  return detail::read_json_file(path, "profile", [](const json& document) { return profile_from_json(document); });
}

void save_profile(const DeviceProfile& profile, const std::filesystem::path& path) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) throw InputError(path.string() + ": cannot write profile file");
    out << profile_to_json(profile).dump(2) << '\n';
    if (!out.flush()) throw InputError(path.string() + ": write failed");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary);
    throw InputError(path.string() + ": cannot move profile into place (" + error.message() + ")");
  }
}

} // namespace cachewise
