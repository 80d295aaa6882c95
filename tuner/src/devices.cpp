// The devices a run measures on: --gpus selection, grouping by model, listing (the CUDA
// driver's, in a child process), and pinning a measuring child with CUDA_VISIBLE_DEVICES.
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/devices.hpp"
#include "cachewise/tuner/isolation.hpp"

namespace cachewise::tuner {
namespace {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::optional<int> parse_index(const std::string& text) {
  int value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

} // namespace

bool same_device(const MeasuringDevice& a, const MeasuringDevice& b) {
  if (!a.uuid.empty() && !b.uuid.empty()) return a.uuid == b.uuid;
  return a.host == b.host && a.rank == b.rank && a.index == b.index;
}

std::string describe(const MeasuringDevice& device) {
  std::ostringstream out;
  if (device.rank >= 0) out << "rank " << device.rank << (device.host.empty() ? "" : " on " + device.host) << ": ";
  out << (device.index < 0 ? std::string("default") : std::to_string(device.index)) << " (" << device.name;
  if (!device.uuid.empty()) out << ", " << device.uuid;
  out << ")";
  return out.str();
}

nlohmann::json device_to_json(const MeasuringDevice& device) {
  nlohmann::json json = {{"index", device.index}, {"name", device.name}};
  if (!device.uuid.empty()) json["uuid"] = device.uuid;
  if (device.compute_capability != 0) json["compute_capability"] = device.compute_capability;
  if (!device.host.empty()) json["host"] = device.host;
  if (device.rank >= 0) json["rank"] = device.rank;
  return json;
}

MeasuringDevice device_from_json(const nlohmann::json& json) {
  try {
    MeasuringDevice device;
    device.index = json.at("index").get<int>();
    device.name = json.at("name").get<std::string>();
    device.uuid = json.value("uuid", std::string());
    device.compute_capability = json.value("compute_capability", 0);
    device.host = json.value("host", std::string());
    device.rank = json.value("rank", -1);
    return device;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("device: ") + e.what());
  }
}

std::vector<MeasuringDevice> select_devices(std::string_view text, const std::vector<MeasuringDevice>& present) {
  const std::string given(text);
  if (present.empty()) throw InputError("--gpus " + given + ": this host has no GPU");
  if (given == "all") return present;
  const std::string range = present.size() == 1 ? "0" : "0-" + std::to_string(present.size() - 1);
  std::vector<MeasuringDevice> chosen;
  std::set<int> seen;
  for (const std::string& part : split(given, ',')) {
    const std::optional<int> index = parse_index(part);
    if (!index)
      throw InputError("--gpus " + given + ": '" + part + "' is not a device index (give all or indexes like 0,2,3)");
    if (*index >= static_cast<int>(present.size())) {
      throw InputError("--gpus " + given + ": no device " + part + " (this host has " + range + ")");
    }
    if (!seen.insert(*index).second) throw InputError("--gpus " + given + ": device " + part + " is given twice");
    chosen.push_back(present[static_cast<std::size_t>(*index)]);
  }
  return chosen;
}

std::vector<std::vector<MeasuringDevice>> group_by_model(const std::vector<MeasuringDevice>& devices) {
  std::vector<std::vector<MeasuringDevice>> groups;
  for (const MeasuringDevice& device : devices) {
    auto group = std::ranges::find_if(groups, [&](const auto& g) { return g.front().name == device.name; });
    if (group == groups.end()) {
      groups.push_back({device});
    } else {
      group->push_back(device);
    }
  }
  return groups;
}

std::vector<MeasuringDevice> list_devices(std::string* why_none) {
  const ChildOutcome outcome = run_in_child_process(
      [] {
        nlohmann::json list = nlohmann::json::array();
        for (const MeasuringDevice& device : list_cuda_devices()) list.push_back(device_to_json(device));
        return list.dump();
      },
      std::chrono::seconds(60));
  std::vector<MeasuringDevice> devices;
  if (!outcome.ok) { // no driver, no device, or a build without CUDA
    if (why_none != nullptr)
      *why_none = outcome.failure.rfind("threw: ", 0) == 0 ? outcome.failure.substr(7) : outcome.failure;
    return devices;
  }
  for (const nlohmann::json& device : nlohmann::json::parse(outcome.output))
    devices.push_back(device_from_json(device));
  return devices;
}

std::string visible_devices_value(int index) {
  const char* inherited = std::getenv("CUDA_VISIBLE_DEVICES");
  if (inherited == nullptr || *inherited == '\0') return std::to_string(index);
  const std::vector<std::string> visible = split(inherited, ',');
  if (index < 0 || index >= static_cast<int>(visible.size())) return std::to_string(index);
  return visible[static_cast<std::size_t>(index)];
}

void pin_to_device(const MeasuringDevice& device) {
  if (device.index < 0) return;
  ::setenv("CUDA_VISIBLE_DEVICES", visible_devices_value(device.index).c_str(), 1);
}

} // namespace cachewise::tuner
