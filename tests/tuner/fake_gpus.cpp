// Fake GPUs: a device list and per-config times from a JSON file, for scheduling tests on a
// machine without a GPU.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cachewise/model/errors.hpp"
#include "fake_gpus.hpp"

namespace cachewise::tuner {
namespace {

std::map<std::string, double> times_table(const nlohmann::json& json) {
  std::map<std::string, double> times;
  for (const auto& [config, ms] : json.items()) {
    const double value = ms.get<double>();
    if (!(value > 0.0)) throw InputError("times_ms: " + config + " must be positive");
    times[Config::parse(config).to_string()] = value; // canonical key order
  }
  return times;
}

FakeDevices fake_devices_from_json(const nlohmann::json& json) {
  FakeDevices fakes;
  const nlohmann::json& devices = json.at("devices");
  if (!devices.is_array() || devices.empty()) throw InputError("devices: give a non-empty list");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    FakeDevice fake;
    fake.device.index = static_cast<int>(i);
    fake.device.name = devices[i].at("name").get<std::string>();
    fake.device.uuid = devices[i].value("uuid", std::string());
    fake.device.compute_capability = devices[i].value("compute_capability", 90);
    fake.scale = devices[i].value("scale", 1.0);
    if (devices[i].contains("times_ms")) fake.times_ms = times_table(devices[i].at("times_ms"));
    fakes.devices.push_back(std::move(fake));
  }
  if (json.contains("times_ms")) fakes.times_ms = times_table(json.at("times_ms"));
  fakes.default_ms = json.value("default_ms", 1.0);
  fakes.sleep_ms = json.value("sleep_ms", 0.0);
  fakes.jitter_fraction = json.value("jitter_fraction", 0.0);
  for (const nlohmann::json& config : json.value("crash_configs", nlohmann::json::array())) {
    fakes.crash_configs.push_back(Config::parse(config.get<std::string>()).to_string());
  }
  if (!(fakes.default_ms > 0.0) || fakes.sleep_ms < 0.0 || fakes.jitter_fraction < 0.0 ||
      fakes.jitter_fraction >= 1.0) {
    throw InputError("default_ms must be positive, sleep_ms >= 0, 0 <= jitter_fraction < 1");
  }
  return fakes;
}

} // namespace

FakeDevices load_fake_devices(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open the fake device list");
  try {
    return fake_devices_from_json(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path.string() + ": fake device list: " + e.what());
  } catch (const InputError& e) {
    throw InputError(path.string() + ": fake device list: " + e.what());
  }
}

double fake_time_ms(const FakeDevices& fakes, int index, const Config& config) {
  const FakeDevice& device = fakes.devices.at(static_cast<std::size_t>(index));
  const std::string key = config.to_string();
  double ms = fakes.default_ms;
  if (const auto own = device.times_ms.find(key); own != device.times_ms.end()) {
    ms = own->second;
  } else if (const auto shared = fakes.times_ms.find(key); shared != fakes.times_ms.end()) {
    ms = shared->second;
  }
  return ms * device.scale;
}

Measure fake_measure(FakeDevices fakes) {
  return [fakes = std::move(fakes)](const Config& config, std::int64_t iteration) {
    int index = 0;
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr && *visible != '\0') {
      index = std::atoi(visible);
      if (index < 0 || index >= static_cast<int>(fakes.devices.size())) {
        throw InputError("fake device " + std::string(visible) + " is not in the list");
      }
    }
    if (fakes.sleep_ms > 0.0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(fakes.sleep_ms));
    for (const std::string& crash : fakes.crash_configs) {
      if (crash == config.to_string()) std::abort();
    }
    const double wobble = static_cast<double>(iteration % 3) - 1.0;
    return fake_time_ms(fakes, index, config) * (1.0 + fakes.jitter_fraction * wobble);
  };
}

std::vector<MeasuringDevice> FakeDeviceSource::list(std::string* /*why_none*/) const {
  std::vector<MeasuringDevice> devices;
  for (const FakeDevice& fake : fakes_.devices) devices.push_back(fake.device);
  return devices;
}

Measure FakeDeviceSource::measure(const std::function<Measure()>& /*real*/) const { return fake_measure(fakes_); }

} // namespace cachewise::tuner
