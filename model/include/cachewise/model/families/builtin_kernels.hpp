// cachewise::model — the built-in families' compiled kernels: which instantiation of
// kernels/src/*.cu a family's launcher runs for a config, and what the compiled code says about
// it (ptxas's registers, spills and shared memory; the kernel front end's loads per round and
// stores per run). The facts come from model/data/kernel_facts_sm90.json, generated from the
// compiled kernels and embedded at build time, so no CUDA is needed to read them
// (docs/model.md#compiled-kernel-facts).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cachewise/model/pattern/pattern.hpp"
#include "cachewise/model/problem.hpp"

namespace cachewise {

/// The kernel a family's launcher runs for a config: the instantiation's name as the demangler
/// writes it ("transpose_shared<unsigned int, 4, 16>"), and, where one instantiation takes
/// different compiled paths by a launch argument, that path ("batched"); else empty.
struct BuiltinKernel {
  std::string instance;
  std::string path;
  /// instance, then " [path]" when there is one: the key of the facts table.
  std::string key() const { return path.empty() ? instance : instance + " [" + path + "]"; }
};

/// The kernel kernels::launch_family_kernel runs for a valid config of a built-in family (build_pattern's
/// rules already checked). Throws InputError for a config no kernel is compiled for.
BuiltinKernel builtin_kernel(const ProblemSpec& problem, const Config& config);

/// One shared load of gemm's inner product as compiled: `elements` consecutive kk of one
/// fragment element, As[ty*tm + fragment][kk + kk_offset .. + elements) or
/// Bs[kk + kk_offset][tx*tn + fragment] (elements 1: Bs is never merged along kk).
struct FragmentLoad {
  bool from_b = false; ///< Bs, else As
  int fragment = 0;    ///< i of As's rows, j of Bs's columns
  int kk_offset = 0;   ///< within the unrolled group
  int elements = 1;    ///< 1, 2, 4 or 8, one ld.shared (.v2, .v4)
  friend bool operator==(const FragmentLoad&, const FragmentLoad&) = default;
};

/// The facts file's text of a load: "As[i][kk+o] xN" or "Bs[kk+o][j] x1".
std::string fragment_load_text(const FragmentLoad& load);

/// What the compiled kernel says, for one BuiltinKernel::key().
struct CompiledKernelFacts {
  std::string key;
  std::int64_t registers_per_thread = 0; ///< ptxas -v, as compiled (launch bounds and __maxnreg__ included)
  std::int64_t spill_store_bytes = 0;
  std::int64_t spill_load_bytes = 0;
  std::int64_t stack_frame_bytes = 0;
  std::int64_t static_shared_bytes = 0;
  /// The most global loads a warp of an interior block issues before it waits for one of them
  /// (the front end's def-use rounds of the PTX), at a launch whose loops fill every batch.
  std::int64_t loads_per_round = 1;
  /// The most global stores such a warp issues without a global load between them.
  std::int64_t stores_per_run = 1;
  /// The largest round of global loads in the kernel's H200 SASS (ptxas's schedule, which may
  /// hoist loads above uses the PTX has first, or split a batch), where it was measured
  /// (measurements/sass/stencil-loads-by-stretch.txt); 0 where not.
  std::int64_t sass_loads_per_round = 0;
  std::string measured_with; ///< the family problem and config the front end traced
  /// gemm: the kk steps nvcc unrolled into one group of the inner product (whole groups run
  /// first, the bk % kk_per_group rest one kk at a time) and the group's shared loads in
  /// program order, which nvcc merges along kk where it can prove the alignment; 0 and empty
  /// for the other kernels.
  std::int64_t kk_per_group = 0;
  std::vector<FragmentLoad> fragment_loads;
};

/// Where the table came from: compiler, command, architecture, a hash of the kernel sources,
/// and where its SASS rounds come from.
struct KernelFactsProvenance {
  std::string architecture;
  std::string compiler;
  std::string command;
  std::string sources_fnv1a64;
  std::string sass_source;
};

/// Every compiled kernel's facts, in the data file's order.
const std::vector<CompiledKernelFacts>& builtin_kernel_facts_table();
const KernelFactsProvenance& builtin_kernel_facts_provenance();

/// The facts of builtin_kernel(problem, config). Throws InputError naming the kernel when the
/// table has none (a kernel added without regenerating the table: the kernel_facts target).
const CompiledKernelFacts& builtin_kernel_facts(const ProblemSpec& problem, const Config& config);

/// build_pattern without the compiled kernel's facts: registers_per_thread, loads_in_flight
/// and store_burst stay at KernelPattern's defaults. The facts generator launches the
/// compiled kernels with it (it must work before the table knows a new kernel); everything
/// else wants build_pattern.
KernelPattern build_pattern_before_kernel_facts(const ProblemSpec& problem, const Config& config);

/// Parses a facts file's text (the format model/data/kernel_facts_sm90.json has); throws
/// InputError for a malformed one.
std::vector<CompiledKernelFacts> parse_kernel_facts(std::string_view json_text,
                                                    KernelFactsProvenance* provenance = nullptr);

} // namespace cachewise
