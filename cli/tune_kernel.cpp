// `advisor tune --kernel/--spec`: the flags of tuner::tune_kernel, its progress on stderr, each
// bucket's pick on stdout, and the header and results file it returns.
#include "tune_kernel.hpp"

#include <iomanip>
#include <iostream>
#include <sstream>

#include "cachewise/tuner.hpp"
#include "cachewise/tuner/tune_kernel.hpp"
#include "common.hpp"
#include "tune_devices.hpp"

namespace cachewise::cli {
namespace {

std::string ms_text(double ms) {
  std::ostringstream out;
  out << std::setprecision(4) << ms;
  return out.str();
}

/// Every bucket measured on `group` (one model), or ranked statically when it is empty.
void tune_kernel_on(const KernelTuneArguments& args, const TuneRunOptions& run, const std::string& profile_path,
                    const frontend::KernelSpec& spec, const std::vector<tuner::SizeBucket>& buckets,
                    const std::vector<tuner::MeasuringDevice>& group, const TuneDevices& devices) {
  tuner::KernelTuneOptions options;
  options.strategy = run.strategy;
  options.seed = run.seed;
  options.budget = run.budget;
  options.candidate_timeout = std::chrono::seconds(run.timeout_s);
  options.max_repeats = run.max_repeats;
  options.journal = run.journal;
  options.kernel_tuner_cache = args.kernel_tuner_cache;
  options.profile = profile_path;
  tuner::KernelTuneHooks hooks;
  hooks.devices = &devices.source();
  hooks.run = [&](tuner::Tuner& tuner) { return run_tuner(tuner, devices); };
  hooks.on_note = [](const std::string& note) { std::cerr << "tune: " << note << '\n'; };
  hooks.on_progress = [&](const tuner::KernelTuneProgress& report) {
    const tuner::Evaluation& e = report.progress.evaluation;
    std::cerr << "tune: " << report.problem.family << " [" << report.done << "/" << report.space_size << "] "
              << e.config.to_string() << ": "
              << (e.ok ? ms_text(e.time_ms.median) + " ms (" + std::to_string(e.samples_ms.size()) + " samples)"
                       : "failed: " + e.failure)
              << device_tag(e.device, group.size()) << (report.progress.round > 0 ? " [measured again]" : "")
              << (!report.progress.from_journal    ? ""
                  : report.from_kernel_tuner_cache ? " [kernel tuner cache]"
                                                   : " [journal]")
              << '\n';
  };
  hooks.on_bucket = [&](const ProblemSpec& problem, const tuner::HeaderBucket& bucket) {
    std::cout << problem.family << ": " << bucket.config.to_string() << "  " << ms_text(bucket.time_ms) << " ms "
              << (group.empty() ? "predicted (not measured)" : "measured") << '\n';
  };
  tuner::KernelTuneOutcome outcome = tuner::tune_kernel(spec, buckets, group, options, hooks);
  if (!devices.writes_outputs()) return;
  if (!run.header.empty()) {
    outcome.header.generated_by = command_line_text();
    tuner::write_text_file(run.header, tuner::render_bucket_header(outcome.function, outcome.buckets, outcome.header));
  }
  if (!run.json.empty()) tuner::write_tune_results(outcome.results, run.json);
  if (group.empty()) {
    std::cerr << "advisor: tune: " << devices.why_none
              << "; wrote the front end's static ranking (model-predicted, not measured)"
              << (run.header.empty() ? std::string() : " to " + run.header) << '\n';
  }
}

} // namespace

void add_kernel_tune_options(CLI::App& command, KernelTuneArguments& arguments) {
  add_kernel_options(command, arguments.kernel);
  add_max_candidates_option(command, arguments.kernel);
  command
      .add_option("--size", arguments.sizes,
                  "NAME=N[,NAME=N...]: one size bucket of a --kernel/--spec (args it sets); repeat")
      ->group("User kernel (docs/kernel-spec.md)");
  command
      .add_option("--kernel-tuner-cache", arguments.kernel_tuner_cache,
                  "Kernel Tuner cache file: resumed from when it exists (its measurements are not taken again), then "
                  "written with every measurement (FILE.<bucket>.json per bucket when several)")
      ->group("User kernel (docs/kernel-spec.md)");
}

void run_tune_kernel(const KernelTuneArguments& args, const TuneRunOptions& run, const std::string& profile_path) {
  tuner::parse_strategy_kind(run.strategy); // reject a bad name before any work
  if (run.budget < 0) throw InputError("--budget must be >= 0, got " + std::to_string(run.budget));
  if (run.timeout_s <= 0) throw InputError("--timeout-s must be positive, got " + std::to_string(run.timeout_s));
  const frontend::KernelSpec spec = kernel_spec_from_options(args.kernel);
  frontend::validate_kernel_spec(spec);
  const std::vector<tuner::SizeBucket> buckets = tuner::size_buckets(args.sizes, spec);
  for (const tuner::SizeBucket& bucket : buckets) tuner::with_size_bucket(spec, bucket); // unknown args fail first
  const TuneDevices devices = tune_devices(run.gpus, run.mpi);
  on_every_rank(devices, [&] {
    if (devices.groups.empty()) return tune_kernel_on(args, run, profile_path, spec, buckets, {}, devices);
    for (const std::vector<tuner::MeasuringDevice>& group : devices.groups) {
      const std::string& model = group.front().name;
      const std::size_t models = devices.groups.size();
      TuneRunOptions per_model = run;
      KernelTuneArguments per_model_args = args;
      for (std::string* file :
           {&per_model.header, &per_model.json, &per_model.journal, &per_model_args.kernel_tuner_cache}) {
        *file = path_for_model(*file, model, models);
      }
      tune_kernel_on(per_model_args, per_model, profile_path, spec, buckets, group, devices);
    }
  });
}

} // namespace cachewise::cli
