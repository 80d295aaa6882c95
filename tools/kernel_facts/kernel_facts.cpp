// Generates model/data/kernel_facts_sm90.json, the compiled built-in kernels' facts the model
// embeds (docs/model.md#compiled-kernel-facts): for every kernel of kernels/src/*.cu as nvcc
// compiled it to PTX (builtin_<family>.ptx), ptxas -v's registers, spills, stack and static
// shared memory, and from the kernel front end's trace of an interior block of a launch that
// fills its batches (facts_cases.hpp) the most loads per round and stores per run of a warp.
// Usage: builtin_kernel_facts PTX_DIR PTXAS NVCC SOURCE_DIR (--write FILE | --check FILE | --table)
//   --write: writes the file; --check: exit 1 when FILE differs from what the compiled code
//   says (the kernel_facts_current test); --table: prints the markdown table of
//   measurements/frontend-crosscheck.md (the pattern's values against the compiled ones, per launch).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cachewise/frontend/compile.hpp"
#include "child_process.hpp" // frontend/src: the project's argv-only process runner
#include "facts_cases.hpp"

namespace cachewise::frontend::builtin {
namespace {

const std::vector<std::string>& builtin_families() {
  static const std::vector<std::string> names = {"copy", "transpose", "stencil2d", "stencil3d", "gemm"};
  return names;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot open " + path.string());
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// stdout and stderr of a compiler run (argv, no shell); throws when it fails.
std::string command_output(const std::vector<std::string>& arguments) {
  constexpr int kTimeoutSeconds = 600;
  const frontend::ProcessResult result = frontend::run_process(arguments, kTimeoutSeconds);
  if (result.exit_code != 0 || result.signal != 0 || result.timed_out)
    throw std::runtime_error(arguments.front() + " failed: " + first_error_line(result.output));
  return result.output;
}

/// FNV-1a (64-bit) over the kernels' sources, names and bytes, in name order: what the PTX
/// depends on (the same files as the builtin PTX rule of tests/frontend/ptx_tests.cmake).
std::string sources_hash(const std::filesystem::path& source_dir) {
  std::vector<std::filesystem::path> files = {source_dir / "model/include/cachewise/model/families/family_kernels.hpp"};
  for (const auto& entry : std::filesystem::directory_iterator(source_dir / "kernels/src")) {
    const std::string extension = entry.path().extension().string();
    if (extension == ".cu" || extension == ".cuh" || extension == ".hpp") files.push_back(entry.path());
  }
  std::sort(files.begin() + 1, files.end());
  std::uint64_t hash = 14695981039346656037ull;
  const auto add = [&hash](const std::string& bytes) {
    for (const char byte : bytes) hash = (hash ^ static_cast<unsigned char>(byte)) * 1099511628211ull;
  };
  for (const auto& file : files) {
    add(std::filesystem::relative(file, source_dir).generic_string());
    add(read_text(file));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

std::string compiler_version(const std::string& nvcc) {
  std::istringstream lines(command_output({nvcc, "--version"}));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("Cuda compilation tools", 0) == 0) return line;
  throw std::runtime_error(nvcc + " --version names no release");
}

struct Rounds {
  std::int64_t most_loads = 0, most_stores = 0;
  double mean_loads = 0, mean_stores = 0;
};

/// A block's warps' rounds as simulate_traced counts them: global (and local) loads until a
/// wait, a barrier or the end; stores until the next global load.
Rounds block_rounds(const BlockTrace& block) {
  Rounds rounds;
  std::int64_t loads = 0, load_rounds = 0, stores = 0, store_runs = 0;
  for (const WarpTrace& warp : block.warps) {
    std::int64_t round = 0, run = 0;
    const auto close_round = [&] {
      if (round > 0) ++load_rounds;
      rounds.most_loads = std::max(rounds.most_loads, round);
      round = 0;
    };
    const auto close_run = [&] {
      if (run > 0) ++store_runs;
      rounds.most_stores = std::max(rounds.most_stores, run);
      run = 0;
    };
    for (const TraceStep& step : warp.steps) {
      if (step.kind != TraceStep::Kind::access) {
        close_round();
        continue;
      }
      if (step.active_mask == 0 || step.space == TraceSpace::shared) continue;
      if (step.op == TraceOp::load) {
        close_run();
        ++round;
        ++loads;
      } else {
        ++run;
        ++stores;
      }
    }
    close_round();
    close_run();
  }
  rounds.mean_loads = load_rounds > 0 ? static_cast<double>(loads) / static_cast<double>(load_rounds) : 0;
  rounds.mean_stores = store_runs > 0 ? static_cast<double>(stores) / static_cast<double>(store_runs) : 0;
  return rounds;
}

constexpr const char* kSassRounds = "measurements/sass/stencil-loads-by-stretch.txt";

/// The largest SASS round per kernel instance in kSassRounds (scripts/cachewise_eval/loads_ahead_of_use.py's
/// "<mangled name>: N loads, ... rounds [a, b]; ..." per line), over all its stretches.
std::map<std::string, std::int64_t> sass_rounds(const std::filesystem::path& source_dir) {
  std::map<std::string, std::int64_t> rounds;
  std::istringstream lines(read_text(source_dir / kSassRounds));
  const std::regex line_pattern("^([a-z0-9_]+)(I.*E): (.*)$");
  const std::regex round_list("rounds \\[([0-9, ]+)\\]");
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (!std::regex_match(line, match, line_pattern)) continue;
    const std::string name = match[1].str();
    const std::string instance = entry_instance_name("_Z" + std::to_string(name.size()) + name + match[2].str() + "vv");
    std::int64_t& largest = rounds[instance];
    const std::string stretches = match[3].str();
    for (std::sregex_iterator it(stretches.begin(), stretches.end(), round_list), end; it != end; ++it) {
      std::istringstream values((*it)[1].str());
      for (std::string value; std::getline(values, value, ',');)
        largest = std::max<std::int64_t>(largest, std::stoll(value));
    }
  }
  return rounds;
}

struct InnerProduct {
  std::int64_t kk_per_group = 0;
  std::vector<FragmentLoad> group;
};

/// gemm's inner product as warp 0 of the block issues it: its shared loads between the first
/// and the second barrier (the tile stores end at the first), decoded at lane 0 (tx = ty = 0)
/// into the fragment element and kk each reads, and split into the unrolled loop's groups
/// (the launch's bk a multiple of the unroll, so no remainder runs).
InnerProduct gemm_inner_product(const BlockTrace& block, const CrossCase& c) {
  const int bytes = element_bytes(c.problem.dtype);
  const std::int64_t bk = c.config.get("bk"), pad = c.config.get("pad");
  const std::int64_t a_stride = bk + pad, b_stride = c.config.get("bn") + pad;
  const std::int64_t b_base = c.config.get("bm") * a_stride * bytes;
  std::vector<std::pair<FragmentLoad, std::int64_t>> loads; // load, kk
  std::vector<std::int32_t> instructions;
  int barriers = 0;
  for (const TraceStep& step : block.warps.at(0).steps) {
    if (step.kind == TraceStep::Kind::barrier && ++barriers == 2) break;
    if (barriers != 1 || step.kind != TraceStep::Kind::access || step.space != TraceSpace::shared ||
        step.op != TraceOp::load)
      continue;
    if ((step.active_mask & 1u) == 0) throw std::runtime_error(c.label + ": lane 0 skips an inner-product load");
    const auto offset = static_cast<std::int64_t>(step.address[0]);
    const bool from_b = offset >= b_base;
    const std::int64_t element = (from_b ? offset - b_base : offset) / bytes;
    const std::int64_t stride = from_b ? b_stride : a_stride;
    const std::int64_t kk = from_b ? element / stride : element % stride;
    const std::int64_t fragment = from_b ? element % stride : element / stride;
    loads.push_back({{from_b, static_cast<int>(fragment), 0, step.bytes_per_lane / bytes}, kk});
    instructions.push_back(step.instruction);
  }
  // The unrolled loop's body runs its static instructions once per group: the group ends
  // where lane 0 meets the first load's instruction again.
  const auto size = static_cast<std::int64_t>(loads.size());
  std::int64_t per_group = 1;
  while (per_group < size && instructions[per_group] != instructions[0]) ++per_group;
  if (size == 0 || size % per_group != 0 || bk % (size / per_group) != 0) {
    throw std::runtime_error(c.label + ": the inner product's " + std::to_string(size) +
                             " shared loads form no groups of kk");
  }
  InnerProduct inner{bk / (size / per_group), {}};
  for (std::int64_t i = 0; i < size; ++i) {
    const std::int64_t group_kk = i / per_group * inner.kk_per_group;
    FragmentLoad load = loads[i].first;
    load.kk_offset = static_cast<int>(loads[i].second - group_kk);
    if (i < per_group) {
      inner.group.push_back(load);
    } else if (!(load == inner.group[i % per_group]) || instructions[i] != instructions[i % per_group]) {
      throw std::runtime_error(c.label + ": inner-product group " + std::to_string(i / per_group) +
                               " differs from the first");
    }
  }
  return inner;
}

struct Measured {
  CrossCase launch;
  CompiledKernelFacts facts;
  Rounds rounds;
};

struct FamilyCode {
  std::shared_ptr<const PtxModule> module;
  std::string ptxas_log;
  std::set<std::string> instances; ///< every entry's entry_instance_name
};

std::map<std::string, FamilyCode> compiled_families(const std::string& ptx_dir, const std::string& ptxas) {
  std::map<std::string, FamilyCode> code;
  for (const std::string& family : builtin_families()) {
    FamilyCode& f = code[family];
    const std::string ptx = ptx_dir + "/builtin_" + family + ".ptx";
    f.module = load_builtin_ptx(ptx_dir, "builtin_" + family);
    f.ptxas_log = command_output({ptxas, "-v", "-arch=sm_90", ptx, "-o", "/dev/null"});
    for (const std::string& entry : entry_names(*f.module)) f.instances.insert(entry_instance_name(entry));
  }
  return code;
}

Measured measure(const CrossCase& c, const FamilyCode& code) {
  const KernelPattern pattern = build_pattern_before_kernel_facts(c.problem, c.config);
  const BuiltinKernel kernel = builtin_kernel(c.problem, c.config);
  const std::string entry = builtin_entry(c, *code.module);
  const CompilerResources resources = parse_ptxas_resources(code.ptxas_log, entry);
  TracedKernel traced = builtin_traced_kernel(c, pattern, code.module);
  const BlockTrace block = traced.trace_block({pattern.grid.x / 2, pattern.grid.y / 2, pattern.grid.z / 2});
  const Rounds rounds = block_rounds(block);
  Measured m{c, {}, rounds};
  m.facts.key = kernel.key();
  m.facts.registers_per_thread = resources.registers_per_thread;
  m.facts.spill_store_bytes = resources.spill_store_bytes;
  m.facts.spill_load_bytes = resources.spill_load_bytes;
  m.facts.stack_frame_bytes = resources.stack_frame_bytes;
  m.facts.static_shared_bytes = resources.static_shared_bytes;
  m.facts.loads_per_round = std::max<std::int64_t>(1, rounds.most_loads);
  m.facts.stores_per_run = std::max<std::int64_t>(1, rounds.most_stores);
  m.facts.measured_with = c.label;
  if (c.problem.family == "gemm") {
    const InnerProduct inner = gemm_inner_product(block, c);
    m.facts.kk_per_group = inner.kk_per_group;
    m.facts.fragment_loads = inner.group;
  }
  return m;
}

/// Every launch measured; throws when a compiled kernel has no launch or a launch no kernel.
std::vector<Measured> measure_all(const std::map<std::string, FamilyCode>& code,
                                  const std::map<std::string, std::int64_t>& sass) {
  std::vector<Measured> measured;
  std::map<std::string, std::set<std::string>> launched; // family -> instances
  for (const CrossCase& c : facts_cases()) {
    const FamilyCode& family = code.at(c.problem.family);
    const std::string instance = builtin_kernel(c.problem, c.config).instance;
    if (!family.instances.contains(instance)) throw std::runtime_error(c.label + ": no compiled kernel " + instance);
    launched[c.problem.family].insert(instance);
    measured.push_back(measure(c, family));
    if (const auto it = sass.find(instance); it != sass.end()) measured.back().facts.sass_loads_per_round = it->second;
  }
  for (const auto& [family, f] : code) {
    for (const std::string& instance : f.instances) {
      if (!launched[family].contains(instance))
        throw std::runtime_error("no launch in facts_cases.hpp runs " + instance);
    }
  }
  return measured;
}

std::string facts_json(const std::vector<Measured>& measured, const KernelFactsProvenance& provenance) {
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const Measured& m : measured) {
    const CompiledKernelFacts& f = m.facts;
    nlohmann::ordered_json kernel = {{"kernel", f.key},
                                     {"registers_per_thread", f.registers_per_thread},
                                     {"spill_store_bytes", f.spill_store_bytes},
                                     {"spill_load_bytes", f.spill_load_bytes},
                                     {"stack_frame_bytes", f.stack_frame_bytes},
                                     {"static_shared_bytes", f.static_shared_bytes},
                                     {"loads_per_round", f.loads_per_round},
                                     {"stores_per_run", f.stores_per_run},
                                     {"sass_loads_per_round", f.sass_loads_per_round},
                                     {"measured_with", f.measured_with}};
    if (f.kk_per_group > 0) {
      kernel["kk_per_group"] = f.kk_per_group;
      nlohmann::ordered_json loads = nlohmann::ordered_json::array();
      for (const FragmentLoad& load : f.fragment_loads) loads.push_back(fragment_load_text(load));
      kernel["fragment_loads"] = loads;
    }
    kernels.push_back(kernel);
  }
  const nlohmann::ordered_json document = {{"schema", "cachewise kernel facts v1"},
                                           {"architecture", provenance.architecture},
                                           {"compiler", provenance.compiler},
                                           {"command", provenance.command},
                                           {"sources_fnv1a64", provenance.sources_fnv1a64},
                                           {"sass_source", provenance.sass_source},
                                           {"kernels", kernels}};
  return document.dump(1) + "\n";
}

/// The pattern's registers, loads in flight and store burst against the compiled kernel's.
void print_table(const std::vector<Measured>& measured) {
  std::printf(
      "| kernel | launch | registers: pattern / ptxas | loads in flight: pattern / PTX most (mean) / SASS | "
      "store burst: pattern / most (mean) per run |\n|---|---|---|---|---|\n");
  for (const Measured& m : measured) {
    const KernelPattern pattern = build_pattern(m.launch.problem, m.launch.config);
    const std::string sass = m.facts.sass_loads_per_round > 0 ? std::to_string(m.facts.sass_loads_per_round) : "-";
    std::printf("| %s | %s | %lld / %lld | %lld / %lld (%.2f) / %s | %lld / %lld (%.2f) |\n", m.facts.key.c_str(),
                m.launch.label.c_str(), static_cast<long long>(pattern.registers_per_thread),
                static_cast<long long>(m.facts.registers_per_thread), static_cast<long long>(pattern.loads_in_flight),
                static_cast<long long>(m.rounds.most_loads), m.rounds.mean_loads, sass.c_str(),
                static_cast<long long>(pattern.store_burst), static_cast<long long>(m.rounds.most_stores),
                m.rounds.mean_stores);
  }
}

int run(int argc, char** argv) {
  if (argc < 6 || (std::string(argv[5]) != "--table" && argc < 7)) {
    std::fprintf(stderr,
                 "usage: builtin_kernel_facts PTX_DIR PTXAS NVCC SOURCE_DIR (--write FILE | --check FILE | --table)\n");
    return 2;
  }
  const std::string mode = argv[5];
  const std::vector<Measured> measured = measure_all(compiled_families(argv[1], argv[2]), sass_rounds(argv[4]));
  if (mode == "--table") {
    print_table(measured);
    return 0;
  }
  const KernelFactsProvenance provenance{"sm_90", compiler_version(argv[3]), CACHEWISE_BUILTIN_PTX_COMMAND,
                                         sources_hash(argv[4]),
                                         std::string(kSassRounds) +
                                             ": cuobjdump -sass on the H200 machine, "
                                             "scripts/cachewise_eval/loads_ahead_of_use.py (measurements/README.md)"};
  const std::string text = facts_json(measured, provenance);
  if (mode == "--write") {
    std::ofstream(argv[6], std::ios::binary) << text;
    return 0;
  }
  const std::string committed = read_text(argv[6]);
  if (committed == text) return 0;
  std::istringstream was(committed), is(text);
  std::string was_line, is_line;
  int line = 1;
  while (std::getline(was, was_line) && std::getline(is, is_line) && was_line == is_line) ++line;
  std::fprintf(stderr,
               "%s differs from what the compiled kernels say at line %d (committed: %s; compiled: %s): "
               "regenerate it (ninja kernel_facts) and commit it\n",
               argv[6], line, was_line.c_str(), is_line.c_str());
  return 1;
}

} // namespace
} // namespace cachewise::frontend::builtin

int main(int argc, char** argv) {
  try {
    return cachewise::frontend::builtin::run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "builtin_kernel_facts: %s\n", error.what());
    return 2;
  }
}
