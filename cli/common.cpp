#include "common.hpp"

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string_view>
#include <vector>

#include "cachewise/advisor/notes.hpp"

#ifdef CACHEWISE_WITH_CUDA
#include "cachewise/kernels.hpp"
#endif

namespace cachewise::cli {

std::string local_device_name() {
#ifdef CACHEWISE_WITH_CUDA
  return kernels::local_device_name();
#else
  return {};
#endif
}

LoadedProfile load_profile_for_cli(const std::string& explicit_path) {
  if (!explicit_path.empty()) return {load_profile(explicit_path), explicit_path, "--profile"};
  const std::string device = local_device_name();
  const std::filesystem::path path = bundled_profile_path(device);
  DeviceProfile profile = load_profile(path);
  const bool matches = !device.empty() && profile.device.name == device;
  return {std::move(profile), path,
          matches ? "bundled, matches the local GPU" : "bundled default (no local GPU matched)"};
}

void print_json(const nlohmann::json& json) { std::cout << json.dump(2) << '\n'; }

namespace {
std::vector<std::string>& recorded_command_line() {
  static std::vector<std::string> words;
  return words;
}
} // namespace

void set_command_line(int argc, const char* const* argv) { recorded_command_line().assign(argv, argv + argc); }

std::string command_line_text() {
  std::string text = "advisor";
  const std::vector<std::string>& words = recorded_command_line();
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    const bool plain = !word.empty() && std::ranges::all_of(word, [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("_-./=:,+@%").find(c) != std::string_view::npos;
    });
    if (plain) {
      text += " " + word;
      continue;
    }
    text += " '";
    for (const char c : word) text += c == '\'' ? std::string("'\\''") : std::string(1, c);
    text += "'";
  }
  return text;
}

void warn(const std::string& message) { std::cerr << "advisor: warning: " << message << '\n'; }

nlohmann::json profile_json(const LoadedProfile& profile) {
  return {{"path", profile.path.string()}, {"source", profile.source}, {"device", profile.profile.device.name}};
}

void reject_flags(const CLI::App& command, std::initializer_list<const char*> flags, const std::string& context) {
  for (const char* flag : flags) {
    if (command.count(flag) > 0) throw InputError(command.get_name() + ": " + flag + " has no effect " + context);
  }
}

void require_flag(const CLI::App& command, const char* flag, const std::string& context) {
  if (command.count(flag) == 0) throw InputError(command.get_name() + ": " + flag + " is required " + context);
}

void check_pattern_choice(const CLI::App& command, const ProblemOptions& options) {
  if (options.family.empty() == options.pattern_file.empty()) {
    throw InputError(command.get_name() + ": give exactly one of --pattern FAMILY or --pattern-file FILE");
  }
  if (!options.pattern_file.empty()) {
    reject_flags(command, {"--n", "--m", "--k", "--dtype"},
                 "with --pattern-file (the file gives its sizes and element types)");
  } else {
    require_flag(command, "--n", "with --pattern");
  }
}

void warn_about_size(const ProblemSpec& problem) {
  if (const auto warning = advisor::size_warning(problem)) warn(*warning);
}

std::string summarised_loop_text(const SummarisedLoop& loop) {
  const double trips = static_cast<double>(loop.trips_interpreted + loop.trips_skipped);
  std::ostringstream text;
  text << "loop at " << loop.location << ": " << std::fixed << std::setprecision(1)
       << 100.0 * static_cast<double>(loop.trips_skipped) / trips << "% of its trips extrapolated ("
       << loop.trips_interpreted << " interpreted, " << loop.trips_skipped << " extrapolated over " << loop.runs
       << " warp runs; --replay-loops interprets them all)";
  return text.str();
}

void warn_about_grid(const Prediction& prediction, const DeviceProfile& profile, const std::string& which) {
  if (const auto warning = advisor::idle_sm_warning(prediction.grid_blocks, profile.device.sm_count))
    warn(which + *warning);
}

ProblemSpec ProblemOptions::problem() const {
  const ProblemSpec spec{family, n, m, k, parse_data_type(dtype)};
  check_problem(spec);
  return spec;
}

nlohmann::json ProblemOptions::subject_json(const std::string& pattern_name) const {
  if (!pattern_file.empty()) return {{"pattern_file", pattern_file}, {"name", pattern_name}};
  return {{"family", family}, {"n", n}, {"m", m}, {"k", k}, {"dtype", dtype}};
}

void add_problem_options(CLI::App& command, ProblemOptions& options, PatternFileOption pattern_file,
                         SizeOptions sizes) {
  command.add_option("--pattern", options.family,
                     "Built-in pattern family: copy, gemm, stencil2d, stencil3d, transpose");
  if (pattern_file == PatternFileOption::offered) {
    command.add_option("--pattern-file", options.pattern_file, "Custom pattern JSON (docs/pattern-format.md)");
  }
  if (sizes == SizeOptions::single_n) command.add_option("--n", options.n, "Problem size n");
  command.add_option("--m", options.m, "Problem size m (default: n)");
  command.add_option("--k", options.k, "Problem size k (default: n)");
  command.add_option("--dtype", options.dtype, "Element type: f32, f64, f16")->capture_default_str();
  command.add_option("--profile", options.profile, "Device profile JSON (default: the bundled one)");
}

} // namespace cachewise::cli
