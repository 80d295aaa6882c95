// `advisor tune --kernel/--spec`: per size bucket, the front end's ranking (static, and the
// model-ranked strategy's order) and, with a GPU, measurements through the launch layer.
#include "tune_kernel.hpp"

#include <cmath>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "cachewise/frontend/kernel_advisor.hpp"
#include "cachewise/tuner.hpp"
#include "cachewise/tuner/cache_comparison.hpp"
#include "cachewise/tuner/kernel_tuner_cache.hpp"
#include "cachewise/tuner/kernel_tuning.hpp"
#include "common.hpp"
#include "tune_devices.hpp"

namespace cachewise::cli {
namespace {

std::vector<tuner::SizeBucket> size_buckets(const KernelTuneArguments& args, const frontend::KernelSpec& spec) {
  std::vector<tuner::SizeBucket> buckets;
  for (const std::string& text : args.sizes) buckets.push_back(tuner::parse_size_bucket(text));
  if (buckets.empty()) {
    // The spec's own sizes are the one bucket: its args, else its integer defines (sizes given
    // as macros), else none (sizes that are constants of the source: the header's `fixed`).
    buckets.push_back({spec.args.empty() ? frontend::integer_defines(spec) : spec.args});
  }
  for (const tuner::SizeBucket& bucket : buckets) {
    if (bucket.args.size() != buckets.front().args.size())
      throw InputError("tune: every --size must name the same args");
    for (std::size_t i = 0; i < bucket.args.size(); ++i) {
      if (bucket.args[i].name != buckets.front().args[i].name)
        throw InputError("tune: every --size must name the same args, in the same order");
    }
  }
  return buckets;
}

std::string bucket_file_name(const tuner::SizeBucket& bucket) {
  std::string name;
  for (const frontend::NamedValue& arg : bucket.args)
    name += (name.empty() ? "" : "_") + arg.name + std::to_string(arg.value);
  return name;
}

/// FILE as given for one bucket; with several, FILE.<bucket>.ext (e.g. tune.width1024_height1024.jsonl).
std::filesystem::path path_for(const std::string& file, const tuner::SizeBucket& bucket, std::size_t bucket_count) {
  if (file.empty() || bucket_count == 1) return file;
  std::filesystem::path path = file;
  const std::string extension = path.extension().string();
  path.replace_extension();
  path += "." + bucket_file_name(bucket) + extension;
  return path;
}

std::string ms_text(double ms) {
  std::ostringstream out;
  out << std::setprecision(4) << ms;
  return out.str();
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::vector<std::pair<std::string, std::int64_t>> bucket_sizes(const tuner::SizeBucket& bucket) {
  std::vector<std::pair<std::string, std::int64_t>> sizes;
  for (const frontend::NamedValue& arg : bucket.args) sizes.emplace_back(arg.name, arg.value);
  return sizes;
}

/// The front end's ranking of every candidate on `profile`.
advisor::Suggestion rank_statically(const frontend::KernelSpec& spec, const DeviceProfile& profile,
                                    frontend::Compiler& compiler) {
  frontend::KernelSuggestOptions options;
  options.suggest.top = std::numeric_limits<std::size_t>::max();
  return frontend::suggest_kernel(spec, profile, compiler, options).suggestion;
}

struct BucketOutcome {
  tuner::HeaderBucket header;
  nlohmann::json json;
};

BucketOutcome static_bucket(const frontend::KernelSpec& spec, const tuner::SizeBucket& bucket,
                            const DeviceProfile& profile, frontend::Compiler& compiler) {
  const advisor::Suggestion suggestion = rank_statically(spec, profile, compiler);
  const advisor::Candidate& best = suggestion.ranked.front();
  const std::string note = "model-predicted best of " + std::to_string(suggestion.feasible) + " feasible candidates (" +
                           std::to_string(suggestion.enumerated - suggestion.feasible) + " rejected)";
  BucketOutcome outcome{{bucket_sizes(bucket), {}, best.config, false, best.prediction.time_us / 1000.0, note}, {}};
  outcome.json = {{"size", bucket.label()},
                  {"note", note},
                  {"ranked", suggestion.ranked.size()},
                  {"rejected", suggestion.enumerated - suggestion.feasible},
                  {"static", {{"config", best.config.to_string()}, {"time_ms", best.prediction.time_us / 1000.0}}}};
  return outcome;
}

/// The front end's ranking, or nullopt with why when the model cannot rank this kernel.
std::optional<advisor::Suggestion> try_rank_statically(const frontend::KernelSpec& spec, const DeviceProfile& profile,
                                                       frontend::Compiler& compiler, std::string& why_not) {
  try {
    return rank_statically(spec, profile, compiler);
  } catch (const InputError& error) {
    why_not = error.what();
    return std::nullopt;
  }
}

tuner::Strategy strategy_for(const TuneRunOptions& run, const std::optional<advisor::Suggestion>& ranking,
                             const std::string& why_not) {
  switch (tuner::parse_strategy_kind(run.strategy)) {
  case tuner::StrategyKind::exhaustive: return tuner::Strategy::exhaustive();
  case tuner::StrategyKind::random: return tuner::Strategy::random(run.seed);
  case tuner::StrategyKind::model_ranked: break;
  }
  if (!ranking)
    throw InputError("tune: the model cannot rank this kernel (" + why_not + "); use --strategy exhaustive or random");
  const advisor::Suggestion& suggestion = *ranking;
  auto predicted_us = std::make_shared<std::map<std::string, double>>();
  for (const advisor::Candidate& candidate : suggestion.ranked)
    (*predicted_us)[candidate.config.to_string()] = candidate.prediction.time_us;
  // What the model rejected (does not fit, does not compile) is visited last, not skipped: the launch says why.
  return tuner::Strategy::model_ranked([predicted_us](const Config& config) {
    const auto found = predicted_us->find(config.to_string());
    return found == predicted_us->end() ? std::numeric_limits<double>::infinity() : found->second;
  });
}

/// Compiles every candidate of every bucket and the model's ranking in a child process, into
/// the compile cache, so that this process, which forks the measuring children, never compiles
/// with NVRTC (Compiler::set_in_process). A failure here is not reported: the parent meets it
/// again and says what it is (a kernel the model cannot rank is still measured).
void compile_in_child(const frontend::KernelSpec& spec, const std::vector<tuner::SizeBucket>& buckets,
                      const DeviceProfile& profile, int compute_capability) {
  tuner::run_in_child_process(
      [&] {
        frontend::Compiler compiler;
        for (const tuner::SizeBucket& bucket : buckets) {
          const frontend::KernelSpec sized = tuner::with_size_bucket(spec, bucket);
          std::string why_not;
          try_rank_statically(sized, profile, compiler, why_not);
          tuner::KernelCandidates(sized, compiler, compute_capability);
        }
        return std::string();
      },
      std::chrono::minutes(30));
}

/// nullopt on a measuring MPI rank.
std::optional<BucketOutcome> measured_bucket(const KernelTuneArguments& args, const TuneRunOptions& run,
                                             const frontend::KernelSpec& spec, const tuner::SizeBucket& bucket,
                                             std::size_t bucket_count, const std::vector<tuner::MeasuringDevice>& group,
                                             const TuneDevices& devices, const DeviceProfile& profile,
                                             frontend::Compiler& compiler) {
  const tuner::MeasuringDevice& device = group.front();
  auto candidates = std::make_shared<const tuner::KernelCandidates>(spec, compiler, device.compute_capability);
  const ProblemSpec problem = tuner::kernel_problem(spec, bucket);
  tuner::Tuner tuner(problem, candidates->space());
  tuner.set_measure(measure_on(devices, [&] {
    return tuner::kernel_measure(candidates, [] { return tuner::open_cuda_device(); },
                                 {profile.device.l2_bytes_reported});
  }));
  std::string why_not_ranked;
  const std::optional<advisor::Suggestion> ranking = try_rank_statically(spec, profile, compiler, why_not_ranked);
  tuner.set_strategy(strategy_for(run, ranking, why_not_ranked));
  tuner::Options options;
  options.budget = run.budget;
  options.candidate_timeout = std::chrono::seconds(run.timeout_s);
  options.measurement.max_repeats = run.max_repeats;
  options.journal = path_for(run.journal, bucket, bucket_count);
  options.devices = group;
  // An existing --kernel-tuner-cache is resumed: its measured configurations are not measured again.
  const std::filesystem::path cache_path = path_for(args.kernel_tuner_cache, bucket, bucket_count);
  std::vector<std::int64_t> problem_size;
  for (const frontend::NamedValue& arg : bucket.args) problem_size.push_back(arg.value);
  const tuner::KernelTunerCacheInfo cache_info{device.name, frontend::parse_entry_name(spec.entry).function,
                                               problem_size, utc_now()};
  std::optional<tuner::KernelTunerCache> resumed;
  std::set<std::string> from_cache;
  if (!args.kernel_tuner_cache.empty() && std::filesystem::exists(cache_path)) {
    resumed = tuner::load_kernel_tuner_cache(cache_path);
    tuner::check_cache_continues(*resumed, cache_info, candidates->space(), cache_path.string());
    const tuner::CacheMatch match = tuner::match_cache_to_space(*resumed, candidates->space());
    options.known_rounds = tuner::cached_rounds(match, resumed->device_name, options.measurement);
    for (const tuner::RoundRecord& record : options.known_rounds) from_cache.insert(record.config.to_string());
    std::cerr << "tune: resuming from " << cache_path.string() << ": " << match.matched.size() << " of its "
              << resumed->entries.size() << " configurations are candidates\n";
  }
  tuner.set_options(options);
  const std::size_t space_size = candidates->space().enumerate().size();
  std::size_t done = 0;
  tuner.on_progress([&](const tuner::Progress& progress) {
    const tuner::Evaluation& e = progress.evaluation;
    std::cerr << "tune: " << problem.family << " [" << (progress.round == 0 ? ++done : done) << "/" << space_size
              << "] " << e.config.to_string() << ": "
              << (e.ok ? ms_text(e.time_ms.median) + " ms (" + std::to_string(e.samples_ms.size()) + " samples)"
                       : "failed: " + e.failure)
              << device_tag(e.device, group.size()) << (progress.round > 0 ? " [measured again]" : "")
              << (!progress.from_journal                      ? ""
                  : from_cache.contains(e.config.to_string()) ? " [kernel tuner cache]"
                                                              : " [journal]")
              << '\n';
  });
  const std::optional<tuner::TuningResult> tuned = run_tuner(tuner, devices);
  if (!tuned) return std::nullopt;
  const tuner::TuningResult& result = *tuned;
  const tuner::Evaluation* best = result.best_evaluation();
  if (best == nullptr) {
    throw InputError(problem.family + ": every candidate failed; first: " +
                     result.evaluations.front().config.to_string() + ": " + result.evaluations.front().failure);
  }
  const tuner::TunedEntry entry = tuner::tuned_entry(result);
  BucketOutcome outcome{{bucket_sizes(bucket), {}, entry.config, true, entry.time_ms, entry.note}, {}};
  outcome.json = {{"size", bucket.label()}, {"note", entry.note}, {"results", tuner::results_to_json(result)}};
  if (ranking) {
    const advisor::Candidate& best_predicted = ranking->ranked.front();
    outcome.json["static"] = {{"config", best_predicted.config.to_string()},
                              {"time_ms", best_predicted.prediction.time_us / 1000.0}};
  }
  if (!args.kernel_tuner_cache.empty()) {
    tuner::write_text_file(
        cache_path,
        tuner::kernel_tuner_cache(result, candidates->space(), cache_info, resumed ? &*resumed : nullptr).dump(1) +
            '\n');
  }
  return outcome;
}

/// Every bucket measured on `group` (one model), or ranked statically when it is empty.
void tune_kernel_on(const KernelTuneArguments& args, const TuneRunOptions& run, const std::string& profile_path,
                    const frontend::KernelSpec& spec, const std::vector<tuner::SizeBucket>& buckets,
                    const std::vector<tuner::MeasuringDevice>& group, const TuneDevices& devices) {
  const tuner::MeasuringDevice* device = group.empty() ? nullptr : &group.front();
  // Not load_profile_for_cli: it asks CUDA for the device in this process, and a parent that
  // has initialised CUDA cannot fork children that use it.
  const std::filesystem::path chosen = profile_path.empty()
                                           ? bundled_profile_path(device ? device->name : std::string())
                                           : std::filesystem::path(profile_path);
  const LoadedProfile loaded{load_profile(chosen), chosen, profile_path.empty() ? "bundled" : "--profile"};
  const DeviceProfile& profile = loaded.profile;
  frontend::Compiler compiler;
  if (device) {
    compile_in_child(spec, buckets, profile, device->compute_capability);
    compiler.set_in_process(false);
  }
  const std::string function = frontend::parse_entry_name(spec.entry).function;

  std::vector<tuner::HeaderBucket> header_buckets;
  nlohmann::json sizes_json = nlohmann::json::array();
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const frontend::KernelSpec sized = tuner::with_size_bucket(spec, buckets[i]);
    std::optional<BucketOutcome> measured;
    if (device) {
      measured = measured_bucket(args, run, sized, buckets[i], buckets.size(), group, devices, profile, compiler);
      if (!measured) continue; // a measuring MPI rank: rank 0 reports
    }
    BucketOutcome outcome = measured ? std::move(*measured) : static_bucket(sized, buckets[i], profile, compiler);
    outcome.json["bucket"] = tuned_bucket_json(outcome.header.sizes);
    outcome.json["config"] = outcome.header.config.to_string();
    outcome.json["time_ms"] = outcome.header.time_ms;
    std::cout << tuner::kernel_problem(sized, buckets[i]).family << ": " << outcome.header.config.to_string() << "  "
              << ms_text(outcome.header.time_ms) << " ms " << (device ? "measured" : "predicted (not measured)")
              << '\n';
    header_buckets.push_back(std::move(outcome.header));
    sizes_json.push_back(std::move(outcome.json));
  }
  if (!devices.writes_outputs()) return;
  const std::string strategy = device ? run.strategy : "static (the front end's model ranking)";
  if (!run.header.empty()) {
    const tuner::HeaderInfo info{device ? device->name : profile.device.name + " (profile; not measured)",
                                 loaded.path.string(), strategy, command_line_text()};
    tuner::write_text_file(run.header, tuner::render_bucket_header(function, header_buckets, info));
  }
  if (!run.json.empty()) {
    nlohmann::json parameters = nlohmann::json::object();
    for (const frontend::ParameterValues& parameter : spec.parameters) parameters[parameter.name] = parameter.values;
    const nlohmann::json json = {
        {"kernel", spec.entry + " in " + spec.source.string()},
        {"scope", function},
        {"parameters", parameters},
        {"compute_capability", device ? nlohmann::json(device->compute_capability) : nlohmann::json()},
        {"device", device ? nlohmann::json(device->name) : nlohmann::json()},
        {"devices", devices_json(group)},
        {"measured", device != nullptr},
        {"profile", loaded.path.string()},
        {"strategy", strategy},
        {"sizes", sizes_json}};
    tuner::write_text_file(run.json, json.dump(2) + '\n');
  }
  if (!device) {
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
  const std::vector<tuner::SizeBucket> buckets = size_buckets(args, spec);
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
