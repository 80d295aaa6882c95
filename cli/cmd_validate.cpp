// `advisor validate`: the model against measurements. On a GPU it runs the kernels (a built-in
// family's, validate_pattern.cpp, or a user kernel's, validate_kernel.cpp); anywhere, `--spec S
// --kernel-tuner-cache FILE` compares the model's ranking with the times Kernel Tuner measured
// (validate_cache.cpp).
#include <memory>

#include "command.hpp"
#include "common.hpp"
#include "suggest_kernel.hpp"
#include "validate_cache.hpp"
#include "validate_pattern.hpp"

namespace cachewise::cli {
namespace {

void run_validate(const CLI::App& command, const ValidateOptions& options) {
  require_one_entry(options.kernel);
  if (!options.kernel_tuner_cache.empty()) {
    if (!options.kernel.given())
      throw InputError("validate: --kernel-tuner-cache compares a --spec or --kernel with the cache; give one");
    reject_flags(command,
                 {"--pattern", "--n", "--m", "--k", "--dtype", "--config", "--top", "--all", "--fix", "--counters",
                  "--repeats", "--work-budget", "--check-points", "--no-counters"},
                 "with --kernel-tuner-cache (it runs nothing: every ranked candidate is compared with the cache)");
    return run_validate_cache(options.kernel, options.kernel_tuner_cache, options.problem.profile, options.json);
  }
#ifdef CACHEWISE_WITH_CUDA
  run_validate_pattern(command, options);
#else
  throw InputError(
      "validate: this advisor was built without CUDA and runs no kernels; --spec S --kernel-tuner-cache FILE compares "
      "the model with times measured elsewhere");
#endif
}

void add_validate(CLI::App& root) {
  auto* command = root.add_subcommand("validate",
                                      "Run a family's real kernel: check it, time it, read its counters, compare with "
                                      "the model; or compare with a Kernel Tuner cache");
  auto options = std::make_shared<ValidateOptions>();
  add_problem_options(*command, options->problem, PatternFileOption::not_offered);
  command->add_option("--config", options->config, "One config, e.g. smem=1,tile=32,block_x=32,block_y=8,pad=1");
  command->add_option("--top", options->top, "The advisor's K best configs");
  command->add_flag("--all", options->all, "Every feasible config of the advisor's space (counters for a few)");
  command->add_option("--fix", options->fix, "Keys pinned for --top/--all, e.g. radius=2 or stride=4");
  command->add_option("--counters", options->counters, "With --all: read counters of the predicted best N (default 3)");
  command->add_option("--repeats", options->repeats, "Timed launches per config (default 15)");
  command->add_option("--work-budget", options->work_budget,
                      "Simulation work before steady-state sampling scales the counts (0 = simulate everything)");
  command->add_option("--check-points", options->checked_points, "Output points checked against the CPU (0 = all)");
  command->add_flag("--no-counters", options->no_counters,
                    "Time and check only, no CUPTI (e.g. to run under ncu, which holds the counters itself)");
  command->add_flag("--json", options->json, "Print JSON");
  add_kernel_options(*command, options->kernel);
  add_max_candidates_option(*command, options->kernel);
  command
      ->add_option(
          "--kernel-tuner-cache", options->kernel_tuner_cache,
          "With --spec/--kernel: the model's ranking against this Kernel Tuner cache file's times (no GPU needed)")
      ->group("User kernel (docs/kernel-spec.md)");
  command->callback([options, command] { run_validate(*command, *options); });
}

} // namespace

CACHEWISE_REGISTER_COMMAND(60, add_validate);

} // namespace cachewise::cli
