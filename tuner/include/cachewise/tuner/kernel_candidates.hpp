// cachewise::tuner kernel candidates: every candidate of a user kernel's spec (cachewise/frontend/spec.hpp),
// compiled first (in the parent, cached by content hash); one that does not compile is kept
// as failed, so a run measures it as failed and goes on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cachewise/advisor.hpp"
#include "cachewise/frontend/compile.hpp"
#include "cachewise/frontend/kernel_source.hpp"
#include "cachewise/frontend/spec_expressions.hpp"
#include "cachewise/frontend/spec.hpp"
#include "cachewise/tuner/kernel_arguments.hpp"

namespace cachewise::tuner {

/// One candidate, compiled for the device.
struct CompiledCandidate {
  frontend::EvaluatedSpec evaluated; ///< the spec evaluated for its config: grid, block, buffers, template arguments
  std::string ptx;                   ///< empty when it did not compile
  std::string entry;                 ///< the .entry's (mangled) name
  std::vector<KernelParameter> parameters;
  std::string failure; ///< "does not compile: <first error line>"
};

/// Every candidate of a spec's space, compiled (each distinct build once, in parallel).
class KernelCandidates {
public:
  /// Throws InputError for a bad spec, an unknown entry, a reference variant outside the
  /// parameters or that does not compile, an output that is not a buffer, and when no
  /// candidate compiles ("every candidate failed to compile; first: <line>").
  KernelCandidates(frontend::KernelSpec spec, frontend::Compiler& compiler, int compute_capability,
                   std::size_t threads = 2);

  const frontend::KernelSpec& spec() const { return spec_; }
  const SearchSpace& space() const { return space_; }
  /// Throws InputError for a config outside the space.
  const CompiledCandidate& at(const Config& config) const;
  const CompiledCandidate* reference() const { return reference_ ? &*reference_ : nullptr; }
  const std::optional<std::vector<frontend::SourceParameter>>& source_parameters() const { return source_parameters_; }
  std::int64_t compile_failures() const;

private:
  frontend::KernelSpec spec_;
  SearchSpace space_;
  std::map<std::string, CompiledCandidate> by_config_;
  std::optional<CompiledCandidate> reference_;
  std::optional<std::vector<frontend::SourceParameter>> source_parameters_;
};

} // namespace cachewise::tuner
