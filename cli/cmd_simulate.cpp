// `advisor simulate --pattern FAMILY --n N --config k=v,... [--m M --k K --dtype T]
//  [--pattern-file FILE] [--profile FILE] [--json]`: predicted counters and time of one config.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "cachewise/advisor.hpp"
#include "cachewise/advisor/units.hpp"
#include "cachewise/model.hpp"
#include "cachewise/model/families/device_pattern.hpp"
#include "command.hpp"
#include "cachewise/frontend/kernel_advisor.hpp"
#include "common.hpp"
#include "suggest_kernel.hpp"

namespace cachewise::cli {
namespace {

struct SimulateArgs {
  ProblemOptions problem;
  std::string config;
  bool json = false;
  std::int64_t work_budget = SimulationOptions{}.work_budget;
  KernelOptions kernel;
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
      << "  SM side     " << at("sm") << " from latency " << at("latency") << " and soft maximum of (compute "
      << at("compute") << " + issue " << at("issue") << ", shared " << at("shared") << ", constant " << at("constant")
      << ", blocks " << at("blocks") << "): their sum in the first wave, after it the larger of that work and\n"
      << "              latency + work / resident blocks\n"
      << "  (" << unit.name << ", each term summed over the waves; docs/glossary.md#time-terms)\n";
}

/// The launch a prediction is for: its grid, block and shared memory per block.
struct LaunchShown {
  Dim3 grid;
  Dim3 block;
  std::int64_t shared_bytes_per_block = 0;
};

/// `extra` lines go after the launch line (a compiled kernel's resources and trace summary).
void print_prediction(const std::string& title, const LaunchShown& launch, const Prediction& prediction,
                      const LoadedProfile& profile, const std::string& extra = {}) {
  std::cout << title << '\n'
            << "profile " << profile.path.string() << " [" << profile.source << "]\n"
            << "grid " << launch.grid.x << " x " << launch.grid.y << " x " << launch.grid.z << " ("
            << prediction.grid_blocks << " blocks), block " << launch.block.x << " x " << launch.block.y << " x "
            << launch.block.z << "; up to " << prediction.blocks_per_sm << " blocks resident per SM, "
            << prediction.waves << (prediction.waves == 1 ? " wave, " : " waves, ")
            << advisor::bytes_text(static_cast<double>(launch.shared_bytes_per_block)) << " shared per block\n"
            << extra;
  if (prediction.sampled) {
    std::cout << "counts extrapolated from a sample: " << fixed(100.0 * prediction.simulated_fraction, 1)
              << "% of the work simulated, scaled x" << fixed(1.0 / prediction.simulated_fraction, 1) << '\n';
  }
  std::cout << '\n';
  print_time(prediction, std::cout);
  if (prediction.spread_write_fraction > 0) {
    std::cout << "spread writes: " << fixed(100.0 * prediction.spread_write_fraction, 1)
              << "% of the stored lines in runs of " << fixed(prediction.spread_write_run_bytes, 0)
              << " B per row that the neighbouring blocks do not continue; DRAM time x"
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

/// `simulate --kernel/--spec`: the spec's one configuration (--config pins the parameters).
void run_simulate_kernel(const CLI::App& command, const SimulateArgs& args) {
  if (!args.problem.family.empty() || !args.problem.pattern_file.empty()) {
    throw InputError("simulate: give one of --pattern, --pattern-file or --kernel/--spec");
  }
  reject_flags(command, {"--n", "--m", "--k", "--dtype"}, "with --kernel/--spec (a kernel spec has --param and --arg)");
  if (args.work_budget < 0) throw InputError("simulate: --work-budget must be >= 0 (0 simulates everything)");
  frontend::KernelSpec spec = kernel_spec_from_options(args.kernel);
  const Config pinned = Config::parse(args.config);
  for (const auto& [name, value] : pinned.values()) { // --config k=v: one value per parameter
    const auto parameter = std::ranges::find(spec.parameters, name, &frontend::ParameterValues::name);
    if (parameter == spec.parameters.end())
      throw InputError("simulate: --config " + name + ": the kernel spec has no parameter '" + name + "'");
    parameter->values = {value};
  }
  const LoadedProfile profile = load_profile_for_cli(args.problem.profile);
  frontend::Compiler compiler;
  SimulationOptions simulation;
  simulation.work_budget = args.work_budget;
  const frontend::KernelSimulation result = frontend::simulate_kernel(spec, profile.profile, compiler, simulation);
  const Prediction& prediction = result.prediction;
  warn_about_grid(prediction, profile.profile);
  const Calibration& calibration = profile.profile.calibration;
  const std::string subject = spec.entry + " in " + spec.source.string();
  const std::string config = result.evaluated.config.to_string();
  const TracedFacts& facts = result.facts;
  if (args.json) {
    nlohmann::json json = {{"cachewise_version", CACHEWISE_VERSION},
                           {"kernel", subject},
                           {"config", config},
                           {"profile", profile_json(profile)}};
    json.update(prediction_to_json(prediction));
    json.update(time_interval_json(calibration, kAllFamiliesBand, prediction.time_us));
    json["compiler"] = {{"registers_per_thread", result.compiled.registers_per_thread},
                        {"stack_frame_bytes", result.compiled.stack_frame_bytes},
                        {"spill_store_bytes", result.compiled.spill_store_bytes},
                        {"spill_load_bytes", result.compiled.spill_load_bytes},
                        {"static_shared_bytes", result.compiled.static_shared_bytes}};
    json["trace"] = {{"warp_instructions", facts.warp_instructions},
                     {"memory_instructions", facts.memory_instructions},
                     {"flops", facts.flops},
                     {"active_lane_fraction", result.active_lane_fraction},
                     {"loads_in_flight_mean", facts.loads_in_flight},
                     {"loads_in_flight_max", result.max_loads_in_flight},
                     {"store_burst", facts.store_burst},
                     {"interpreted_blocks", result.interpreted_blocks},
                     {"translated_blocks", result.translated_blocks}};
    json["trace"]["summarised_loops"] = summarised_loops_to_json(prediction.summarised_loops);
    if (spec.out_of_bounds_reads == frontend::OutOfBoundsReads::simulate) {
      const frontend::OutOfBoundsLoads& outside = result.out_of_bounds_loads;
      json["trace"]["out_of_bounds_loads"] = {
          {"warp_loads", outside.warp_loads},
          {"first", outside.first.empty() ? nlohmann::json(nullptr) : nlohmann::json(outside.first)}};
    }
    if (spec.branches_on_loaded_data == frontend::BranchesOnLoadedData::not_taken) {
      const frontend::SkippedOnLoadedData& skipped = result.skipped_on_loaded_data;
      json["trace"]["skipped_on_loaded_data"] = {
          {"warp_instructions", skipped.warp_instructions},
          {"first", skipped.first.empty() ? nlohmann::json(nullptr) : nlohmann::json(skipped.first)}};
    }
    print_json(json);
    return;
  }
  std::ostringstream extra;
  extra << "compiled: " << result.compiled.registers_per_thread << " registers per thread, "
        << result.compiled.spill_store_bytes + result.compiled.spill_load_bytes << " B spilled, "
        << result.compiled.stack_frame_bytes << " B stack frame, " << result.compiled.static_shared_bytes
        << " B static shared\n"
        << "trace: " << fixed(facts.warp_instructions, 0) << " warp instructions ("
        << fixed(facts.memory_instructions, 0) << " memory), " << fixed(100.0 * result.active_lane_fraction, 1)
        << "% of lanes active per memory instruction, " << fixed(facts.loads_in_flight, 2)
        << " global loads in flight per round (at most " << result.max_loads_in_flight << ")\n"
        << "blocks: " << result.interpreted_blocks << " interpreted, " << result.translated_blocks
        << " translated from a reference block\n";
  for (const SummarisedLoop& loop : prediction.summarised_loops) extra << summarised_loop_text(loop) << '\n';
  if (result.out_of_bounds_loads.warp_loads > 0) {
    extra << "out of bounds: " << result.out_of_bounds_loads.warp_loads
          << " warp loads outside every buffer in the traced blocks, simulated at their addresses; the first at "
          << result.out_of_bounds_loads.first << '\n';
  }
  if (result.skipped_on_loaded_data.warp_instructions > 0) {
    extra << "on loaded data: " << result.skipped_on_loaded_data.warp_instructions
          << " warp instructions guarded by loaded data, not taken by those lanes in the traced blocks; the first at "
          << result.skipped_on_loaded_data.first << '\n';
  }
  const LaunchShown launch{result.evaluated.grid, result.evaluated.block, result.shared_bytes_per_block};
  print_prediction(subject + "  config " + (config.empty() ? "(no parameters)" : config), launch, prediction, profile,
                   extra.str());
  std::cout << "error band: " << time_interval_text(calibration, kAllFamiliesBand, prediction.time_us) << '\n';
}

void run_simulate(const CLI::App& command, const SimulateArgs& args) {
  if (args.kernel.given()) return run_simulate_kernel(command, args);
  const ProblemOptions& options = args.problem;
  check_pattern_choice(command, options);
  if (!options.pattern_file.empty()) {
    reject_flags(command, {"--config"}, "with --pattern-file (the file describes one kernel)");
  } else {
    require_flag(command, "--config",
                 "with --pattern (e.g. --config smem=1,tile=32,block_x=32,block_y=8,pad=1; "
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
    pattern = build_pattern(problem, config, profile.profile.calibration);
    title = advisor::describe(problem) + "  config " + config.to_string();
    config_json = config.to_string();
    warn_about_size(problem);
  }
  SimulationOptions simulation;
  simulation.work_budget = args.work_budget;
  const Prediction prediction = simulate(pattern, profile.profile, simulation);
  warn_about_grid(prediction, profile.profile);
  const std::string family = options.pattern_file.empty() ? options.family : std::string(kAllFamiliesBand);
  const Calibration& calibration = profile.profile.calibration;
  if (args.json) {
    nlohmann::json json = {{"cachewise_version", CACHEWISE_VERSION},
                           {"pattern", options.subject_json(pattern.name)},
                           {"config", config_json},
                           {"profile", profile_json(profile)}};
    json.update(prediction_to_json(prediction));
    json.update(time_interval_json(calibration, family, prediction.time_us));
    print_json(json);
  } else {
    print_prediction(title, {pattern.grid, pattern.block, shared_bytes_per_block(pattern)}, prediction, profile);
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
  add_kernel_options(*command, args->kernel);
  command->callback([args, command] { run_simulate(*command, *args); });
}

} // namespace

CACHEWISE_REGISTER_COMMAND(30, add_simulate);

} // namespace cachewise::cli
