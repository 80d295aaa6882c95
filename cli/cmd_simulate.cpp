// `advisor simulate --pattern FAMILY --n N --config k=v,... [--m M --k K --dtype T]
//  [--pattern-file FILE] [--profile FILE] [--json]`: predicted counters and time of one config.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "cachewise/advisor.hpp"
#include "cachewise/units.hpp"
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

/// How the time terms make the predicted time (Prediction::time_terms_us), in one time unit.
void print_time(const Prediction& prediction, std::ostream& out) {
  const advisor::TimeUnit unit = advisor::time_unit_for(prediction.time_us);
  const auto& t = prediction.time_terms_us;
  auto at = [&](const char* name) { return advisor::time_value(t.at(name), unit); };
  const std::string waves = std::to_string(prediction.waves) + (prediction.waves == 1 ? " wave" : " waves");
  out << "predicted time  " << advisor::time_value(prediction.time_us, unit) << ' ' << unit.name
      << "  (bottleneck: " << prediction.bottleneck << ", useful bandwidth "
      << fixed(prediction.achieved_bandwidth_gb_per_s, 0) << " GB/s)\n"
      << "  = launch " << at("launch") << " + " << advisor::time_value(prediction.time_us - t.at("launch"), unit)
      << ": per wave the soft maximum of its memory side and SM side, summed over " << waves << '\n'
      << "  memory side " << at("memory") << " = soft maximum of (dram " << at("dram") << ", l2 " << at("l2") << ", l1 "
      << at("l1") << ") + exposed latency " << at("exposed_latency") << '\n'
      << "  SM side     " << at("sm") << " = latency " << at("latency") << " + blocks " << at("blocks")
      << " + soft maximum of (compute " << at("compute") << " + issue " << at("issue") << ", shared "
      << at("shared") << ")\n"
      << "  (" << unit.name << ", each term summed over the waves; docs/glossary.md#time-terms)\n";
}

void print_prediction(const std::string& title, const KernelPattern& pattern, const Prediction& prediction,
                      const LoadedProfile& profile) {
  std::cout << title << '\n'
            << "profile " << profile.path.string() << " [" << profile.source << "]\n"
            << "grid " << pattern.grid.x << " x " << pattern.grid.y << " x " << pattern.grid.z << " (" << prediction.grid_blocks
            << " blocks), block " << pattern.block.x << " x " << pattern.block.y << " x " << pattern.block.z << "; up to "
            << prediction.blocks_per_sm << " blocks resident per SM, " << prediction.waves
            << (prediction.waves == 1 ? " wave, " : " waves, ") << advisor::bytes_text(static_cast<double>(shared_bytes_per_block(pattern)))
            << " shared per block\n";
  if (prediction.sampled) {
    std::cout << "counts extrapolated from a sample: " << fixed(100.0 * prediction.simulated_fraction, 1)
              << "% of the work simulated, scaled x" << fixed(1.0 / prediction.simulated_fraction, 1) << '\n';
  }
  std::cout << '\n';
  print_time(prediction, std::cout);
  if (prediction.spread_write_fraction > 0) {
    std::cout << "spread writes: " << fixed(100.0 * prediction.spread_write_fraction, 1) << "% of the stored lines in runs of "
              << fixed(prediction.spread_write_run_bytes, 0) << " B per row that the neighbouring blocks do not continue; DRAM time x"
              << fixed(prediction.spread_write_factor, 3) << '\n';
  }
  std::cout << '\n';
  std::size_t width = 0;
  for (const auto& [name, value] : prediction.metrics) width = std::max(width, name.size());
  for (const auto& [name, value] : prediction.metrics) {
    // Counts (".sum") are whole numbers, as the hardware counts them; rates and ratios are not.
    std::cout << "  " << std::left << std::setw(static_cast<int>(width)) << name << "  " << std::right
              << fixed(value, name.ends_with(".sum") ? 0 : 2) << '\n';
  }
}

void run_simulate(const CLI::App& command, const SimulateArgs& args) {
  const ProblemOptions& options = args.problem;
  check_pattern_choice(command, options);
  if (!options.pattern_file.empty()) {
    reject_flags(command, {"--config"}, "with --pattern-file (the file describes one kernel)");
  } else {
    require_flag(command, "--config", "with --pattern (e.g. --config smem=1,tile=32,block_x=32,block_y=8,pad=1; "
                                      "`advisor suggest` ranks them)");
  }
  if (args.work_budget < 0) throw InputError("simulate: --work-budget must be >= 0 (0 simulates everything)");
  const LoadedProfile profile = load_profile_for_cli(options.profile);
  KernelPattern pattern;
  std::string title;
  nlohmann::json config_json;
  if (!options.pattern_file.empty()) {
    pattern = load_pattern(options.pattern_file);
    title = "pattern " + pattern.name + " from " + options.pattern_file;
  } else {
    const ProblemSpec problem = options.problem();
    const Config config = Config::parse(args.config);
    pattern = build_pattern(problem, config);
    title = advisor::describe(problem) + "  config " + config.to_string();
    config_json = config.to_string();
    warn_about_size(problem);
  }
  SimulationOptions simulation;
  simulation.work_budget = args.work_budget;
  const Prediction prediction = simulate(pattern, profile.profile, simulation);
  warn_about_grid(prediction, profile.profile);
  if (args.json) {
    nlohmann::json json = {{"cachewise_version", CACHEWISE_VERSION},
                           {"pattern", options.subject_json(pattern.name)},
                           {"config", config_json},
                           {"profile", profile_json(profile)}};
    json.update(prediction_to_json(prediction));
    print_json(json);
  } else {
    print_prediction(title, pattern, prediction, profile);
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
  command->callback([args, command] { run_simulate(*command, *args); });
}

} // namespace

CACHEWISE_REGISTER_COMMAND(30, add_simulate);

} // namespace cachewise::cli
