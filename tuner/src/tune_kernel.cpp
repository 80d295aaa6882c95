// tune_kernel: per size bucket, the front end's ranking (static, and the model-ranked
// strategy's order) and, with a GPU, measurements through the launch layer.
#include "cachewise/tuner/tune_kernel.hpp"

#include <ctime>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "cachewise/model/errors.hpp"
#include "cachewise/frontend/kernel_advisor.hpp"
#include "cachewise/model.hpp"
#include "cachewise/tuner/cache_comparison.hpp"
#include "cachewise/tuner/isolation.hpp"
#include "cachewise/tuner/kernel_tuner_cache.hpp"
#include "cachewise/tuner/kernel_tuning.hpp"

namespace cachewise::tuner {
namespace {

std::string bucket_file_name(const SizeBucket& bucket) {
  std::string name;
  for (const frontend::NamedValue& arg : bucket.args)
    name += (name.empty() ? "" : "_") + arg.name + std::to_string(arg.value);
  return name;
}

/// FILE as given for one bucket; with several, FILE.<bucket>.ext (e.g. tune.width1024_height1024.jsonl).
std::filesystem::path path_for(const std::filesystem::path& file, const SizeBucket& bucket, std::size_t bucket_count) {
  if (file.empty() || bucket_count == 1) return file;
  std::filesystem::path path = file;
  const std::string extension = path.extension().string();
  path.replace_extension();
  path += "." + bucket_file_name(bucket) + extension;
  return path;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::vector<std::pair<std::string, std::int64_t>> bucket_sizes(const SizeBucket& bucket) {
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
  HeaderBucket header;
  TunedSize size;
};

BucketOutcome static_bucket(const frontend::KernelSpec& spec, const SizeBucket& bucket, const DeviceProfile& profile,
                            frontend::Compiler& compiler) {
  const advisor::Suggestion suggestion = rank_statically(spec, profile, compiler);
  const advisor::Candidate& best = suggestion.ranked.front();
  const std::string note = "model-predicted best of " + std::to_string(suggestion.feasible) + " feasible candidates (" +
                           std::to_string(suggestion.enumerated - suggestion.feasible) + " rejected)";
  BucketOutcome outcome{{bucket_sizes(bucket), {}, best.config, false, best.prediction.time_us / 1000.0, note}, {}};
  outcome.size.record = {{"size", bucket.label()},
                         {"ranked", suggestion.ranked.size()},
                         {"rejected", suggestion.enumerated - suggestion.feasible}};
  outcome.size.static_pick = TunedPick{best.config, best.prediction.time_us / 1000.0};
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

Strategy strategy_for(const KernelTuneOptions& options, const std::optional<advisor::Suggestion>& ranking,
                      const std::string& why_not) {
  switch (parse_strategy_kind(options.strategy)) {
  case StrategyKind::exhaustive: return Strategy::exhaustive();
  case StrategyKind::random: return Strategy::random(options.seed);
  case StrategyKind::model_ranked: break;
  }
  if (!ranking)
    throw InputError("tune: the model cannot rank this kernel (" + why_not + "); use --strategy exhaustive or random");
  const advisor::Suggestion& suggestion = *ranking;
  auto predicted_us = std::make_shared<std::map<std::string, double>>();
  for (const advisor::Candidate& candidate : suggestion.ranked)
    (*predicted_us)[candidate.config.to_string()] = candidate.prediction.time_us;
  // What the model rejected (does not fit, does not compile) is visited last, not skipped: the launch says why.
  return Strategy::model_ranked([predicted_us](const Config& config) {
    const auto found = predicted_us->find(config.to_string());
    return found == predicted_us->end() ? std::numeric_limits<double>::infinity() : found->second;
  });
}

/// Compiles every candidate of every bucket and the model's ranking in a child process, into
/// the compile cache, so that this process, which forks the measuring children, never compiles
/// with NVRTC (Compiler::set_in_process). A failure here is not reported: the parent meets it
/// again and says what it is (a kernel the model cannot rank is still measured).
void compile_in_child(const frontend::KernelSpec& spec, const std::vector<SizeBucket>& buckets,
                      const DeviceProfile& profile, int compute_capability) {
  run_in_child_process(
      [&] {
        frontend::Compiler compiler;
        for (const SizeBucket& bucket : buckets) {
          const frontend::KernelSpec sized = with_size_bucket(spec, bucket);
          std::string why_not;
          try_rank_statically(sized, profile, compiler, why_not);
          KernelCandidates(sized, compiler, compute_capability);
        }
        return std::string();
      },
      std::chrono::minutes(30));
}

/// nullopt on a measuring MPI rank.
std::optional<BucketOutcome> measured_bucket(const frontend::KernelSpec& spec, const SizeBucket& bucket,
                                             std::size_t bucket_count, const std::vector<MeasuringDevice>& group,
                                             const KernelTuneOptions& run, const KernelTuneHooks& hooks,
                                             const DeviceProfile& profile, frontend::Compiler& compiler) {
  const MeasuringDevice& device = group.front();
  auto candidates = std::make_shared<const KernelCandidates>(spec, compiler, device.compute_capability);
  const ProblemSpec problem = kernel_problem(spec, bucket);
  Tuner tuner(problem, candidates->space());
  tuner.set_measure(hooks.devices->measure([&] {
    return kernel_measure(candidates, [] { return open_cuda_device(); }, {profile.device.l2_bytes_reported});
  }));
  std::string why_not_ranked;
  const std::optional<advisor::Suggestion> ranking = try_rank_statically(spec, profile, compiler, why_not_ranked);
  tuner.set_strategy(strategy_for(run, ranking, why_not_ranked));
  Options options;
  options.budget = run.budget;
  options.candidate_timeout = run.candidate_timeout;
  options.measurement.max_repeats = run.max_repeats;
  options.journal = path_for(run.journal, bucket, bucket_count);
  options.devices = group;
  // An existing kernel tuner cache is resumed: its measured configurations are not measured again.
  const std::filesystem::path cache_path = path_for(run.kernel_tuner_cache, bucket, bucket_count);
  std::vector<std::int64_t> problem_size;
  for (const frontend::NamedValue& arg : bucket.args) problem_size.push_back(arg.value);
  const KernelTunerCacheInfo cache_info{device.name, frontend::parse_entry_name(spec.entry).function, problem_size,
                                        utc_now()};
  std::optional<KernelTunerCache> resumed;
  std::set<std::string> from_cache;
  if (!run.kernel_tuner_cache.empty() && std::filesystem::exists(cache_path)) {
    resumed = load_kernel_tuner_cache(cache_path);
    check_cache_continues(*resumed, cache_info, candidates->space(), cache_path.string());
    const CacheMatch match = match_cache_to_space(*resumed, candidates->space());
    options.known_rounds = cached_rounds(match, resumed->device_name, options.measurement);
    for (const RoundRecord& record : options.known_rounds) from_cache.insert(record.config.to_string());
    hooks.on_note("resuming from " + cache_path.string() + ": " + std::to_string(match.matched.size()) + " of its " +
                  std::to_string(resumed->entries.size()) + " configurations are candidates");
  }
  tuner.set_options(options);
  const std::size_t space_size = candidates->space().enumerate().size();
  std::size_t done = 0;
  tuner.on_progress([&](const Progress& progress) {
    if (progress.round == 0) ++done;
    hooks.on_progress({progress, problem, done, space_size,
                       progress.from_journal && from_cache.contains(progress.evaluation.config.to_string())});
  });
  const std::optional<TuningResult> tuned = hooks.run(tuner);
  if (!tuned) return std::nullopt;
  const TuningResult& result = *tuned;
  const Evaluation* best = result.best_evaluation();
  if (best == nullptr) {
    throw InputError(problem.family + ": every candidate failed; first: " +
                     result.evaluations.front().config.to_string() + ": " + result.evaluations.front().failure);
  }
  const TunedEntry entry = tuned_entry(result);
  BucketOutcome outcome{{bucket_sizes(bucket), {}, entry.config, true, entry.time_ms, entry.note}, {}};
  outcome.size.record = {{"size", bucket.label()}, {"results", results_to_json(result)}};
  if (ranking) {
    const advisor::Candidate& best_predicted = ranking->ranked.front();
    outcome.size.static_pick = TunedPick{best_predicted.config, best_predicted.prediction.time_us / 1000.0};
  }
  if (!run.kernel_tuner_cache.empty()) {
    write_text_file(
        cache_path,
        kernel_tuner_cache(result, candidates->space(), cache_info, resumed ? &*resumed : nullptr).dump(1) + '\n');
  }
  return outcome;
}

} // namespace

std::vector<SizeBucket> size_buckets(const std::vector<std::string>& texts, const frontend::KernelSpec& spec) {
  std::vector<SizeBucket> buckets;
  for (const std::string& text : texts) buckets.push_back(parse_size_bucket(text));
  if (buckets.empty()) {
    // The spec's own sizes are the one bucket: its args, else its integer defines (sizes given
    // as macros), else none (sizes that are constants of the source: the header's `fixed`).
    buckets.push_back({spec.args.empty() ? frontend::integer_defines(spec) : spec.args});
  }
  for (const SizeBucket& bucket : buckets) {
    if (bucket.args.size() != buckets.front().args.size())
      throw InputError("tune: every --size must name the same args");
    for (std::size_t i = 0; i < bucket.args.size(); ++i) {
      if (bucket.args[i].name != buckets.front().args[i].name)
        throw InputError("tune: every --size must name the same args, in the same order");
    }
  }
  return buckets;
}

KernelTuneOutcome tune_kernel(const frontend::KernelSpec& spec, const std::vector<SizeBucket>& buckets,
                              const std::vector<MeasuringDevice>& group, const KernelTuneOptions& options,
                              const KernelTuneHooks& hooks) {
  const MeasuringDevice* device = group.empty() ? nullptr : &group.front();
  // The profile is chosen by name, not by asking CUDA for the device in this process: a parent
  // that has initialised CUDA cannot fork children that use it.
  const std::filesystem::path profile_path =
      options.profile.empty() ? bundled_profile_path(device ? device->name : std::string()) : options.profile;
  const DeviceProfile profile = load_profile(profile_path);
  frontend::Compiler compiler;
  if (device) {
    compile_in_child(spec, buckets, profile, device->compute_capability);
    compiler.set_in_process(false);
  }
  KernelTuneOutcome outcome;
  outcome.function = frontend::parse_entry_name(spec.entry).function;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const frontend::KernelSpec sized = with_size_bucket(spec, buckets[i]);
    std::optional<BucketOutcome> measured;
    if (device) {
      measured = measured_bucket(sized, buckets[i], buckets.size(), group, options, hooks, profile, compiler);
      if (!measured) continue; // a measuring MPI rank: rank 0 reports
    }
    BucketOutcome bucket = measured ? std::move(*measured) : static_bucket(sized, buckets[i], profile, compiler);
    bucket.size.sizes = bucket.header.sizes;
    bucket.size.pick = {bucket.header.config, bucket.header.time_ms};
    bucket.size.note = bucket.header.note;
    hooks.on_bucket(kernel_problem(sized, buckets[i]), bucket.header);
    outcome.buckets.push_back(std::move(bucket.header));
    outcome.results.sizes.push_back(std::move(bucket.size));
  }
  const std::string strategy = device ? options.strategy : "static (the front end's model ranking)";
  outcome.header = {
      device ? device->name : profile.device.name + " (profile; not measured)", profile_path.string(), strategy, {}};
  TuneResults& results = outcome.results;
  results.kernel = spec.entry + " in " + spec.source.string();
  results.scope = outcome.function;
  for (const frontend::ParameterValues& parameter : spec.parameters)
    results.parameters[parameter.name] = parameter.values;
  results.measured = device != nullptr;
  results.device_name = device ? device->name : std::string();
  results.compute_capability = device ? device->compute_capability : 0;
  results.devices = group;
  results.profile = profile_path.string();
  results.strategy = strategy;
  return outcome;
}

} // namespace cachewise::tuner
