// The --kernel / --spec half of `advisor suggest` (docs/kernel-spec.md).
#include "cachewise/frontend/kernel_advisor.hpp"
#include "suggest_kernel.hpp"

namespace cachewise::cli {

void add_kernel_options(CLI::App& command, KernelOptions& options) {
  const char* group = "User kernel (docs/kernel-spec.md)";
  command.add_option("--kernel", options.source, "CUDA source of the kernel to rank (.cu, host code allowed)")
      ->group(group);
  command.add_option("--spec", options.spec_file, "Kernel spec JSON; the flags below override it")->group(group);
  command
      .add_option("--entry", options.entries,
                  "Kernel function, or NAME<ARG, ...> for a template (integer expressions, true/false, types); "
                  "repeat it to rank several entries in one table")
      ->group(group);
  command
      .add_option("--param", options.parameters,
                  "NAME=V1,V2,...: a parameter and its values (a macro unless a template argument)")
      ->group(group);
  command.add_option("--constraint", options.constraints, "Integer expression every candidate must satisfy")
      ->group(group);
  command.add_option("--grid", options.grid, "\"X[, Y[, Z]]\" expressions of the grid")->group(group);
  command.add_option("--block", options.block, "\"X[, Y[, Z]]\" expressions of the block")->group(group);
  command.add_option("--shared", options.dynamic_shared_bytes, "Dynamic shared memory per block, bytes (expression)")
      ->group(group);
  command.add_option("--useful-bytes", options.useful_bytes, "Bytes the kernel must move (default: every buffer once)")
      ->group(group);
  command.add_option("--buffer", options.buffers, "NAME=BYTES: the pointer parameter NAME's buffer size (expression)")
      ->group(group);
  command
      .add_option("--contents", options.contents,
                  "NAME[:TYPE]=EXPR: what an index buffer holds, element i (expression of i; TYPE i32, u32, i64, u64)")
      ->group(group);
  command
      .add_option("--arg", options.args,
                  "NAME=N (an integer, usable in expressions), NAME=2.5 (floating-point), S.FIELD=V or 'S={F=V, ...}' "
                  "(a struct's fields)")
      ->group(group);
  command.add_option("--define", options.defines, "NAME[=VALUE]: an extra macro for the compiler")->group(group);
  command.add_option("--std", options.language_standard, "C++ standard for the compiler, e.g. c++17")->group(group);
  command
      .add_option("-I,--include-dir", options.include_directories,
                  "DIR: an include directory for the compiler (repeatable)")
      ->group(group);
  command
      .add_option(
          "--compiler-option", options.compiler_options,
          "OPT: an option for NVRTC and nvcc alike: -maxrregcount=N, --use_fast_math, -ftz=, -prec-div=, -prec-sqrt=, "
          "-fmad=, -restrict, -extra-device-vectorization (repeatable)")
      ->group(group);
  command
      .add_flag(
          "--replay-loops", options.replay_loops,
          "Interpret every trip of every loop instead of jumping affine loops ahead (slower; docs/ptx-extraction.md)")
      ->group(group);
  command
      .add_option("--out-of-bounds-reads", options.out_of_bounds_reads,
                  "error|simulate: a global load outside every buffer is an error (default) or simulated at its "
                  "address (stores outside stay errors; docs/kernel-spec.md)")
      ->group(group);
  command
      .add_option("--branches-on-loaded-data", options.branches_on_loaded_data,
                  "error|not-taken: a branch or predicated instruction on loaded data is an error (default) or not "
                  "taken by those lanes (docs/kernel-spec.md)")
      ->group(group);
}

void add_max_candidates_option(CLI::App& command, KernelOptions& options) {
  command
      .add_option(
          "--max-candidates", options.max_candidates,
          "N: the most candidates the parameters may span (product of their value counts) before the space is refused")
      ->capture_default_str()
      ->group("User kernel (docs/kernel-spec.md)");
}

namespace {

frontend::KernelSpec spec_from_options(const KernelOptions& options) {
  using namespace frontend;
  KernelSpec flags;
  flags.source = options.source;
  if (!options.entries.empty()) flags.entry = options.entries.front();
  for (const std::string& directory : options.include_directories) flags.include_directories.emplace_back(directory);
  flags.compiler_options = options.compiler_options;
  flags.constraints = options.constraints;
  flags.grid = options.grid;
  flags.block = options.block;
  flags.dynamic_shared_bytes = options.dynamic_shared_bytes;
  flags.useful_bytes = options.useful_bytes;
  flags.language_standard = options.language_standard;
  for (const std::string& text : options.parameters) flags.parameters.push_back(parse_parameter_flag(text));
  for (const std::string& text : options.buffers) flags.buffers.push_back(parse_buffer_flag(text));
  for (const std::string& text : options.contents) flags.contents.push_back(parse_contents_flag(text));
  for (const std::string& text : options.args) {
    ArgFlag arg = parse_kernel_arg_flag(text);
    flags.args.insert(flags.args.end(), arg.integers.begin(), arg.integers.end());
    flags.value_args.insert(flags.value_args.end(), arg.values.begin(), arg.values.end());
  }
  for (const std::string& text : options.defines) flags.defines.push_back(parse_define_flag(text));
  if (options.max_candidates == 0 || options.max_candidates > kLargestMaxCandidates) {
    throw InputError("--max-candidates: expected 1 to " + std::to_string(kLargestMaxCandidates) +
                     " (the space is enumerated and every screened candidate tallied before the ranking ends), got " +
                     std::to_string(options.max_candidates));
  }
  KernelSpec spec = options.spec_file.empty() ? flags : merge_kernel_specs(load_kernel_spec(options.spec_file), flags);
  spec.max_candidates = options.max_candidates;
  spec.replay_loops = options.replay_loops;
  if (!options.out_of_bounds_reads.empty())
    spec.out_of_bounds_reads = parse_out_of_bounds_reads(options.out_of_bounds_reads, "--out-of-bounds-reads");
  if (!options.branches_on_loaded_data.empty()) {
    spec.branches_on_loaded_data =
        parse_branches_on_loaded_data(options.branches_on_loaded_data, "--branches-on-loaded-data");
  }
  return spec;
}

} // namespace

void require_one_entry(const KernelOptions& options) {
  if (options.entries.size() > 1) throw InputError("--entry: give one entry here (suggest ranks several in one table)");
}

frontend::KernelSpec kernel_spec_from_options(const KernelOptions& options) {
  require_one_entry(options);
  return spec_from_options(options);
}

KernelRanking rank_kernel(const KernelOptions& options, const DeviceProfile& profile, advisor::SuggestOptions suggest,
                          Progress& progress) {
  using namespace frontend;
  const KernelSpec spec = spec_from_options(options);
  const std::vector<std::string> entries =
      options.entries.size() > 1 ? options.entries : std::vector<std::string>{spec.entry};
  Compiler compiler;
  KernelSuggestOptions kernel_options;
  suggest.on_simulated = [&progress](std::size_t done, std::size_t total) { progress.simulated(done, total); };
  kernel_options.suggest = std::move(suggest);
  kernel_options.on_compiled = [&progress](std::size_t done, std::size_t total) { progress.compiled(done, total); };
  KernelSuggestion result = suggest_kernel_entries(spec, entries, profile, compiler, kernel_options);
  std::string listed;
  for (const std::string& entry : entries) listed += (listed.empty() ? "" : ", ") + entry;
  return {std::move(result.suggestion),
          listed + " in " + spec.source.string(),
          spec.parameters,
          result.builds,
          result.compilations,
          spec.out_of_bounds_reads == OutOfBoundsReads::simulate,
          std::move(result.out_of_bounds_loads),
          result.out_of_bounds_candidates};
}

} // namespace cachewise::cli
