// suggest_kernel(): spec -> candidates -> compiled PTX (in parallel, cached) -> traced kernels
// -> the advisor's ranking. The unused-parameter check compares the candidates' PTX.
#include "cachewise/frontend/kernel_advisor.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>

#include "cachewise/frontend/extract.hpp"
#include "cachewise/frontend/ptx.hpp"
#include "traced_candidate.hpp"

namespace cachewise::frontend {
namespace {

/// The launch shape alone, checked before compiling: a block the device cannot run needs no
/// compile. Registers are unknown yet (1 passes the check).
void check_launch_shape(const KernelSpec& spec, const EvaluatedSpec& evaluated, const DeviceProfile& profile) {
  TracedKernel shape;
  shape.name = spec.entry;
  shape.grid = evaluated.grid;
  shape.block = evaluated.block;
  shape.shared_bytes_per_block = evaluated.dynamic_shared_bytes;
  shape.registers_per_thread = 1;
  check_fits_device(shape, profile);
}

CompileRequest request_for(const KernelSpec& spec, const EvaluatedSpec& evaluated, const EntryName& entry,
                           int compute_capability) {
  CompileRequest request;
  request.source = spec.source;
  request.compute_capability = compute_capability;
  request.language_standard = spec.language_standard;
  request.include_directories = spec.include_directories;
  request.compiler_options = spec.compiler_options;
  request.defines = spec.defines;
  if (evaluated.template_arguments.empty()) {
    for (const auto& [name, value] : evaluated.config.values())
      request.defines.push_back({name, evaluated.config.text(name)});
  } else {
    request.instantiations.push_back(instance_text(entry.function, evaluated.template_arguments));
  }
  return request;
}

std::string request_key(const CompileRequest& request) {
  std::string key;
  for (const Define& define : request.defines) key += define.name + "=" + define.value + ";";
  for (const std::string& name : request.instantiations) key += name + ";";
  return key;
}

struct Build {
  CompileRequest request;
  std::optional<CompiledKernel> compiled;
  std::string error;
  std::string entry;                       ///< mangled
  std::shared_ptr<const PtxModule> module; ///< parsed once, shared by the candidates of this build
};

struct Planned {
  EvaluatedSpec evaluated;
  std::size_t build = 0;
};

/// "PTX of two values differs in nothing AND no launch expression names it": then the
/// parameter cannot change anything the model sees, and ranking it would be a silent guess.
/// Fed the compiled candidates a chunk at a time; a parameter stops being followed once two of
/// its values are seen to compile differently.
class ParameterUse {
public:
  ParameterUse(const KernelSpec& spec, const SpecExpressions& expressions) {
    for (const ParameterValues& parameter : spec.parameters) {
      if (parameter.values.size() >= 2 && !expressions.evaluation_uses(parameter.name))
        followed_.push_back({parameter.name, false, false, {}});
    }
  }

  void add(const Planned& plan, const Build& build) {
    if (!build.compiled) return;
    std::optional<std::size_t> hash;
    for (Followed& parameter : followed_) {
      if (parameter.differs) continue;
      if (!hash) hash = normalized_ptx_hash(build);
      Config rest = plan.evaluated.config; // configs equal but for this parameter
      rest.set(parameter.name, 0);
      std::set<std::size_t>& hashes = parameter.ptx_by_rest[rest.to_string()];
      hashes.insert(*hash);
      parameter.compared = true;
      if (hashes.size() > 1) {
        parameter.differs = true;
        parameter.ptx_by_rest.clear();
      }
    }
  }

  void check() const {
    for (const Followed& parameter : followed_) {
      if (parameter.compared && !parameter.differs) {
        throw InputError("parameter '" + parameter.name +
                         "' is used neither by the source (its values compile to identical PTX) "
                         "nor by a launch expression");
      }
    }
  }

private:
  struct Followed {
    std::string name;
    bool compared = false;
    bool differs = false;
    std::map<std::string, std::set<std::size_t>> ptx_by_rest;
  };

  /// Compared without the entry's (mangled) name and the .file paths (nvcc's generated unit
  /// lies in a per-thread directory).
  static std::size_t normalized_ptx_hash(const Build& build) {
    std::string ptx = build.compiled->ptx;
    for (std::size_t at = ptx.find(build.entry); !build.entry.empty() && at != std::string::npos;
         at = ptx.find(build.entry, at)) {
      ptx.replace(at, build.entry.size(), "@entry");
    }
    for (std::size_t at = ptx.find(".file"); at != std::string::npos; at = ptx.find(".file", at)) {
      ptx.erase(at, ptx.find('\n', at) - at);
    }
    return std::hash<std::string>{}(ptx);
  }

  std::vector<Followed> followed_;
};

void compile_builds(std::vector<Build>& builds, const EntryName& entry, const std::vector<Planned>& planned,
                    Compiler& compiler, std::size_t threads,
                    const std::function<void(std::size_t, std::size_t)>& on_compiled = {}) {
  std::vector<std::vector<std::string>> template_arguments(builds.size());
  for (const Planned& plan : planned) template_arguments[plan.build] = plan.evaluated.template_arguments;
  std::atomic<std::size_t> compiled{0};
  advisor::in_parallel(builds.size(), threads, [&](std::size_t i) {
    Build& build = builds[i];
    if (build.module) { // compiled and parsed before
      if (on_compiled) on_compiled(++compiled, builds.size());
      return;
    }
    try {
      build.compiled = compiler.compile(build.request);
    } catch (const InputError& error) {
      build.error = error.what();
    }
    if (on_compiled) on_compiled(++compiled, builds.size());
    if (!build.compiled) return;
    // Only the entry's body is parsed: another kernel of the file the extractor cannot read
    // does not matter.
    const auto is_entry = [&](std::string_view name) {
      return is_entry_of(std::string(name), entry.function, template_arguments[i], entry.signature);
    };
    build.module = std::make_shared<const PtxModule>(parse_ptx(build.compiled->ptx, is_entry));
    build.entry = find_entry(entry_names(*build.module), entry.function, template_arguments[i], entry.signature);
  });
}

std::string describe_kernel(const KernelSpec& spec) { return spec.entry + " in " + spec.source.string(); }

/// Each candidate's loads outside every buffer ("out_of_bounds_reads": "simulate"), by config
/// text, as its last prediction traced them.
struct OutOfBoundsTally {
  std::mutex mutex;
  std::map<std::string, OutOfBoundsLoads> by_config;
};

/// The traced kernel of one candidate, with its prediction; a rejection when it does not fit.
/// With `tally`, each prediction records the candidate's loads outside every buffer there.
void admit(const KernelSpec& spec, const Planned& plan, const Build& build,
           const std::optional<std::vector<SourceParameter>>& source_parameters, const DeviceProfile& profile,
           bool name_entry_in_errors, OutOfBoundsTally* tally, advisor::CandidatePool& pool) {
  const EvaluatedSpec& evaluated = plan.evaluated;
  if (!build.compiled)
    return pool.rejected.push_back({advisor::RejectionStage::compile, evaluated.config, build.error});
  TracedCandidate traced;
  try {
    traced = traced_candidate(spec, evaluated, *build.compiled, build.entry, build.module, source_parameters);
  } catch (const TraceLimitError& error) {
    return pool.rejected.push_back({advisor::RejectionStage::trace, evaluated.config, error.what()});
  }
  const std::shared_ptr<TracedKernel>& kernel = traced.kernel;
  const CompilerResources& resources = traced.resources;
  try {
    check_fits_device(*kernel, profile);
  } catch (const InputError& error) {
    return pool.rejected.push_back({advisor::RejectionStage::device_limits, evaluated.config, error.what()});
  }
  const int resident_blocks = blocks_per_sm(*kernel, profile);
  if (resident_blocks == 0) {
    return pool.rejected.push_back(
        {advisor::RejectionStage::occupancy, evaluated.config, "no block can be resident on an SM"});
  }

  advisor::PredictableCandidate admitted;
  admitted.candidate.config = evaluated.config;
  admitted.candidate.threads_per_block = evaluated.block.count();
  admitted.candidate.shared_bytes_per_block = kernel->shared_bytes_per_block;
  admitted.candidate.registers_per_thread = resources.registers_per_thread;
  admitted.candidate.blocks_per_sm = resident_blocks;
  admitted.candidate.compiled = resources;
  admitted.predict = [kernel, extractor = traced.extractor, tally, config = evaluated.config.to_string(), &profile,
                      prefix = name_entry_in_errors ? spec.entry + ": "
                                                    : std::string()](const SimulationOptions& simulation) {
    // The translation lives for one simulation: a ranking holds every candidate's extractor.
    struct Forget {
      const Extractor& extractor;
      ~Forget() { extractor.forget_translation(); }
    } forget{*extractor};
    try {
      Prediction prediction = simulate_traced(*kernel, profile, simulation);
      const ExtractedFacts facts = extractor->facts();
      prediction.summarised_loops = facts.summarised_loops;
      if (tally) {
        const std::lock_guard lock(tally->mutex);
        tally->by_config[config] = facts.out_of_bounds_loads;
      }
      return prediction;
    } catch (const TraceLimitError&) { // rank_pool rejects the candidate, its config naming the entry
      throw;
    } catch (const InputError& error) { // what the extractor cannot follow, named with its kernel
      if (prefix.empty()) throw;
      throw InputError(prefix + error.what());
    }
  };
  pool.admitted.push_back(std::move(admitted));
}

} // namespace

CompileRequest candidate_compile_request(const KernelSpec& spec, const EvaluatedSpec& evaluated, const EntryName& entry,
                                         int compute_capability) {
  return request_for(spec, evaluated, entry, compute_capability);
}

namespace {

/// Item by item, what makes a --param unable to reach the code, found in the source text before
/// anything compiles: a template parameter given as a macro, or a #define that overrides -D.
void check_parameters_reach_code(const KernelSpec& spec, const EntryName& entry, std::string_view source) {
  if (!entry.template_arguments.empty()) return; // the parameters are template arguments, not macros
  const std::string file = spec.source.filename().string();
  if (const std::optional<TemplateDeclaration> declaration = kernel_template(source, entry.function)) {
    for (const std::string& name : declaration->parameters) {
      if (std::ranges::none_of(spec.parameters, [&](const ParameterValues& p) { return p.name == name; })) continue;
      throw InputError(file + ":" + std::to_string(declaration->line) + ": '" + entry.function +
                       "' is a template over " + name + ", which a --param cannot reach as a macro: write --entry \"" +
                       instance_text(entry.function, declaration->parameters) + "\"");
    }
  }
  for (const ParameterValues& parameter : spec.parameters) {
    if (const std::optional<int> line = unguarded_define_line(source, parameter.name)) {
      throw InputError(file + ":" + std::to_string(*line) + ": '#define " + parameter.name + "' overrides --param " +
                       parameter.name + ": guard it with #ifndef " + parameter.name + " ... #endif");
    }
  }
}

/// With several entries, a --param that reaches one entry as a macro (-D, the whole file) must
/// name no template parameter of another entry: the macro would rewrite that template's head.
void check_macros_spare_templates(const KernelSpec& spec, const std::vector<std::string>& entries) {
  if (spec.parameters.empty()) return;
  const std::string source = read_file_bytes(spec.source);
  for (const std::string& as_macros : entries) {
    const EntryName macro_entry = parse_entry_name(as_macros);
    if (!macro_entry.template_arguments.empty()) continue;
    for (const std::string& other : entries) {
      const std::string function = parse_entry_name(other).function;
      if (function == macro_entry.function) continue;
      const std::optional<TemplateDeclaration> declaration = kernel_template(source, function);
      if (!declaration) continue;
      for (const ParameterValues& parameter : spec.parameters) {
        if (std::ranges::find(declaration->parameters, parameter.name) == declaration->parameters.end()) continue;
        throw InputError(spec.source.filename().string() + ":" + std::to_string(declaration->line) + ": --param " +
                         parameter.name + " reaches " + macro_entry.function +
                         " as a macro, which rewrites the template parameter " + parameter.name + " of '" + function +
                         "': give the --param a name no entry's template declares");
      }
    }
  }
}

/// One entry's candidates, a chunk at a time: planned (the launch shape checked), compiled (in
/// parallel, cached) and admitted. Across chunks it keeps only what the entry's checks need: the
/// builds seen, whether any compiled, the parameter-use check, the rejections' tallies; a
/// candidate's error other than a rejection is rethrown by finish(), after those checks (the
/// order in which they were raised when every candidate was planned and compiled first).
class EntryStream {
public:
  EntryStream(const KernelSpec& spec, std::optional<std::size_t> entry_index, const DeviceProfile& profile,
              Compiler& compiler, const KernelSuggestOptions& options, OutOfBoundsTally* tally)
      : spec_(spec),
        entry_index_(entry_index),
        tally_(tally),
        profile_(profile),
        compiler_(compiler),
        options_(options),
        expressions_(spec_),
        entry_(parse_entry_name(spec_.entry)),
        space_(expressions_.search_space()),
        parameter_use_(spec_, expressions_) {
    // Without parameters the kernel is ranked alone: one candidate, the empty config.
    if (spec_.parameters.empty()) {
      candidates_ = 1;
    } else {
      indices_ = space_.enumerate_indices();
      candidates_ = indices_.size() / spec_.parameters.size();
    }
    if (candidates_ == 0) throw InputError(describe_kernel(spec_) + ": the constraints leave no candidate");
    const std::string source = read_file_bytes(spec_.source);
    check_parameters_reach_code(spec_, entry_, source);
    source_parameters_ = kernel_parameters(source, entry_.function);
    compute_capability_ = profile.device.compute_capability_major * 10 + profile.device.compute_capability_minor;
  }

  std::size_t candidates() const { return candidates_; }
  std::uint64_t space_size() const { return space_.unconstrained_size(); }
  std::int64_t builds() const { return builds_; }
  std::int64_t compilations() const { return compilations_; }

  /// Candidates [first, first + count): the admitted ones, the rejected ones tallied.
  std::vector<advisor::PredictableCandidate> prepare(std::size_t first, std::size_t count) {
    std::vector<Planned> planned;
    std::vector<Build> builds;
    std::map<std::string, std::size_t> build_by_key;
    for (std::size_t i = first; i < first + count; ++i) {
      if (std::optional<Planned> plan = plan_candidate(config_at(i), builds, build_by_key, shape_rejections_))
        planned.push_back(std::move(*plan));
    }
    std::function<void(std::size_t, std::size_t)> on_compiled;
    if (options_.on_compiled) {
      // Of the entry's builds: those done, of at most those so far and one per candidate to come.
      const auto before = static_cast<std::size_t>(builds_);
      const std::size_t to_come = candidates_ - first - count;
      on_compiled = [&, before, to_come](std::size_t done, std::size_t total) {
        options_.on_compiled(before + done, before + total + to_come);
      };
    }
    // A build the chunk before also had (a template entry's space shares builds) is taken
    // from it, not read from the cache and parsed again.
    for (Build& build : builds) {
      const auto found = previous_builds_.find(request_key(build.request));
      if (found != previous_builds_.end()) build = found->second;
    }
    compile_builds(builds, entry_, planned, compiler_, options_.compile_threads, on_compiled);
    previous_builds_.clear();
    for (const Build& build : builds) {
      if (build.module) previous_builds_.emplace(request_key(build.request), build);
    }
    for (const Build& build : builds) {
      if (!seen_builds_.insert(request_key(build.request)).second) continue; // compiled in an earlier chunk
      if (!first_build_error_) first_build_error_ = build.error;
      any_compiled_ = any_compiled_ || build.compiled.has_value();
      ++builds_;
      if (!build.compiled || !build.compiled->from_cache) ++compilations_;
    }
    for (const Planned& plan : planned) parameter_use_.add(plan, builds[plan.build]);
    if (failure_) return {};
    advisor::CandidatePool pool;
    try {
      for (const Planned& plan : planned)
        admit(spec_, plan, builds[plan.build], source_parameters_, profile_, entry_index_.has_value(), tally_, pool);
    } catch (...) {
      failure_ = std::current_exception();
      return {};
    }
    for (const advisor::Rejection& rejection : pool.rejected)
      admit_rejections_.add(rejection.stage, rejection.config, rejection.message);
    return std::move(pool.admitted);
  }

  /// After the last chunk: throws when no build compiled, when a parameter is unused, or the
  /// first candidate's error; else adds the entry's rejections to `admission`.
  void finish(advisor::RejectionTally& admission) const {
    if (builds_ > 0 && !any_compiled_) throw InputError(*first_build_error_);
    parameter_use_.check();
    if (failure_) std::rethrow_exception(failure_);
    admission.merge(shape_rejections_);
    admission.merge(admit_rejections_);
  }

  /// A candidate admitted before, made again from its config (the ranking's rebuild).
  advisor::PredictableCandidate rebuild(const Config& config) const {
    Config enumerated; // as enumerated: numbers only, without the entry key
    for (const auto& [key, value] : config.values()) {
      if (!entry_index_ || key != "entry") enumerated.set(key, value);
    }
    std::vector<Build> builds;
    std::map<std::string, std::size_t> build_by_key;
    advisor::RejectionTally rejections;
    const std::optional<Planned> plan = plan_candidate(enumerated, builds, build_by_key, rejections);
    if (!plan) throw std::logic_error("rebuild: " + config.to_string() + " no longer fits");
    compile_builds(builds, entry_, {*plan}, compiler_, 1);
    advisor::CandidatePool pool;
    admit(spec_, *plan, builds.front(), source_parameters_, profile_, entry_index_.has_value(), tally_, pool);
    if (pool.admitted.size() != 1) throw std::logic_error("rebuild: " + config.to_string() + " is no longer admitted");
    return std::move(pool.admitted.front());
  }

private:
  Config config_at(std::size_t i) const {
    if (spec_.parameters.empty()) return {};
    const std::size_t count = spec_.parameters.size();
    return space_.config_at(std::span(indices_).subspan(i * count, count));
  }

  /// One candidate's launch and build (found among `builds` or added); nullopt, tallied, when
  /// the device cannot run its block.
  std::optional<Planned> plan_candidate(const Config& config, std::vector<Build>& builds,
                                        std::map<std::string, std::size_t>& build_by_key,
                                        advisor::RejectionTally& shape_rejections) const {
    EvaluatedSpec evaluated = expressions_.evaluate(config);
    CompileRequest request = request_for(spec_, evaluated, entry_, compute_capability_);
    if (entry_index_)
      evaluated.config.set_word("entry", static_cast<std::int64_t>(*entry_index_),
                                spec_.entry); // a key of the table, not a macro
    try {
      check_launch_shape(spec_, evaluated, profile_);
    } catch (const InputError& error) {
      shape_rejections.add(advisor::RejectionStage::device_limits, evaluated.config, error.what());
      return std::nullopt;
    }
    const auto [found, added] = build_by_key.try_emplace(request_key(request), builds.size());
    if (added) builds.push_back({std::move(request), std::nullopt, {}, {}, nullptr});
    return Planned{std::move(evaluated), found->second};
  }

  KernelSpec spec_;
  std::optional<std::size_t> entry_index_;
  OutOfBoundsTally* tally_; ///< null unless the spec simulates loads outside every buffer
  const DeviceProfile& profile_;
  Compiler& compiler_;
  const KernelSuggestOptions& options_;
  SpecExpressions expressions_;
  EntryName entry_;
  SearchSpace space_;
  ParameterUse parameter_use_;
  std::vector<std::uint32_t> indices_; ///< the space's configs, as value indices
  std::size_t candidates_ = 0;
  std::optional<std::vector<SourceParameter>> source_parameters_;
  int compute_capability_ = 0;
  std::set<std::string> seen_builds_;
  std::map<std::string, Build> previous_builds_; ///< the chunk before's compiled builds, by request key
  std::optional<std::string> first_build_error_; ///< the entry's first build's, empty when it compiled
  bool any_compiled_ = false;
  std::int64_t builds_ = 0;
  std::int64_t compilations_ = 0;
  advisor::RejectionTally shape_rejections_; ///< the launch shapes the device cannot run
  advisor::RejectionTally admit_rejections_; ///< the compiled candidates that failed a check
  std::exception_ptr failure_;
};

} // namespace

KernelSuggestion suggest_kernel(const KernelSpec& spec, const DeviceProfile& profile, Compiler& compiler,
                                const KernelSuggestOptions& options) {
  return suggest_kernel_entries(spec, {spec.entry}, profile, compiler, options);
}

namespace {

KernelSuggestion rank_entries(const KernelSpec& spec, const std::vector<std::string>& entries,
                              const DeviceProfile& profile, Compiler& compiler, const KernelSuggestOptions& options) {
  if (entries.empty()) throw InputError("kernel spec: no entry (--entry NAME or \"entry\")");
  const bool several = entries.size() > 1;
  if (several && std::ranges::any_of(spec.parameters, [](const ParameterValues& p) { return p.name == "entry"; })) {
    throw InputError(
        "--param entry: with several --entry, 'entry' names the table's entry column; rename the parameter");
  }
  if (several) check_macros_spare_templates(spec, entries);
  ProblemSpec problem;
  for (const std::string& entry : entries) problem.family += (problem.family.empty() ? "" : ", ") + entry;
  const std::string subject = problem.family + " in " + spec.source.string();
  KernelSuggestion result;
  // Each chunk is screened while the next one is planned, compiled and traced.
  std::vector<std::unique_ptr<EntryStream>> streams;
  std::optional<advisor::CandidateRanking> ranking;
  advisor::RejectionTally admission;
  std::uint64_t space_size = 0;
  std::int64_t enumerated = 0;
  std::vector<advisor::PredictableCandidate> pending;
  OutOfBoundsTally out_of_bounds;
  OutOfBoundsTally* tally = spec.out_of_bounds_reads == OutOfBoundsReads::simulate ? &out_of_bounds : nullptr;
  const std::size_t chunk = std::max<std::size_t>(1, options.chunk_candidates);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    KernelSpec entry_spec = spec;
    entry_spec.entry = entries[i];
    try {
      streams.push_back(std::make_unique<EntryStream>(
          entry_spec, several ? std::optional<std::size_t>(i) : std::nullopt, profile, compiler, options, tally));
      EntryStream& stream = *streams.back();
      // Every entry spans the same space (the spec's parameters and constraints).
      if (!ranking) ranking.emplace(profile, options.suggest, entries.size() * stream.candidates());
      space_size += stream.space_size();
      for (std::size_t first = 0; first < stream.candidates(); first += chunk) {
        std::vector<advisor::PredictableCandidate> next;
        const std::size_t held = ranking->held() + pending.size();
        advisor::in_parallel(2, 2, [&](std::size_t task) {
          if (task == 0) {
            ranking->screen(std::move(pending));
          } else {
            next = stream.prepare(first, std::min(chunk, stream.candidates() - first));
          }
        });
        result.peak_held_candidates =
            std::max(result.peak_held_candidates, static_cast<std::int64_t>(held + next.size()));
        pending = std::move(next);
      }
      stream.finish(admission);
      result.builds += stream.builds();
      result.compilations += stream.compilations();
      enumerated += static_cast<std::int64_t>(stream.candidates());
    } catch (const InputError& error) {
      if (!several) throw;
      throw InputError(entries[i] + ": " + error.what());
    }
  }
  ranking->screen(std::move(pending));
  result.peak_held_candidates = std::max(result.peak_held_candidates, static_cast<std::int64_t>(ranking->peak_held()));
  result.suggestion = ranking->finish(problem, subject, space_size, admission, enumerated, [&](const Config& config) {
    return streams.at(several ? static_cast<std::size_t>(config.get("entry")) : 0)->rebuild(config);
  });
  for (const auto& [config, outside] : out_of_bounds.by_config) {
    if (outside.warp_loads == 0) continue;
    if (result.out_of_bounds_loads.first.empty())
      result.out_of_bounds_loads.first = (config.empty() ? "" : config + ": ") + outside.first;
    result.out_of_bounds_loads.warp_loads += outside.warp_loads;
    ++result.out_of_bounds_candidates;
  }
  return result;
}

/// Turns the compiler's speculation on for a ranking, and off again however it ends.
class Speculating {
public:
  explicit Speculating(Compiler& compiler) : compiler_(compiler) { compiler_.set_speculative(true); }
  Speculating(const Speculating&) = delete;
  Speculating& operator=(const Speculating&) = delete;
  ~Speculating() { compiler_.set_speculative(false); }

private:
  Compiler& compiler_;
};

} // namespace

KernelSuggestion suggest_kernel_entries(const KernelSpec& spec, const std::vector<std::string>& entries,
                                        const DeviceProfile& profile, Compiler& compiler,
                                        const KernelSuggestOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // A host-code file's candidates are ranked from their device side while nvcc checks it
  // (Compiler::set_speculative); a file whose check fails is ranked again, through nvcc.
  std::optional<KernelSuggestion> result;
  try {
    const Speculating speculating(compiler);
    result = rank_entries(spec, entries, profile, compiler, options);
  } catch (...) {
    if (compiler.confirm_speculation()) throw;
  }
  if (result && !compiler.confirm_speculation()) result.reset();
  if (!result) result = rank_entries(spec, entries, profile, compiler, options);
  result->suggestion.elapsed = std::chrono::steady_clock::now() - start;
  return std::move(*result);
}

KernelSimulation simulate_kernel(const KernelSpec& spec, const DeviceProfile& profile, Compiler& compiler,
                                 const SimulationOptions& options) {
  const SpecExpressions expressions(spec);
  Config config;
  for (const ParameterValues& parameter : spec.parameters) {
    if (parameter.values.size() != 1) {
      std::string values;
      const auto value_text = [&](std::size_t i) {
        return parameter.is_type() ? parameter.types.at(i) : std::to_string(parameter.values.at(i));
      };
      for (std::size_t i = 0; i < parameter.values.size(); ++i) values += (values.empty() ? "" : ",") + value_text(i);
      throw InputError("simulate: parameter '" + parameter.name + "' has " + std::to_string(parameter.values.size()) +
                       " values (" + values + "); simulate takes one per parameter: give --param " + parameter.name +
                       "=" + value_text(0) + " (advisor suggest ranks them all)");
    }
    config.set(parameter.name, parameter.values.front());
  }
  if (!spec.parameters.empty() && expressions.search_space().enumerate().empty()) {
    throw InputError("simulate: " + config.to_string() + " breaks the spec's constraints");
  }
  const EntryName entry = parse_entry_name(spec.entry);
  const int compute_capability = profile.device.compute_capability_major * 10 + profile.device.compute_capability_minor;
  std::vector<Planned> planned = {{expressions.evaluate(config), 0}};
  check_launch_shape(spec, planned.front().evaluated, profile);
  std::vector<Build> builds = {
      {request_for(spec, planned.front().evaluated, entry, compute_capability), std::nullopt, {}, {}, nullptr}};
  compile_builds(builds, entry, planned, compiler, 1);
  if (!builds.front().compiled) throw InputError(builds.front().error);
  const TracedCandidate traced =
      traced_candidate(spec, planned.front().evaluated, *builds.front().compiled, builds.front().entry,
                       builds.front().module, kernel_parameters(read_file_bytes(spec.source), entry.function));

  // The active lanes of every memory instruction the simulator traces (its sampled blocks).
  struct LaneTally {
    std::atomic<std::int64_t> active_lanes{0};
    std::atomic<std::int64_t> lane_slots{0};
  };
  auto lanes = std::make_shared<LaneTally>();
  const auto count_lanes = [lanes](const BlockTrace& trace) {
    for (const WarpTrace& warp : trace.warps) {
      for (const TraceStep& step : warp.steps) {
        if (step.kind != TraceStep::Kind::access) continue;
        lanes->active_lanes += std::popcount(step.active_mask);
        lanes->lane_slots += 32;
      }
    }
  };
  TracedKernel kernel = *traced.kernel;
  kernel.trace_block = [inner = traced.kernel->trace_block, count_lanes](const std::array<std::int64_t, 3>& index) {
    BlockTrace trace = inner(index);
    count_lanes(trace);
    return trace;
  };
  kernel.translate_block = [inner = traced.kernel->translate_block,
                            count_lanes](const std::array<std::int64_t, 3>& index) {
    std::optional<TranslatedBlock> translated = inner(index);
    if (translated) count_lanes(*translated->reference); // a translated block's lanes are its reference's
    return translated;
  };
  KernelSimulation result;
  result.evaluated = planned.front().evaluated;
  result.compiled = traced.resources;
  result.shared_bytes_per_block = kernel.shared_bytes_per_block;
  result.prediction = simulate_traced(kernel, profile, options, &result.facts);
  const ExtractedFacts extracted = traced.extractor->facts();
  result.max_loads_in_flight = extracted.max_loads_in_flight;
  result.interpreted_blocks = extracted.interpreted_blocks;
  result.translated_blocks = extracted.translated_blocks;
  result.prediction.summarised_loops = extracted.summarised_loops;
  result.out_of_bounds_loads = extracted.out_of_bounds_loads;
  result.skipped_on_loaded_data = extracted.skipped_on_loaded_data;
  result.active_lane_fraction =
      lanes->lane_slots > 0 ? static_cast<double>(lanes->active_lanes) / static_cast<double>(lanes->lane_slots) : 0.0;
  return result;
}

} // namespace cachewise::frontend
