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

/// The process's argv, kept by main() for the generated headers' regeneration comment.
void set_command_line(int argc, const char* const* argv);
/// The command line as a POSIX shell would take it back, for display only (never run): the
/// program as `advisor`, every other word single-quoted unless it is plain
/// ("--grid 'width / 32, height / 32'", "--define 'MSG=it'\''s'").
std::string command_line_text();

/// "advisor: warning: <message>" on stderr: something that changes what the output means.
void warn(const std::string& message);

/// The --profile object of JSON outputs: its file, how it was chosen, the device.
nlohmann::json profile_json(const LoadedProfile& profile);

/// Throws InputError naming the first of `flags` given to `command` ("--n has no effect
/// <context>"): a flag that would be silently ignored is rejected instead.
void reject_flags(const CLI::App& command, std::initializer_list<const char*> flags, const std::string& context);

/// Throws InputError "<command>: <flag> is required <context>" unless `flag` was given.
void require_flag(const CLI::App& command, const char* flag, const std::string& context);

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
  /// The problem as JSON outputs name it: family, sizes and dtype, or the pattern file.
  nlohmann::json subject_json(const std::string& pattern_name) const;
};

enum class SizeOptions { single_n, without_n };
enum class PatternFileOption { offered, not_offered };

/// Exactly one of --pattern and --pattern-file; --pattern needs --n, and --pattern-file takes
/// none of --n, --m, --k, --dtype (the file gives its sizes and element types).
void check_pattern_choice(const CLI::App& command, const ProblemOptions& options);

/// Warns about a built-in problem's size when its meaning differs by family (copy's n).
void warn_about_size(const ProblemSpec& problem);

/// "loop at gemm.cu:31: 97.0% of its trips extrapolated (...; --replay-loops interprets them all)"
std::string summarised_loop_text(const SummarisedLoop& loop);

/// Warns when a launch leaves SMs idle (fewer blocks than SMs).
void warn_about_grid(const Prediction& prediction, const DeviceProfile& profile, const std::string& which = "");

/// Adds the options above to `command`; `without_n` leaves --n to the caller (e.g. repeated sizes).
void add_problem_options(CLI::App& command, ProblemOptions& options, PatternFileOption pattern_file,
                         SizeOptions sizes = SizeOptions::single_n);

} // namespace cachewise::cli
