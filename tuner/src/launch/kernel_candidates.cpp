// Size buckets and compiling every candidate of a kernel spec before any measurement.
#include <algorithm>
#include <set>

#include "cachewise/frontend/kernel_advisor.hpp"
#include "cachewise/frontend/ptx.hpp"
#include "cachewise/tuner/kernel_tuning.hpp"

namespace cachewise::tuner {
namespace {

/// The .param list of `entry` in the PTX, as the launch marshals it.
std::vector<KernelParameter> entry_parameters(const frontend::PtxModule& module, const std::string& entry) {
  for (const frontend::PtxFunction& function : module.functions) {
    if (!function.is_entry || function.name != entry) continue;
    std::vector<KernelParameter> parameters;
    for (const frontend::PtxParam& param : function.params)
      parameters.push_back({param.name, param.bytes, param.align, param.type});
    return parameters;
  }
  throw InputError("entry '" + entry + "' not in the compiled PTX");
}

/// Compiles `evaluated` and fills the rest of a CompiledCandidate; a compile error is kept, not thrown.
CompiledCandidate compile_candidate(const frontend::KernelSpec& spec, frontend::EvaluatedSpec evaluated,
                                    const frontend::EntryName& entry, frontend::Compiler& compiler,
                                    int compute_capability) {
  CompiledCandidate candidate{std::move(evaluated), {}, {}, {}, {}};
  try {
    const frontend::CompiledKernel compiled =
        compiler.compile(frontend::candidate_compile_request(spec, candidate.evaluated, entry, compute_capability));
    const auto is_entry = [&](std::string_view name) {
      return frontend::is_entry_of(std::string(name), entry.function, candidate.evaluated.template_arguments,
                                   entry.signature);
    };
    const frontend::PtxModule module =
        frontend::parse_ptx(compiled.ptx, is_entry); // other kernels' bodies cannot fail it
    candidate.entry = frontend::find_entry(frontend::entry_names(module), entry.function,
                                           candidate.evaluated.template_arguments, entry.signature);
    candidate.parameters = entry_parameters(module, candidate.entry);
    candidate.ptx = compiled.ptx;
  } catch (const InputError& error) {
    candidate.failure = std::string("does not compile: ") + error.what();
  }
  return candidate;
}

/// A config's key with every value as its number: a type parameter shown as its type ("T=float")
/// and the index the enumeration gives it ("T=0") are the same candidate.
std::string numeric_key(const Config& config) {
  Config numbers;
  for (const auto& [key, value] : config.values()) numbers.set(key, value);
  return numbers.to_string();
}

} // namespace

std::string SizeBucket::label() const {
  std::string text;
  for (const frontend::NamedValue& arg : args)
    text += (text.empty() ? "" : ",") + arg.name + "=" + std::to_string(arg.value);
  return text;
}

SizeBucket parse_size_bucket(std::string_view text) {
  SizeBucket bucket;
  std::set<std::string> names;
  while (!text.empty()) {
    const auto comma = text.find(',');
    frontend::NamedValue arg = frontend::parse_arg_flag(text.substr(0, comma));
    if (!names.insert(arg.name).second) throw InputError("--size: '" + arg.name + "' is given twice");
    bucket.args.push_back(std::move(arg));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (bucket.args.empty()) throw InputError("--size: expected NAME=N[,NAME=N...]");
  return bucket;
}

frontend::KernelSpec with_size_bucket(frontend::KernelSpec spec, const SizeBucket& bucket) {
  std::optional<std::string> source; // read only when a size is no arg
  for (const frontend::NamedValue& arg : bucket.args) {
    if (const auto found = std::ranges::find(spec.args, arg.name, &frontend::NamedValue::name);
        found != spec.args.end()) {
      found->value = arg.value;
      continue;
    }
    // A size the kernel takes as a macro (Kernel Tuner's style: sizes #define'd, guarded by #ifndef).
    if (const auto found = std::ranges::find(spec.defines, arg.name, &frontend::Define::name);
        found != spec.defines.end()) {
      found->value = std::to_string(arg.value);
      continue;
    }
    if (!source) source = frontend::read_file_bytes(spec.source);
    if (frontend::names_identifier(*source, arg.name)) {
      spec.defines.push_back({arg.name, std::to_string(arg.value)});
      continue;
    }
    std::string known;
    for (const frontend::NamedValue& a : spec.args) known += (known.empty() ? "" : ", ") + a.name;
    for (const frontend::Define& d : spec.defines) known += (known.empty() ? "" : ", ") + d.name;
    throw InputError("size bucket " + bucket.label() + ": '" + arg.name + "' is no arg or define of the kernel spec (" +
                     (known.empty() ? "none" : known) + ") and no name in " + spec.source.filename().string());
  }
  return spec;
}

ProblemSpec kernel_problem(const frontend::KernelSpec& spec, const SizeBucket& bucket) {
  ProblemSpec problem;
  problem.family = frontend::parse_entry_name(spec.entry).function + (bucket.args.empty() ? "" : " " + bucket.label());
  return problem;
}

KernelCandidates::KernelCandidates(frontend::KernelSpec spec, frontend::Compiler& compiler, int compute_capability,
                                   std::size_t threads)
    : spec_(std::move(spec)) {
  frontend::validate_kernel_spec(spec_);
  const frontend::SpecExpressions model(spec_);
  space_ = model.search_space();
  const frontend::EntryName entry = frontend::parse_entry_name(spec_.entry);
  source_parameters_ = frontend::kernel_parameters(frontend::read_file_bytes(spec_.source), entry.function);
  const std::vector<Config> configs = space_.enumerate();
  if (configs.empty()) throw InputError(spec_.entry + ": the constraints leave no candidate");

  std::vector<CompiledCandidate> compiled(configs.size());
  advisor::in_parallel(configs.size(), threads, [&](std::size_t i) {
    compiled[i] = compile_candidate(spec_, model.evaluate(configs[i]), entry, compiler, compute_capability);
  });
  if (std::ranges::all_of(compiled, [](const CompiledCandidate& c) { return c.ptx.empty(); })) {
    throw InputError("every candidate failed to compile; first: " + configs.front().to_string() + ": " +
                     compiled.front().failure);
  }
  for (std::size_t i = 0; i < configs.size(); ++i) by_config_.emplace(numeric_key(configs[i]), std::move(compiled[i]));

  if (!spec_.reference.empty()) {
    Config reference;
    for (const frontend::NamedValue& value : spec_.reference) reference.set(value.name, value.value);
    for (const auto& [name, values] : space_.parameters()) {
      if (!reference.values().contains(name))
        throw InputError("kernel spec: the reference gives no value for parameter '" + name + "'");
    }
    if (reference.values().size() != space_.parameters().size()) {
      throw InputError("kernel spec: the reference " + reference.to_string() +
                       " names something that is not a parameter");
    }
    reference_ = compile_candidate(spec_, model.evaluate(reference), entry, compiler, compute_capability);
    if (reference_->ptx.empty())
      throw InputError("kernel spec: the reference " + reference.to_string() + " " + reference_->failure);
  }
}

const CompiledCandidate& KernelCandidates::at(const Config& config) const {
  const auto found = by_config_.find(numeric_key(config));
  if (found == by_config_.end()) throw InputError(config.to_string() + " is not a candidate of " + spec_.entry);
  return found->second;
}

std::int64_t KernelCandidates::compile_failures() const {
  return std::ranges::count_if(by_config_, [](const auto& item) { return item.second.ptx.empty(); });
}

} // namespace cachewise::tuner
