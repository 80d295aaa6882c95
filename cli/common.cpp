#include "common.hpp"

#include <iostream>

#ifdef CACHEWISE_WITH_CUDA
#include "cachewise/kernels.hpp"
#endif

namespace cachewise::cli {

std::string local_device_name() {
#ifdef CACHEWISE_WITH_CUDA
  return kernels::local_device_name();
#else
  return {};
#endif
}

LoadedProfile load_profile_for_cli(const std::string& explicit_path) {
  if (!explicit_path.empty()) return {load_profile(explicit_path), explicit_path, "--profile"};
  const std::string device = local_device_name();
  const std::filesystem::path path = bundled_profile_path(device);
  DeviceProfile profile = load_profile(path);
  const bool matches = !device.empty() && profile.device.name == device;
  return {std::move(profile), path,
          matches ? "bundled, matches the local GPU" : "bundled default (no local GPU matched)"};
}

void print_json(const nlohmann::json& json) { std::cout << json.dump(2) << '\n'; }

} // namespace cachewise::cli
