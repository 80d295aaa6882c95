// Helpers shared by the CLI's subcommands.
#pragma once

#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"

namespace cachewise::cli {

/// A profile chosen by --profile, or the bundled one (matching the local GPU when there is
/// one, else the H200's). `source` says which, for the output.
struct LoadedProfile {
  DeviceProfile profile;
  std::filesystem::path path;
  std::string source; ///< "--profile", "bundled (matches local GPU)", "bundled default (H200)"
};

/// `explicit_path` empty means "pick the bundled one".
LoadedProfile load_profile_for_cli(const std::string& explicit_path);

/// Name of the local CUDA device, or empty when none (or when built without CUDA).
std::string local_device_name();

void print_json(const nlohmann::json& json);

} // namespace cachewise::cli
