// cachewise::cupti — hardware counters through the CUDA 13 Range Profiler: metric names and a
// launch in, one value per metric out. Auto range (one range per kernel). Kernel replay by
// default: a launch that needs several passes is replayed by CUPTI, its memory saved and
// restored (the restore leaves data in L2 for the later passes). User replay when a
// `before_each_pass` is given: every pass is a launch of ours, preceded by that call (evict L2
// there and every pass starts cold, as `ncu --cache-control all` does); the launch must then
// give the same result when repeated.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cachewise/model.hpp"

namespace cachewise::cupti {

/// A device is present but its counters cannot be read: insufficient privileges
/// (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), a virtualised or MIG device, profiling disabled.
/// A NoDeviceError, so the CLI reports it in one line with exit code 2.
class CountersUnavailableError : public NoDeviceError {
public:
  using NoDeviceError::NoDeviceError;
};

/// Counter values of one range, keyed by metric name.
struct RangeValues {
  std::string range_name; ///< with auto range, the kernel's index in launch order: "0", "1", ...
  std::map<std::string, double> metrics;
};

/// Profiles every kernel `launch` runs on `device` (at most `max_kernels`); one RangeValues
/// per kernel, in launch order. Throws NoDeviceError without a device,
/// CountersUnavailableError when counters cannot be read, InputError naming the first
/// unknown metric ("unknown metric 'x' on chip GH100"), std::runtime_error otherwise.
std::vector<RangeValues> measure_kernels(const std::vector<std::string>& metric_names,
                                         const std::function<void()>& launch, int device = 0, int max_kernels = 16,
                                         const std::function<void()>& before_each_pass = {});

/// The same for a launch of exactly one kernel (std::runtime_error otherwise).
std::map<std::string, double> measure(const std::vector<std::string>& metric_names, const std::function<void()>& launch,
                                      int device = 0, const std::function<void()>& before_each_pass = {});

} // namespace cachewise::cupti
