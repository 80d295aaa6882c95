// cachewise::tuner execution: how evaluation rounds are run. The Tuner plans (which candidates,
// in which order, when to widen, which contenders to re-measure) and hands rounds to an
// executor: local child processes on this host's GPUs (the default), or MPI ranks (mpi.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/model/problem.hpp"
#include "cachewise/tuner/devices.hpp"
#include "cachewise/tuner/options.hpp"
#include "cachewise/tuner/round_record.hpp"

namespace cachewise::tuner {

/// Runs the kernel once with `config` and returns its time in milliseconds; throws (any
/// std::exception) when the config cannot run. `iteration` counts this evaluation's calls from
/// 0, warm-ups included. Realistic cache state is the caller's job: rotate input buffers by
/// `iteration % buffer_sets` so a timed launch does not find its data left in L2 by the
/// previous one. With child-process isolation, every evaluation runs in a fresh child: state
/// created inside the callable (a CUDA context, device buffers) lives only for that candidate.
using Measure = std::function<double(const Config& config, std::int64_t iteration)>;

/// Warm-up, then timed calls until the median's interval is tight or max_repeats is reached;
/// in a forked child (options.isolation), pinned to `device`. A crash, hang or exception is a
/// failed record, never an exception.
RoundRecord evaluate_round(const Measure& measure, const Config& config, int round, const Options& options,
                           const MeasuringDevice& device = {});

struct RoundRequest {
  Config config;
  int round = 0;
};

class RoundExecutor {
public:
  virtual ~RoundExecutor() = default;
  /// The device model every record comes from (empty: the default device, unnamed).
  virtual std::string model() const = 0;
  /// Runs every request once, calling `done(i, record)` as request i finishes (any order, on
  /// this thread). `referee`: all on one device, the same for every call of the run, so the
  /// contenders' final comparison is between times of one device.
  virtual void run(const std::vector<RoundRequest>& requests, bool referee,
                   const std::function<void(std::size_t, RoundRecord)>& done) = 0;
};

/// Child processes on `options.devices` (one at a time per device, all devices at once;
/// the first is the referee), or one at a time on the default device when the list is
/// empty. Throws InputError for devices of different models, or several devices with
/// in-process isolation.
std::unique_ptr<RoundExecutor> local_executor(Measure measure, Options options);

} // namespace cachewise::tuner
