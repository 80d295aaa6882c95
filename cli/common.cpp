#include "common.hpp"

#include <iostream>

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

ProblemSpec ProblemOptions::problem() const {
  const ProblemSpec spec{family, n, m, k, parse_data_type(dtype)};
  check_problem(spec);
  return spec;
}

void add_problem_options(CLI::App& command, ProblemOptions& options, PatternFileOption pattern_file, SizeOptions sizes) {
  command.add_option("--pattern", options.family, "Built-in pattern family: copy, gemm, stencil2d, stencil3d, transpose");
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
