// Internal to the kernel advisor: a compiled candidate as the simulator takes it
// (traced_candidate.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cachewise/frontend/compile.hpp"
#include "cachewise/frontend/extract.hpp"
#include "cachewise/frontend/kernel_advisor.hpp"
#include "cachewise/frontend/ptx.hpp"

namespace cachewise::frontend {

/// A candidate's kernel as the simulator takes it, with the extractor behind its traces.
struct TracedCandidate {
  std::shared_ptr<TracedKernel> kernel;
  std::shared_ptr<const Extractor> extractor;
  CompilerResources resources;
};

/// The candidate compiled as `compiled` (its entry `entry`, mangled, of `module`): its traced
/// kernel (trace_block and translate_block from one extractor), resources from ptxas's report.
/// Traces the grid's boundary blocks; throws InputError for what they cannot trace.
TracedCandidate traced_candidate(const KernelSpec& spec, const EvaluatedSpec& evaluated, const CompiledKernel& compiled,
                                 const std::string& entry, const std::shared_ptr<const PtxModule>& module,
                                 const std::optional<std::vector<SourceParameter>>& source_parameters);

} // namespace cachewise::frontend
