#include "tune_devices.hpp"

#include <cctype>
#include <filesystem>
#include <iostream>

#include "cachewise/model/errors.hpp"

namespace cachewise::cli {

TuneDevices tune_devices(const std::string& gpus, bool mpi) {
  TuneDevices devices;
  devices.fakes = tuner::fake_devices_from_environment();
  if (mpi && !gpus.empty()) {
    throw InputError(
        "tune: --gpus has no effect with --mpi (each rank measures on GPU <local rank> mod <its host's GPUs>)");
  }
  const std::vector<tuner::MeasuringDevice> present = tuner::list_devices(&devices.why_none);
  if (mpi) {
    devices.session = std::make_shared<tuner::mpi::Session>(present);
    devices.groups = {{devices.session->device()}};
  } else if (!gpus.empty()) {
    devices.groups = tuner::group_by_model(tuner::select_devices(gpus, present));
  } else if (!present.empty()) {
    devices.groups = {{present.front()}};
  }
  return devices;
}

std::optional<tuner::TuningResult> run_tuner(tuner::Tuner& tuner, const TuneDevices& devices) {
  if (devices.session) return tuner::mpi::tune(tuner, *devices.session);
  return tuner.tune();
}

void on_every_rank(const TuneDevices& devices, const std::function<void()>& work) {
  if (!devices.session) return work();
  constexpr int kBadInput = 2;
  try {
    work();
  } catch (const InputError& e) {
    std::cerr << "advisor: " << e.what() << '\n';
    devices.session->abort(kBadInput);
  } catch (const NoDeviceError& e) {
    std::cerr << "advisor: " << e.what() << '\n';
    devices.session->abort(kBadInput);
  } catch (const std::exception& e) {
    std::cerr << "advisor: error: " << e.what() << '\n';
    devices.session->abort(1);
  }
}

tuner::Measure measure_on(const TuneDevices& devices, const std::function<tuner::Measure()>& real) {
  return devices.fakes ? tuner::fake_measure(*devices.fakes) : real();
}

std::string device_tag(const tuner::MeasuringDevice& device, std::size_t devices_in_run) {
  if (device.name.empty()) return {};
  if (device.rank >= 0) return " [rank " + std::to_string(device.rank) + ": GPU " + std::to_string(device.index) + "]";
  return devices_in_run > 1 ? " [GPU " + std::to_string(device.index) + "]" : std::string();
}

nlohmann::json devices_json(const std::vector<tuner::MeasuringDevice>& devices) {
  nlohmann::json list = nlohmann::json::array();
  for (const tuner::MeasuringDevice& device : devices) list.push_back(tuner::device_to_json(device));
  return list;
}

nlohmann::json tuned_bucket_json(const std::vector<std::pair<std::string, std::int64_t>>& sizes) {
  nlohmann::json bucket = nlohmann::json::array();
  for (const auto& [name, value] : sizes) bucket.push_back({{"name", name}, {"value", value}});
  return bucket;
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
