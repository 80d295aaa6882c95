// cachewise::tuner merged headers (`advisor merge-tuned`): results tuned on different GPU
// models become one header that selects the config by device, at compile time
// (-DCACHEWISE_TARGET_<DEVICE>) and at run time (by device name or compute capability),
// falling back to the model's static recommendation for a device it has no results of.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cachewise/tuner/tuned_header.hpp"

namespace cachewise::tuner {

/// One `advisor tune --json` file, as merge-tuned reads it.
struct TunedResults {
  std::string source;        ///< the file
  std::string scope;         ///< the header's namespace: "transpose_f32", "transpose_tiled"
  nlohmann::json parameters; ///< {"TILE_DIM": [16, 32, 64], ...}: the parameter space
  bool measured = false;
  std::string device_name;    ///< measured only
  int compute_capability = 0; ///< 0: unknown
  std::string profile;
  std::vector<HeaderBucket> buckets;        ///< the picks: measured, or static when !measured
  std::vector<HeaderBucket> static_buckets; ///< the model's pick per bucket (empty when it could not rank)
};

/// Throws InputError naming the file and the missing or malformed field.
TunedResults read_tuned_results(const std::filesystem::path& path);

/// "NVIDIA H200" -> "H200" (the macro CACHEWISE_TARGET_H200, the namespace h200);
/// "NVIDIA GeForce RTX 4090" -> "GEFORCE_RTX_4090".
std::string device_target_name(const std::string& device_name);

/// The header: namespace cachewise_tuned::<scope> with a namespace per device (its buckets and
/// config_for) and `fallback` (the static recommendation of the first input that has one),
/// `target` chosen by -DCACHEWISE_TARGET_<DEVICE> (fallback without), and
/// config_for_device(name, sizes...) / config_for_compute_capability(cc, sizes...). Throws
/// InputError for no measured input, inputs of different kernels (scopes), parameter spaces
/// or size keys, two inputs for one device, or no static recommendation in any input.
std::string render_merged_header(const std::vector<TunedResults>& results, const std::string& generated_by);

} // namespace cachewise::tuner
