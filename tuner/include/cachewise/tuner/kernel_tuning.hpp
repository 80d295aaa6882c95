// cachewise::tuner kernel tuning: a user kernel's spec (cachewise/frontend/spec.hpp) measured
// on a Device. Every candidate is compiled first (in the parent, cached by content hash);
// one that does not compile is measured as failed, so the run goes on. Each measuring
// process opens the device, loads the candidate, allocates the spec's buffers (deterministic
// contents, or the declared ones of index buffers (spec "contents"), enough sets rotated by iteration that a timed
// launch does not find its data in L2), optionally checks the outputs against a reference variant, and times launches.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachewise/frontend/compile.hpp"
#include "cachewise/frontend/kernel_source.hpp"
#include "cachewise/frontend/spec_expressions.hpp"
#include "cachewise/frontend/spec.hpp"
#include "cachewise/tuner/autotuner.hpp"
#include "cachewise/tuner/device.hpp"
#include "cachewise/tuner/kernel_arguments.hpp"

namespace cachewise::tuner {

/// The sizes one bucket sets ("width=1024,height=1024"): args, or macros the source reads.
struct SizeBucket {
  std::vector<frontend::NamedValue> args;
  std::string label() const; ///< "width=1024,height=1024"
};
/// Throws InputError on malformed text or a repeated name.
SizeBucket parse_size_bucket(std::string_view text);
/// The spec with the bucket's sizes set: an arg of that name, else a define of that name (-D),
/// else a new define when the source names it (a size #define'd in the source, guarded by
/// #ifndef); throws InputError for a name that is none of these.
frontend::KernelSpec with_size_bucket(frontend::KernelSpec spec, const SizeBucket& bucket);

/// One candidate, compiled for the device.
struct CompiledCandidate {
  frontend::EvaluatedSpec launch;
  std::string ptx;   ///< empty when it did not compile
  std::string entry; ///< the .entry's (mangled) name
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
  const advisor::SearchSpace& space() const { return space_; }
  /// Throws InputError for a config outside the space.
  const CompiledCandidate& at(const Config& config) const;
  const CompiledCandidate* reference() const { return reference_ ? &*reference_ : nullptr; }
  const std::optional<std::vector<frontend::SourceParameter>>& source_parameters() const { return source_parameters_; }
  std::int64_t compile_failures() const;

private:
  frontend::KernelSpec spec_;
  advisor::SearchSpace space_;
  std::map<std::string, CompiledCandidate> by_config_;
  std::optional<CompiledCandidate> reference_;
  std::optional<std::vector<frontend::SourceParameter>> source_parameters_;
};

/// Buffer sets rotated so that sets * set_bytes exceeds the L2 (l2 / set + 1), at most
/// kMaxBufferSets and at most half the device memory (at least 1).
inline constexpr int kMaxBufferSets = 64;
int buffer_sets_for(std::int64_t set_bytes, std::int64_t l2_bytes, std::int64_t memory_bytes);

/// The deterministic contents of buffer `buffer` of set `set`: little-endian float32 words in
/// [0, 1) from a multiplicative hash of (set, buffer, index), so any dtype reads finite values.
std::vector<std::byte> buffer_contents(std::int64_t bytes, int set, int buffer);

/// The first element where `candidate` and `reference` differ by more than `tolerance`
/// relative (to the larger magnitude; 0 = exactly), as "index 17: 0.5 vs 0.25"; nullopt when
/// they agree. Throws InputError for an unknown type or a size mismatch.
std::optional<std::string> first_difference(std::span<const std::byte> candidate, std::span<const std::byte> reference,
                                            const std::string& type, double tolerance);

using DeviceFactory = std::function<std::unique_ptr<Device>()>;

struct KernelMeasureOptions {
  std::int64_t l2_bytes = 0; ///< the profile's L2; 0: the device's
};

/// One candidate loaded on a device with its buffer sets (deterministic contents; a buffer with
/// declared contents holds those, evaluated on the host, in every set): what
/// kernel_measure times and `advisor validate --kernel` reads counters of.
class LoadedKernel {
public:
  /// Throws InputError for a candidate that did not compile or a launch past the limits.
  LoadedKernel(Device& device, const KernelCandidates& candidates, const CompiledCandidate& candidate,
               const KernelMeasureOptions& options = {});
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  /// One timed launch on buffer set iteration % sets, in milliseconds; iteration 0 first
  /// checks the outputs against the reference when the spec has one.
  double run(std::int64_t iteration);
  /// Reference and candidate once each on set 0 as filled; throws InputError naming the
  /// first output element that differs beyond the spec's tolerance.
  void check_against_reference();
  std::size_t buffer_sets() const { return sets_.size(); }

private:
  void fill(const DeviceBuffer& buffer, int set, int index);
  PackedArguments arguments(const CompiledCandidate& kernel, const std::vector<DeviceBuffer>& buffers) const;
  std::vector<std::vector<std::byte>> outputs_after(std::uint64_t function, const CompiledCandidate& kernel);

  Device& device_;
  const KernelCandidates& candidates_;
  const CompiledCandidate& candidate_;
  std::uint64_t function_ = 0;
  std::vector<std::vector<DeviceBuffer>> sets_;
  std::map<int, std::vector<std::byte>> declared_bytes_; ///< by buffer index: evaluated once, uploaded to every set
};

/// A Measure for the Tuner: opens the device in the measuring process (once per candidate),
/// loads the candidate and launches it; the first call checks the outputs when the spec has
/// a reference. Throws InputError "does not compile: ...", "launch past the device's limits:
/// ...", "output odata differs from the reference (...) at index 7: ...".
Measure kernel_measure(std::shared_ptr<const KernelCandidates> candidates, DeviceFactory open_device,
                       KernelMeasureOptions options = {});

/// What the header and the journal call one bucket's run: "transpose_tiled width=1024,height=1024".
ProblemSpec kernel_problem(const frontend::KernelSpec& spec, const SizeBucket& bucket);

} // namespace cachewise::tuner
