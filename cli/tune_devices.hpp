// `advisor tune`'s devices: the GPUs --gpus picks (the first alone without it), grouped by
// model, each model tuned on its own; the fake list when CACHEWISE_FAKE_DEVICES is set.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cachewise/tuner/devices.hpp"
#include "cachewise/tuner/execution.hpp"
#include "cachewise/tuner/fake_devices.hpp"

namespace cachewise::cli {

struct TuneDevices {
  std::vector<std::vector<tuner::MeasuringDevice>> groups; ///< one per model; empty: no GPU (static fallback)
  std::optional<tuner::FakeDevices> fakes;
  std::string why_none; ///< when there is no GPU
};

/// Throws InputError for a --gpus that names no device here.
TuneDevices tune_devices(const std::string& gpus);

/// The fake list's Measure when there is one, else `real()`.
tuner::Measure measure_on(const TuneDevices& devices, const std::function<tuner::Measure()>& real);

/// The devices of a JSON output: [{"index", "name", "uuid", ...}].
nlohmann::json devices_json(const std::vector<tuner::MeasuringDevice>& devices);

/// FILE as given with one model; FILE.<model>.ext with several ("tuned.nvidia_h200.h").
std::string path_for_model(const std::string& file, const std::string& model, std::size_t models);

} // namespace cachewise::cli
