// cachewise::probe — microbenchmarks that measure a GPU's cache model, curve analysis, and
// profile assembly. The library never prints: progress goes to a callback, and a caller-supplied
// stop check lets a Ctrl-C end the probe between steps.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "cachewise/model.hpp"

namespace cachewise::probe {

struct ProbeOptions {
  bool quick = false;       ///< fewer points and repeats (a sanity profile in seconds)
  int device = 0;           ///< CUDA device index
  std::string command_line; ///< recorded in the profile as device.probe_command
};

struct ProbeProgress {
  std::string stage; ///< e.g. "L1 capacity (default carveout)"
  int step = 0;      ///< 1-based
  int steps = 0;
  double elapsed_s = 0.0;
};

using ProgressCallback = std::function<void(const ProbeProgress&)>;
/// Polled between steps; returning true ends the probe with ProbeCancelled.
using StopRequested = std::function<bool()>;

/// Thrown when StopRequested returned true; nothing was measured to completion.
class ProbeCancelled : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Runs every microbenchmark on `options.device` and assembles a schema-v1 profile with the raw
/// curves embedded. Throws NoDeviceError without a usable device, ProbeCancelled when stopped.
DeviceProfile run_probe(const ProbeOptions& options, const ProgressCallback& progress = {},
                        const StopRequested& stop_requested = {});

/// A plain SVG (no scripts, no external resources) plotting the profile's latency-vs-working-set
/// curves on log-log axes. Throws InputError when the profile holds no latency curve.
std::string latency_svg(const DeviceProfile& profile);

} // namespace cachewise::probe
