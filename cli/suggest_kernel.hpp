// `advisor suggest --kernel FILE.cu | --spec FILE.json`: the options describing a user kernel's
// spec, and the ranking of its candidates (frontend::suggest_kernel).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cachewise/advisor.hpp"
#include "cachewise/frontend/extract.hpp"
#include "cachewise/frontend/spec.hpp"
#include "progress.hpp"

namespace cachewise::cli {

struct KernelOptions {
  std::string source;
  std::string spec_file;
  std::vector<std::string> entries; ///< --entry, repeatable: several are ranked in one table (suggest)
  std::vector<std::string> parameters;
  std::vector<std::string> constraints;
  std::string grid;
  std::string block;
  std::string dynamic_shared_bytes;
  std::string useful_bytes;
  std::vector<std::string> buffers;
  std::vector<std::string> contents;
  std::vector<std::string> args;
  std::vector<std::string> defines;
  std::string language_standard;
  std::vector<std::string> include_directories;
  std::vector<std::string> compiler_options;
  std::uint64_t max_candidates = frontend::kDefaultMaxCandidates;
  bool replay_loops = false;           ///< --replay-loops: every loop trip interpreted
  std::string out_of_bounds_reads;     ///< --out-of-bounds-reads error|simulate; empty: the spec's
  std::string branches_on_loaded_data; ///< --branches-on-loaded-data error|not-taken; empty: the spec's

  bool given() const { return !source.empty() || !spec_file.empty(); }
};

void add_kernel_options(CLI::App& command, KernelOptions& options);
/// --max-candidates, for the subcommands that build a spec's whole space (suggest, tune, validate).
void add_max_candidates_option(CLI::App& command, KernelOptions& options);

struct KernelRanking {
  advisor::Suggestion suggestion;
  std::string subject;                               ///< "transpose_tiled in transpose.cu"
  std::vector<frontend::ParameterValues> parameters; ///< the spec's, in the order given
  std::int64_t builds = 0;
  std::int64_t compilations = 0;
  bool out_of_bounds_reads_simulated = false;     ///< the spec's "out_of_bounds_reads": "simulate"
  frontend::OutOfBoundsLoads out_of_bounds_loads; ///< frontend::KernelSuggestion's
  std::int64_t out_of_bounds_candidates = 0;
};

/// Throws InputError when --entry is given more than once (only `suggest` ranks several entries).
void require_one_entry(const KernelOptions& options);
/// The spec file (if any) with the flags over it; require_one_entry first.
frontend::KernelSpec kernel_spec_from_options(const KernelOptions& options);

/// The spec file (if any) with the flags over it, ranked on `profile`, every --entry in one
/// table, reporting to `progress`.
KernelRanking rank_kernel(const KernelOptions& options, const DeviceProfile& profile, advisor::SuggestOptions suggest,
                          Progress& progress);

} // namespace cachewise::cli
