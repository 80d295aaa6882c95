#include "tune_devices.hpp"

#include <cctype>
#include <filesystem>

namespace cachewise::cli {

TuneDevices tune_devices(const std::string& gpus) {
  TuneDevices devices;
  devices.fakes = tuner::fake_devices_from_environment();
  const std::vector<tuner::MeasuringDevice> present = tuner::list_devices(&devices.why_none);
  if (!gpus.empty()) {
    devices.groups = tuner::group_by_model(tuner::select_devices(gpus, present));
  } else if (!present.empty()) {
    devices.groups = {{present.front()}};
  }
  return devices;
}

tuner::Measure measure_on(const TuneDevices& devices, const std::function<tuner::Measure()>& real) {
  return devices.fakes ? tuner::fake_measure(*devices.fakes) : real();
}

nlohmann::json devices_json(const std::vector<tuner::MeasuringDevice>& devices) {
  nlohmann::json list = nlohmann::json::array();
  for (const tuner::MeasuringDevice& device : devices) list.push_back(tuner::device_to_json(device));
  return list;
}

std::string path_for_model(const std::string& file, const std::string& model, std::size_t models) {
  if (file.empty() || models < 2) return file;
  std::string slug;
  for (const char c : model) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!slug.empty() && slug.back() != '_') {
      slug += '_';
    }
  }
  std::filesystem::path path = file;
  const std::string extension = path.extension().string();
  path.replace_extension();
  path += "." + slug + extension;
  return path.string();
}

} // namespace cachewise::cli
