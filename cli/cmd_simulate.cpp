// `advisor simulate --pattern FAMILY --n N --config k=v,... [--m M --k K --dtype T]
//  [--pattern-file FILE] [--profile FILE] [--json]`: predicted counters and time of one config.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "cachewise/device_pattern.hpp"
#include "command.hpp"
#include "common.hpp"

namespace cachewise::cli {
namespace {

struct SimulateArgs {
  ProblemOptions problem;
  std::string config;
  bool json = false;
  std::int64_t work_budget = SimulationOptions{}.work_budget;
};

std::string fixed(double value, int precision) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

void print_prediction(const std::string& title, const KernelPattern& pattern, const Prediction& prediction,
                      const LoadedProfile& profile) {
  std::cout << title << '\n'
            << "profile " << profile.path.string() << " [" << profile.source << "]\n"
            << "grid " << pattern.grid.x << " x " << pattern.grid.y << " x " << pattern.grid.z << ", block "
            << pattern.block.x << " x " << pattern.block.y << " x " << pattern.block.z << ", "
            << prediction.blocks_per_sm << " blocks/SM, " << prediction.waves << " waves, "
            << shared_bytes_per_block(pattern) << " B shared/block"
            << (prediction.sampled ? ", sampled " + fixed(100.0 * prediction.simulated_fraction, 1) + "%" : "") << "\n\n"
            << "predicted time  " << fixed(prediction.time_us, 2) << " us  (bottleneck: " << prediction.bottleneck
            << ", useful bandwidth " << fixed(prediction.achieved_bandwidth_gb_per_s, 0) << " GB/s)\n"
            << "time terms (us):";
  for (const auto& [name, value] : prediction.time_terms_us) std::cout << "  " << name << ' ' << fixed(value, 2);
  std::cout << '\n';
  if (prediction.spread_write_fraction > 0) {
    std::cout << "spread writes: " << fixed(100.0 * prediction.spread_write_fraction, 1) << "% of the stored lines in runs of "
              << fixed(prediction.spread_write_run_bytes, 0) << " B per row that the neighbouring blocks do not continue; DRAM time x"
              << fixed(prediction.spread_write_factor, 3) << '\n';
  }
  std::cout << '\n';
  std::size_t width = 0;
  for (const auto& [name, value] : prediction.metrics) width = std::max(width, name.size());
  for (const auto& [name, value] : prediction.metrics) {
    const bool whole = std::abs(value - std::round(value)) < 1e-6 * std::max(1.0, std::abs(value));
    std::cout << "  " << std::left << std::setw(static_cast<int>(width)) << name << "  " << std::right
              << fixed(value, whole ? 0 : 2) << '\n';
  }
}

void run_simulate(const SimulateArgs& args) {
  const ProblemOptions& options = args.problem;
  if (options.family.empty() == options.pattern_file.empty()) {
    throw InputError("give exactly one of --pattern FAMILY or --pattern-file FILE");
  }
  const LoadedProfile profile = load_profile_for_cli(options.profile);
  KernelPattern pattern;
  std::string title;
  if (!options.pattern_file.empty()) {
    pattern = load_pattern(options.pattern_file);
    title = "pattern " + pattern.name + " from " + options.pattern_file;
  } else {
    const ProblemSpec problem = options.problem();
    const Config config = Config::parse(args.config);
    pattern = build_pattern(problem, config, profile.profile.calibration);
    title = options.family + " n=" + std::to_string(options.n) + (options.m ? " m=" + std::to_string(options.m) : "") +
            (options.k ? " k=" + std::to_string(options.k) : "") + " " + options.dtype + "  config " + config.to_string();
  }
  if (args.work_budget < 0) throw InputError("simulate: --work-budget must be >= 0 (0 simulates everything)");
  SimulationOptions simulation;
  simulation.work_budget = args.work_budget;
  const Prediction prediction = simulate(pattern, profile.profile, simulation);
  const std::string family = options.pattern_file.empty() ? options.family : std::string(kAllFamiliesBand);
  const Calibration& calibration = profile.profile.calibration;
  if (args.json) {
    nlohmann::json json = prediction_to_json(prediction);
    json.update(time_interval_json(calibration, family, prediction.time_us));
    print_json(json);
  } else {
    print_prediction(title, pattern, prediction, profile);
    std::cout << "error band: " << time_interval_text(calibration, family, prediction.time_us) << '\n';
  }
}

void add_simulate(CLI::App& root) {
  auto* command = root.add_subcommand("simulate", "Predict the counters and time of one pattern and config");
  auto args = std::make_shared<SimulateArgs>();
  add_problem_options(*command, args->problem, PatternFileOption::offered);
  command->add_option("--config", args->config, "Config, e.g. smem=1,tile=32,block_x=32,block_y=8,pad=1");
  command->add_flag("--json", args->json, "Print the prediction as JSON (metrics under their CUPTI names)");
  command->add_option("--work-budget", args->work_budget,
                      "Simulation work before steady-state sampling scales the counts (0 = simulate everything)");
  command->callback([args] { run_simulate(*args); });
}

} // namespace

CACHEWISE_REGISTER_COMMAND(30, add_simulate);

} // namespace cachewise::cli
