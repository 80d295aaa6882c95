// `advisor tune`: measure a built-in family's feasible configs on the local GPU (advisor
// space, model order, tuner hygiene: child process per candidate, journal, noise-aware pick)
// and write a C++ header keyed by size. Without a GPU it writes the advisor's static
// recommendation instead, says so in the header and on stderr, and exits 0, so a build that
// runs it (cachewise_autotune) works on any machine.
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "cachewise/advisor.hpp"
#include "cachewise/tuner.hpp"
#include "cachewise/advisor/units.hpp"
#include "command.hpp"
#include "common.hpp"
#include "tune_devices.hpp"
#include "tune_kernel.hpp"

#ifdef CACHEWISE_WITH_CUDA
#include "cachewise/kernels.hpp"
#endif

namespace cachewise::cli {
namespace {

struct TuneArguments : TuneRunOptions {
  ProblemOptions problem; ///< its n is unused: sizes holds every --n
  std::vector<std::int64_t> sizes;
  std::string fix;
  bool report_convergence = false;
  std::string convergence_from;
  KernelTuneArguments kernel; ///< --kernel/--spec: a user kernel instead of a --pattern
};

void run_tune_kernel_with(const TuneArguments& args) {
  if (!args.problem.family.empty() || !args.sizes.empty() || args.report_convergence ||
      !args.convergence_from.empty()) {
    throw InputError(
        "tune: --kernel/--spec sizes a user kernel with --size; it takes no --pattern, --n or convergence options");
  }
  run_tune_kernel(args.kernel, args, args.problem.profile);
}

/// The advisor's view of one problem: the feasible configs, best predicted first.
struct RankedSpace {
  ProblemSpec problem;
  SearchSpace space;
  std::vector<advisor::Candidate> ranked;
  /// Predicted time by Config::to_string(), shared with the tuner's constraint and Predict.
  std::shared_ptr<const std::map<std::string, double>> predicted_us;
};

RankedSpace rank_space(const ProblemSpec& problem, const DeviceProfile& profile, const Config& fixed) {
  advisor::SuggestOptions options;
  options.top = std::numeric_limits<std::size_t>::max();
  options.fixed = fixed;
  RankedSpace ranked{problem, family_search_space(problem, profile, fixed), {}, {}};
  ranked.ranked = advisor::suggest(problem, profile, options).ranked;
  auto predicted_us = std::make_shared<std::map<std::string, double>>();
  for (const advisor::Candidate& candidate : ranked.ranked) {
    (*predicted_us)[candidate.config.to_string()] = candidate.prediction.time_us;
  }
  ranked.predicted_us = predicted_us;
  std::vector<std::string> names;
  for (const auto& [name, values] : ranked.space.parameters()) names.push_back(name);
  // Only what builds and fits the device is worth a launch: the advisor already checked that.
  ranked.space.add_constraint(
      names, [predicted_us](const Config& config) { return predicted_us->contains(config.to_string()); },
      "builds and fits the device (advisor)");
  return ranked;
}

#ifdef CACHEWISE_WITH_CUDA
/// One timed launch per call (CUDA events), rotating through single-set workloads. Created
/// inside the candidate's child process on the first call; the first launch's output is checked against the CPU
/// reference.
class KernelTimer {
public:
  explicit KernelTimer(ProblemSpec problem) : problem_(std::move(problem)) {}

  double operator()(const Config& config, std::int64_t iteration) {
    constexpr std::int64_t kCheckedPoints = 4096;
    if (workloads_.empty()) {
      const int sets = kernels::timing_input_sets(problem_, config);
      for (int set = 0; set < sets; ++set)
        workloads_.emplace_back(problem_, config, 1, static_cast<std::uint64_t>(set + 1));
    }
    kernels::Workload& workload = workloads_[static_cast<std::size_t>(iteration) % workloads_.size()];
    // time_kernel always launches once untimed first (that launch validates the config); the
    // sample is the launch right after it on the same buffers, so data smaller than L2 is
    // measured warm and larger data mostly cold, as for back-to-back calls in a pipeline.
    const double ms =
        kernels::time_kernel(problem_, config, workload, {.warmup_launches = 1, .repeats = 1, .input_sets = 1})
            .median_ms;
    if (iteration == 0) {
      const double error = kernels::max_relative_error(problem_, config, workload, kCheckedPoints);
      if (!(error <= kernels::error_tolerance(problem_))) {
        throw InputError("wrong result: max relative error " + std::to_string(error) + " against the CPU reference");
      }
    }
    return ms;
  }

private:
  ProblemSpec problem_;
  std::vector<kernels::Workload> workloads_;
};
#endif

tuner::Measure kernel_measure(const ProblemSpec& problem) {
#ifdef CACHEWISE_WITH_CUDA
  auto timer = std::make_shared<KernelTimer>(problem);
  return [timer](const Config& config, std::int64_t iteration) { return (*timer)(config, iteration); };
#else
  static_cast<void>(problem);
  throw NoDeviceError("no CUDA device: built without CUDA");
#endif
}

/// --journal FILE as given for one size; with several sizes, FILE.n<N>.jsonl-style names.
std::filesystem::path journal_for(const TuneArguments& args, std::int64_t n) {
  if (args.journal.empty() || args.sizes.size() == 1) return args.journal;
  std::filesystem::path path = args.journal;
  const std::string extension = path.extension().string();
  path.replace_extension();
  path += ".n" + std::to_string(n) + extension;
  return path;
}

/// The run's result; nullopt on a measuring MPI rank.
std::optional<tuner::TuningResult> tune_one(const TuneArguments& args, const RankedSpace& ranked,
                                            const std::vector<tuner::MeasuringDevice>& group,
                                            const TuneDevices& devices) {
  tuner::Tuner tuner(ranked.problem, ranked.space);
  tuner.set_measure(devices.source().measure([&] { return kernel_measure(ranked.problem); }));
  const tuner::Predict predict = [predicted = ranked.predicted_us](const Config& config) {
    return predicted->at(config.to_string());
  };
  switch (args.report_convergence ? tuner::StrategyKind::exhaustive : tuner::parse_strategy_kind(args.strategy)) {
  case tuner::StrategyKind::exhaustive: tuner.set_strategy(tuner::Strategy::exhaustive()); break;
  case tuner::StrategyKind::random: tuner.set_strategy(tuner::Strategy::random(args.seed)); break;
  case tuner::StrategyKind::model_ranked: tuner.set_strategy(tuner::Strategy::model_ranked(predict)); break;
  }
  tuner::Options options;
  options.budget = args.report_convergence ? 0 : args.budget;
  options.candidate_timeout = std::chrono::seconds(args.timeout_s);
  options.measurement.max_repeats = args.max_repeats;
  options.journal = journal_for(args, ranked.problem.n);
  options.devices = group;
  tuner.set_options(options);
  const std::size_t feasible = ranked.ranked.size();
  std::size_t done = 0;
  tuner.on_progress([&](const tuner::Progress& progress) {
    const tuner::Evaluation& e = progress.evaluation;
    std::cerr << "tune: " << advisor::describe(ranked.problem) << " [" << (progress.round == 0 ? ++done : done) << "/"
              << feasible << "] " << e.config.to_string() << ": "
              << (e.ok ? advisor::time_text(e.time_ms.median * 1000.0) + " (" + std::to_string(e.samples_ms.size()) +
                             " samples)"
                       : "failed: " + e.failure)
              << device_tag(e.device, group.size()) << (progress.round > 0 ? " [measured again]" : "")
              << (progress.from_journal ? " [journal]" : "") << '\n';
  });
  std::optional<tuner::TuningResult> result = run_tuner(tuner, devices);
  if (result) {
    for (tuner::Evaluation& e : result->evaluations) e.predicted = predict(e.config);
  }
  return result;
}

void print_convergence_table(const std::vector<std::pair<ProblemSpec, tuner::ConvergenceReport>>& reports) {
  std::cout << "convergence to 99% of the exhaustive best (evaluations):\n"
            << std::left << std::setw(28) << "problem" << std::right << std::setw(11) << "candidates" << std::setw(7)
            << "good" << std::setw(14) << "model-ranked" << std::setw(17) << "random (expect.)" << std::setw(20)
            << "widening rule used" << std::setw(12) << "its % best" << '\n';
  for (const auto& [problem, r] : reports) {
    std::cout << std::left << std::setw(28) << advisor::describe(problem) << std::right << std::setw(11) << r.candidates
              << std::setw(7) << r.good_candidates << std::setw(14) << r.model_evaluations_to_good << std::setw(17)
              << std::fixed << std::setprecision(1) << r.random_expected_evaluations << std::setw(20)
              << r.model_strategy_evaluations << std::setw(12) << 100.0 * r.model_strategy_fraction_of_best << '\n'
              << std::defaultfloat;
  }
}

/// An exhaustive run as `advisor validate --all --json` records it (one case object, or the
/// list scripts/device/validate.sh writes): every feasible config's measured median and
/// predicted time. A config whose output was checked and wrong counts as failed.
std::vector<tuner::TuningResult> results_from_validate(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path.string() + ": malformed JSON: " + e.what());
  }
  const nlohmann::json cases = json.is_array() ? json : nlohmann::json::array({json});
  std::vector<tuner::TuningResult> results;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const std::string where = path.string() + ": case " + std::to_string(c);
    try {
      const nlohmann::json& problem = cases[c].at("problem");
      tuner::TuningResult result;
      result.problem = {problem.at("family").get<std::string>(), problem.at("n").get<std::int64_t>(),
                        problem.at("m").get<std::int64_t>(), problem.at("k").get<std::int64_t>(),
                        parse_data_type(problem.at("dtype").get<std::string>())};
      result.strategy = "exhaustive (advisor validate)";
      for (const nlohmann::json& candidate : cases[c].at("candidates")) {
        tuner::Evaluation evaluation;
        evaluation.config = Config::parse(candidate.at("config").get<std::string>());
        evaluation.predicted = candidate.at("predicted").at("time_us").get<double>();
        const nlohmann::json& measured = candidate.at("measured");
        evaluation.ok = !(measured.value("checked", false) && !measured.value("correct", true));
        if (evaluation.ok) {
          evaluation.time_ms.median = measured.at("median_us").get<double>() / 1000.0;
        } else {
          evaluation.failure = "wrong result";
        }
        result.evaluations.push_back(std::move(evaluation));
        const tuner::Evaluation& added = result.evaluations.back();
        if (added.ok && (!result.best || added.time_ms.median < result.evaluations[*result.best].time_ms.median)) {
          result.best = result.evaluations.size() - 1;
        }
      }
      result.space_size = static_cast<std::int64_t>(result.evaluations.size());
      results.push_back(std::move(result));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(where + ": " + e.what());
    }
  }
  return results;
}

/// --convergence-from: the convergence table from recorded validate runs, no GPU needed.
void run_convergence_from(const TuneArguments& args) {
  std::vector<std::pair<ProblemSpec, tuner::ConvergenceReport>> reports;
  nlohmann::json cases = nlohmann::json::array();
  for (const tuner::TuningResult& result : results_from_validate(args.convergence_from)) {
    reports.emplace_back(result.problem, tuner::convergence(result));
    cases.push_back({{"problem", advisor::describe(result.problem)},
                     {"best_config", result.best_evaluation()->config.to_string()},
                     {"convergence", tuner::convergence_to_json(reports.back().second)}});
  }
  print_convergence_table(reports);
  if (!args.json.empty()) {
    tuner::write_text_file(args.json,
                           nlohmann::json({{"source", args.convergence_from}, {"cases", cases}}).dump(2) + '\n');
  }
}

/// Flags that the others given make pointless are rejected rather than ignored.
void reject_unused_flags(const CLI::App& command, const TuneArguments& args) {
  if (args.report_convergence) {
    reject_flags(command, {"--strategy", "--seed", "--budget"}, "with --report-convergence (it measures every config)");
  }
  if (args.strategy != "random") reject_flags(command, {"--seed"}, "without --strategy random");
}

/// Checks the arguments before any work; the problem with n = 0 (each --n fills it in).
ProblemSpec checked_base_problem(const TuneArguments& args) {
  if (args.problem.family.empty()) throw InputError("tune: give --pattern FAMILY (or --convergence-from FILE)");
  family_info(args.problem.family);
  if (args.sizes.empty()) throw InputError("tune: give at least one --n");
  ProblemOptions sized = args.problem;
  ProblemSpec base;
  for (const std::int64_t n : args.sizes) {
    sized.n = n;
    base = sized.problem();
  }
  base.n = 0;
  tuner::parse_strategy_kind(args.strategy); // reject a bad name before any work
  if (args.budget < 0) throw InputError("--budget must be >= 0, got " + std::to_string(args.budget));
  if (args.max_repeats < tuner::MeasurementPolicy{}.min_repeats) {
    throw InputError("--max-repeats must be at least " + std::to_string(tuner::MeasurementPolicy{}.min_repeats) +
                     ", got " + std::to_string(args.max_repeats));
  }
  if (args.timeout_s <= 0) throw InputError("--timeout-s must be positive, got " + std::to_string(args.timeout_s));
  return base;
}

/// The generated header and the JSON results, where asked for.
void write_tune_outputs(const TuneArguments& args, const std::vector<tuner::MeasuringDevice>& group,
                        const DeviceProfile& profile, const std::filesystem::path& profile_path,
                        const std::vector<tuner::TunedEntry>& entries, tuner::TuneResults results) {
  const bool measuring = !group.empty();
  const std::string device = measuring ? group.front().name : std::string();
  const std::string strategy =
      measuring ? (args.report_convergence ? "exhaustive" : args.strategy) : "static (advisor's model ranking)";
  if (!args.header.empty()) {
    const tuner::HeaderInfo info{measuring ? device : profile.device.name + " (profile; not measured)",
                                 profile_path.string(), strategy, command_line_text()};
    tuner::write_text_file(args.header, tuner::render_header(entries, info));
  }
  if (!args.json.empty()) {
    results.cachewise_version = CACHEWISE_VERSION;
    results.measured = measuring;
    results.device_name = device;
    results.compute_capability = measuring ? group.front().compute_capability : 0;
    results.devices = group;
    results.profile = profile_path.string();
    results.strategy = strategy;
    tuner::write_tune_results(results, args.json);
  }
}

void tune_sizes(const TuneArguments& args, const ProblemSpec& base, const Config& fixed,
                const std::vector<tuner::MeasuringDevice>& group, const TuneDevices& devices);

void run_tune(const CLI::App& command, const TuneArguments& args) {
  if (args.kernel.kernel.given()) return run_tune_kernel_with(args);
  reject_flags(command, {"--max-candidates"}, "without --kernel/--spec (it caps a kernel spec's space)");
  if (!args.convergence_from.empty()) {
    if (!args.problem.family.empty() || !args.sizes.empty()) {
      throw InputError("tune: --convergence-from reads recorded runs; it takes no --pattern or --n");
    }
    reject_flags(command,
                 {"--m", "--k", "--dtype", "--fix", "--strategy", "--seed", "--budget", "--max-repeats", "--timeout-s",
                  "--journal", "--header", "--report-convergence", "--profile"},
                 "with --convergence-from (it reads recorded runs)");
    run_convergence_from(args);
    return;
  }
  reject_unused_flags(command, args);
  const ProblemSpec base = checked_base_problem(args);
  const Config fixed = Config::parse(args.fix);

  const TuneDevices devices = tune_devices(args.gpus, args.mpi);
  on_every_rank(devices, [&] {
    if (devices.groups.empty()) return tune_sizes(args, base, fixed, {}, devices);
    for (const std::vector<tuner::MeasuringDevice>& group : devices.groups) {
      TuneArguments per_model = args;
      for (std::string* file : {&per_model.header, &per_model.json, &per_model.journal}) {
        *file = path_for_model(*file, group.front().name, devices.groups.size());
      }
      tune_sizes(per_model, base, fixed, group, devices);
    }
  });
}

/// Every --n measured on `group` (one model), or the static recommendation when it is empty.
void tune_sizes(const TuneArguments& args, const ProblemSpec& base, const Config& fixed,
                const std::vector<tuner::MeasuringDevice>& group, const TuneDevices& devices) {
  const bool measuring = !group.empty();
  const std::filesystem::path profile_path = args.problem.profile.empty()
                                                 ? bundled_profile_path(measuring ? group.front().name : std::string())
                                                 : std::filesystem::path(args.problem.profile);
  const DeviceProfile profile = load_profile(profile_path);
  if (!measuring && args.report_convergence) {
    throw NoDeviceError("no CUDA device: --report-convergence needs measurements");
  }

  std::vector<tuner::TunedEntry> entries;
  tuner::TuneResults tune_results;
  std::vector<std::pair<ProblemSpec, tuner::ConvergenceReport>> convergence_reports;
  std::map<std::string, std::set<std::int64_t>> parameters; // every size's space: what merge-tuned compares
  for (const std::int64_t n : args.sizes) {
    ProblemSpec problem = base;
    problem.n = n;
    warn_about_size(problem);
    const RankedSpace ranked = rank_space(problem, profile, fixed);
    for (const auto& [name, values] : ranked.space.parameters()) parameters[name].insert(values.begin(), values.end());
    tuner::TunedSize size;
    size.record = {{"problem", advisor::describe(problem)}, {"n", n}, {"feasible", ranked.ranked.size()}};
    if (measuring) {
      const std::optional<tuner::TuningResult> tuned = tune_one(args, ranked, group, devices);
      if (!tuned) continue; // a measuring MPI rank: rank 0 reports
      const tuner::TuningResult& result = *tuned;
      entries.push_back(tuner::tuned_entry(result));
      size.record["results"] = tuner::results_to_json(result);
      if (args.report_convergence) {
        convergence_reports.emplace_back(problem, tuner::convergence(result));
        size.record["convergence"] = tuner::convergence_to_json(convergence_reports.back().second);
      }
    } else {
      const advisor::Candidate& best = ranked.ranked.front();
      entries.push_back({problem, best.config, false, best.prediction.time_us / 1000.0,
                         "model-predicted best of " + std::to_string(ranked.ranked.size()) + " feasible candidates"});
    }
    const advisor::Candidate& best_predicted = ranked.ranked.front();
    size.sizes = {{"n", n}};
    size.pick = {entries.back().config, entries.back().time_ms};
    size.record["time_us"] = entries.back().time_ms * 1000.0;
    size.note = entries.back().note;
    size.static_pick = {best_predicted.config, best_predicted.prediction.time_us / 1000.0};
    tune_results.sizes.push_back(std::move(size));
    std::cout << advisor::describe(problem) << ": " << entries.back().config.to_string() << "  "
              << advisor::time_text(entries.back().time_ms * 1000.0) << ' '
              << (measuring ? "measured" : "predicted (not measured)") << '\n';
  }
  if (!convergence_reports.empty()) {
    std::cout << '\n';
    print_convergence_table(convergence_reports);
  }

  if (!devices.writes_outputs()) return;
  for (const auto& [name, values] : parameters)
    tune_results.parameters[name] = std::vector<std::int64_t>(values.begin(), values.end());
  tune_results.scope = base.family + "_" + to_string(base.dtype);
  write_tune_outputs(args, group, profile, profile_path, entries, std::move(tune_results));
  if (!measuring) {
    std::cerr << "advisor: tune: no CUDA device"
#ifndef CACHEWISE_WITH_CUDA
              << " (built without CUDA)"
#endif
              << "; wrote the advisor's static recommendation (model-predicted, not measured)"
              << (args.header.empty() ? std::string() : " to " + args.header) << '\n';
  }
}

void add_tune(CLI::App& root) {
  auto* command = root.add_subcommand("tune",
                                      "Measure a pattern's feasible layouts on the local GPU and write a tuned C++ "
                                      "header (static recommendation without a GPU)");
  auto args = std::make_shared<TuneArguments>();
  add_problem_options(*command, args->problem, PatternFileOption::not_offered, SizeOptions::without_n);
  command->add_option("--n", args->sizes, "Problem size n; repeat for several size buckets");
  command->add_option("--fix", args->fix, "Pin keys, e.g. stride=4 or radius=2");
  command->add_option("--strategy", args->strategy, "exhaustive, random or model (advisor order, widening)")
      ->capture_default_str();
  command->add_option("--seed", args->seed, "Seed of the random strategy")->capture_default_str();
  command->add_option("--budget", args->budget, "Most candidates measured per size (0: no cap)")->capture_default_str();
  command->add_option("--max-repeats", args->max_repeats, "Most timed launches per candidate and round")
      ->capture_default_str();
  command->add_option("--timeout-s", args->timeout_s, "Per-candidate timeout in seconds")->capture_default_str();
  command->add_option("--journal", args->journal,
                      "JSON-lines journal; a killed run resumes from it (FILE.n<N>.ext per size when several)");
  command->add_option("--header", args->header, "Write the tuned C++ header here");
  command->add_option("--json", args->json, "Write the results (every evaluation) as JSON here");
  command->add_flag(
      "--report-convergence", args->report_convergence,
      "Measure exhaustively and report how many evaluations model-ranked and random need to reach 99% of the best");
  command->add_option("--convergence-from", args->convergence_from,
                      "Compute the convergence table from `advisor validate --all --json` output (a case or a list of "
                      "cases); no GPU needed");
  command->add_option("--gpus", args->gpus,
                      "Measure on these GPUs at once: all, or indexes like 0,2,3 (one child process each; each model "
                      "tuned on its own)");
  command->add_flag("--mpi", args->mpi,
                    "Under mpirun: rank 0 plans and hands out candidates, the other ranks measure (docs/tuner.md)");
  add_kernel_tune_options(*command, args->kernel);
  command->callback([args, command] { run_tune(*command, *args); });
}

} // namespace

CACHEWISE_REGISTER_COMMAND(50, add_tune);

} // namespace cachewise::cli
