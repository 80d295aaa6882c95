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

/// The problem options every modelling subcommand takes: --pattern or --pattern-file,
/// --n/--m/--k, --dtype, --profile.
struct ProblemOptions {
  std::string family;
  std::string pattern_file;
  std::int64_t n = 0;
  std::int64_t m = 0;
  std::int64_t k = 0;
  std::string dtype = "f32";
  std::string profile;

  /// The built-in problem, checked by model::check_problem (unknown family, dtype, bad sizes -> InputError).
  ProblemSpec problem() const;
};

enum class SizeOptions { single_n, without_n };
enum class PatternFileOption { offered, not_offered };

/// Adds the options above to `command`; `without_n` leaves --n to the caller (e.g. repeated sizes).
void add_problem_options(CLI::App& command, ProblemOptions& options, PatternFileOption pattern_file,
                         SizeOptions sizes = SizeOptions::single_n);

} // namespace cachewise::cli
