// cachewise::tuner loaded kernels: each measuring process opens the device, loads the
// candidate, allocates the spec's buffers (deterministic contents, or the declared ones of
// index buffers (spec "contents"), enough sets rotated by iteration that a timed launch does
// not find its data in L2), optionally checks the outputs against a reference variant, and
// times launches: kernel_measure, the Tuner's Measure of a user kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "cachewise/tuner/device.hpp"
#include "cachewise/tuner/execution.hpp"
#include "cachewise/tuner/kernel_arguments.hpp"
#include "cachewise/tuner/kernel_candidates.hpp"

namespace cachewise::tuner {

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

} // namespace cachewise::tuner
