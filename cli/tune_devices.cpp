#include "tune_devices.hpp"

#include <cctype>
#include <filesystem>
#include <iostream>

#include "cachewise/model/errors.hpp"
#include "run_advisor.hpp"

namespace cachewise::cli {

TuneDevices tune_devices(const std::string& gpus, bool mpi) {
  TuneDevices devices;
  devices.devices = &device_source();
  if (mpi && !gpus.empty()) {
    throw InputError(
        "tune: --gpus has no effect with --mpi (each rank measures on GPU <local rank> mod <its host's GPUs>)");
  }
  const std::vector<tuner::MeasuringDevice> present = devices.source().list(&devices.why_none);
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

std::string device_tag(const tuner::MeasuringDevice& device, std::size_t devices_in_run) {
  if (device.name.empty()) return {};
  if (device.rank >= 0) return " [rank " + std::to_string(device.rank) + ": GPU " + std::to_string(device.index) + "]";
  return devices_in_run > 1 ? " [GPU " + std::to_string(device.index) + "]" : std::string();
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
