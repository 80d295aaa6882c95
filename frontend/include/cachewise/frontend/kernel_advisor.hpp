// cachewise::frontend — `advisor suggest --kernel`: every candidate of a user kernel's spec is
// compiled (cached), its accesses extracted from the PTX, simulated as a TracedKernel and
// ranked by the advisor's own ranking, reasons and report.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cachewise/advisor.hpp"
#include "cachewise/frontend/compile.hpp"
#include "cachewise/frontend/extract.hpp"
#include "cachewise/frontend/kernel_source.hpp"
#include "cachewise/frontend/spec_expressions.hpp"
#include "cachewise/frontend/ptx.hpp"
#include "cachewise/frontend/spec.hpp"
#include "cachewise/model/simulation/kernel_trace.hpp"

namespace cachewise::frontend {

struct KernelSuggestOptions {
  advisor::SuggestOptions suggest;
  std::size_t compile_threads = 2;
  /// The space is streamed: this many candidates at a time are planned, compiled and traced
  /// (while the chunk before is screened), so that memory does not grow with the space.
  std::size_t chunk_candidates = 256;
  /// Called after each build of a chunk is compiled or found in the cache, from the compiling
  /// threads (it must be thread-safe), with the entry's builds done and at most how many it has
  /// (those so far and one per candidate still to plan: exact after the last chunk).
  std::function<void(std::size_t compiled, std::size_t total)> on_compiled;
};

struct KernelSuggestion {
  advisor::Suggestion suggestion;
  std::int64_t builds = 0;       ///< distinct compile requests among the candidates
  std::int64_t compilations = 0; ///< of those, compiled now (the rest came from the cache)
  /// The most candidates held traced at once (their kernels, extractors and predictions): the
  /// ranking's kept set and two chunks, whatever the size of the space.
  std::int64_t peak_held_candidates = 0;
  /// "out_of_bounds_reads": "simulate": the loads outside every buffer let through, summed over
  /// the candidates (each as last predicted, over its traced blocks); `first` is the first
  /// config's (by its text) that made one, prefixed with it when it has parameters
  /// ("RD_WG_SIZE=16: srad_kernel.cu:200: ...").
  OutOfBoundsLoads out_of_bounds_loads;
  std::int64_t out_of_bounds_candidates = 0; ///< candidates that made one
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
KernelSuggestion suggest_kernel_entries(const KernelSpec& spec, const std::vector<std::string>& entries,
                                        const DeviceProfile& profile, Compiler& compiler,
                                        const KernelSuggestOptions& options = {});
/// One configuration of a user kernel, simulated on its own (`advisor simulate --kernel`).
struct KernelSimulation {
  EvaluatedSpec evaluated;
  CompilerResources compiled;
  std::int64_t shared_bytes_per_block = 0; ///< static (ptxas) + dynamic
  Prediction prediction;
  TracedFacts facts;                    ///< what the time model read off the traced blocks
  std::int64_t max_loads_in_flight = 0; ///< the most global loads a warp had outstanding before a wait
  /// The blocks traced (the front end's boundary blocks and the simulator's sample): interpreted,
  /// and derived from a reference block (docs/ptx-extraction.md, "Blocks by translation").
  std::int64_t interpreted_blocks = 0;
  std::int64_t translated_blocks = 0;
  /// Active lanes per memory instruction / 32, over the memory instructions of the traced blocks.
  double active_lane_fraction = 0.0;
  OutOfBoundsLoads out_of_bounds_loads; ///< let through by "out_of_bounds_reads": "simulate", in the traced blocks
  /// skipped by "branches_on_loaded_data": "not-taken", in the traced blocks
  SkippedOnLoadedData skipped_on_loaded_data;
};

/// Compiles, extracts and simulates the spec's one configuration: every parameter must have
/// exactly one value (else InputError naming it and the flag to give). Throws InputError as
/// suggest_kernel does, and when the configuration breaks a constraint or does not fit the device.
KernelSimulation simulate_kernel(const KernelSpec& spec, const DeviceProfile& profile, Compiler& compiler,
                                 const SimulationOptions& options = {});

/// The compile request of one candidate: its parameters as macros, or its template
/// instantiation, for sm_<compute_capability> (shared with the tuner, which compiles the same builds).
CompileRequest candidate_compile_request(const KernelSpec& spec, const EvaluatedSpec& evaluated, const EntryName& entry,
                                         int compute_capability);

/// Where the traced address space puts the buffers: the first at 1 GiB, each followed by a
/// guard gap as long as itself (both rounded up to 1 MiB), so that an access before a buffer or
/// up to its length past its end lies outside every buffer and is caught.
std::vector<std::uint64_t> buffer_base_addresses(const std::vector<std::int64_t>& buffer_bytes);

/// Each kernel parameter's bytes, as many as the compiled parameter has, little-endian: a
/// pointer parameter gets its buffer's base address (the --buffer of its name); a scalar the
/// --arg or parameter of its name, encoded as its type (the source's, else the compiled one's:
/// .f32/.f64 are floating-point); a struct defined in the source its fields' --arg NAME.FIELD
/// values at their C-layout offsets, checked against the compiled size. When the source's
/// parameter list is unknown (or its length differs from the compiled one), the 8-byte
/// parameters take the buffers in the order given, and the others the integer args in order.
/// Throws InputError naming the parameter and the flag that fixes it.
std::vector<std::vector<std::uint8_t>> kernel_parameter_values(
    const std::vector<PtxParam>& parameters, const std::optional<std::vector<SourceParameter>>& source_parameters,
    const KernelSpec& spec, const EvaluatedSpec& evaluated, const std::vector<std::uint64_t>& buffer_bases);

} // namespace cachewise::frontend
