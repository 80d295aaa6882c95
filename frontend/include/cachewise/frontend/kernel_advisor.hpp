// cachewise::frontend — `advisor suggest --kernel`: every candidate of a user kernel's spec is
// compiled (cached), its accesses extracted from the PTX, simulated as a TracedKernel and
// ranked by the advisor's own ranking, reasons and report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cachewise/advisor.hpp"
#include "cachewise/frontend/compile.hpp"
#include "cachewise/frontend/kernel_source.hpp"
#include "cachewise/frontend/launch.hpp"
#include "cachewise/frontend/spec.hpp"
#include "cachewise/kernel_trace.hpp"

namespace cachewise::frontend {

struct KernelSuggestOptions {
  advisor::SuggestOptions suggest;
  std::size_t compile_threads = 2;
};

struct KernelSuggestion {
  advisor::Suggestion suggestion;
  std::int64_t builds = 0;       ///< distinct compile requests among the candidates
  std::int64_t compilations = 0; ///< of those, compiled now (the rest came from the cache)
};

/// Throws InputError for a bad spec, an unknown entry, a parameter neither the code nor the
/// launch uses, a pointer parameter without a buffer, or when no candidate compiles or fits.
KernelSuggestion suggest_kernel(const KernelSpec& spec, const DeviceProfile& profile, Compiler& compiler,
                                const KernelSuggestOptions& options = {});

/// Several entries of the spec's file ranked in one table (`--entry A --entry B`), each over the
/// spec's parameters: with more than one, every candidate's config holds the key "entry" (shown
/// as the entry's text) and an error names the entry it comes from. Before compiling, a --param
/// that cannot reach the code is an error naming the file and line: a template parameter given
/// as a macro, or a #define of it that no #ifndef guards.
KernelSuggestion suggest_kernel_entries(const KernelSpec& spec, const std::vector<std::string>& entries, const DeviceProfile& profile,
                                        Compiler& compiler, const KernelSuggestOptions& options = {});

/// The compile request of one candidate: its parameters as macros, or its template
/// instantiation, for sm_<compute_capability> (shared with the tuner, which compiles the same builds).
CompileRequest candidate_compile_request(const KernelSpec& spec, const CandidateLaunch& launch, const EntryName& entry,
                                         int compute_capability);

/// Where the traced address space puts the buffers: the first at 1 GiB, each next one after
/// the previous rounded up to 1 MiB (the simulator's own convention for pattern arrays).
std::vector<std::uint64_t> buffer_base_addresses(const std::vector<std::int64_t>& buffer_bytes);

/// One value per kernel parameter, in order: a pointer parameter gets its buffer's base
/// address (the --buffer of its name), any other the --arg or parameter of its name. When the
/// source's parameter list is unknown (or its length differs from the compiled one), the
/// 8-byte parameters take the buffers in the order given, and the others the args in order.
std::vector<std::uint64_t> kernel_parameter_values(const std::vector<int>& parameter_bytes,
                                                   const std::optional<std::vector<SourceParameter>>& source_parameters,
                                                   const KernelSpec& spec, const CandidateLaunch& launch,
                                                   const std::vector<std::uint64_t>& buffer_bases);

} // namespace cachewise::frontend
