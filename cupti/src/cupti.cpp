// Range Profiler call order (CUDA 13, cf. the toolkit's range_profiling sample):
// profiler init -> chip name + counter availability -> host object, metrics, config image ->
// enable on the context -> counter-data image -> SetConfig (auto range, kernel or user replay) ->
// Start / launch / Stop until all passes are submitted -> DecodeData -> EvaluateToGpuValues.
#include "cachewise/cupti.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cstdint>
#include <stdexcept>

#include "cachewise/kernels.hpp"
#include "cuda_check.hpp"

namespace cachewise::cupti {
namespace {

/// Zeroed CUPTI parameter struct with its size set, as every CUPTI call expects.
template <typename Params>
Params make_params(std::size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}

std::string result_text(CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return text != nullptr ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

void check_cupti(CUptiResult result, const char* what) {
  switch (result) {
  case CUPTI_SUCCESS: return;
  case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
  case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
    throw CountersUnavailableError(
        std::string("hardware counters need more privileges (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES in ") + what +
        "): run as root or load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0");
  case CUPTI_ERROR_NOT_SUPPORTED:
  case CUPTI_ERROR_NOT_COMPATIBLE:
  case CUPTI_ERROR_DISABLED:
  case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
  case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
  case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
  case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
  case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
  case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    throw CountersUnavailableError(std::string("hardware counters unavailable on this device (") + what + ": " +
                                   result_text(result) + ")");
  default: throw std::runtime_error(std::string(what) + ": " + result_text(result));
  }
}

/// Initialises the profiler for the process lifetime of one measurement.
class ProfilerSession {
public:
  ProfilerSession() {
    auto params = make_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    check_cupti(cuptiProfilerInitialize(&params), "cuptiProfilerInitialize");
  }
  ~ProfilerSession() {
    auto params = make_params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    cuptiProfilerDeInitialize(&params);
  }
  ProfilerSession(const ProfilerSession&) = delete;
  ProfilerSession& operator=(const ProfilerSession&) = delete;
};

/// Host side: metric names -> config image; counter data -> values.
class HostObject {
public:
  HostObject(const std::string& chip_name, const std::vector<std::uint8_t>& availability) {
    auto params = make_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    params.pChipName = chip_name.c_str();
    params.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    check_cupti(cuptiProfilerHostInitialize(&params), "cuptiProfilerHostInitialize");
    object_ = params.pHostObject;
  }
  ~HostObject() {
    auto params =
        make_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    params.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&params);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUptiResult add_metrics(std::vector<const char*>& names) {
    auto params = make_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    params.pHostObject = object_;
    params.ppMetricNames = names.data();
    params.numMetrics = names.size();
    return cuptiProfilerHostConfigAddMetrics(&params);
  }

  std::vector<std::uint8_t> config_image() {
    auto size = make_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = object_;
    check_cupti(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
    std::vector<std::uint8_t> image(size.configImageSize);
    auto params =
        make_params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    params.pHostObject = object_;
    params.configImageSize = image.size();
    params.pConfigImage = image.data();
    check_cupti(cuptiProfilerHostGetConfigImage(&params), "cuptiProfilerHostGetConfigImage");
    return image;
  }

  std::vector<double> evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range,
                               std::vector<const char*>& names) {
    std::vector<double> values(names.size());
    auto params = make_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    params.pHostObject = object_;
    params.pCounterDataImage = counter_data.data();
    params.counterDataImageSize = counter_data.size();
    params.rangeIndex = range;
    params.ppMetricNames = names.data();
    params.numMetrics = names.size();
    params.pMetricValues = values.data();
    check_cupti(cuptiProfilerHostEvaluateToGpuValues(&params), "cuptiProfilerHostEvaluateToGpuValues");
    return values;
  }

private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

/// Target side: the range profiler enabled on one context.
class RangeProfiler {
public:
  explicit RangeProfiler(CUcontext context) {
    auto params = make_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    params.ctx = context;
    check_cupti(cuptiRangeProfilerEnable(&params), "cuptiRangeProfilerEnable");
    object_ = params.pRangeProfilerObject;
  }
  ~RangeProfiler() {
    auto params = make_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    params.pRangeProfilerObject = object_;
    cuptiRangeProfilerDisable(&params);
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  std::vector<std::uint8_t> counter_data_image(std::vector<const char*>& names, std::size_t max_ranges) {
    auto size = make_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pRangeProfilerObject = object_;
    size.pMetricNames = names.data();
    size.numMetrics = names.size();
    size.maxNumOfRanges = max_ranges;
    size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
    check_cupti(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
    std::vector<std::uint8_t> image(size.counterDataSize);
    auto params = make_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    params.pRangeProfilerObject = object_;
    params.counterDataSize = image.size();
    params.pCounterData = image.data();
    check_cupti(cuptiRangeProfilerCounterDataImageInitialize(&params), "cuptiRangeProfilerCounterDataImageInitialize");
    return image;
  }

  void set_config(const std::vector<std::uint8_t>& config, std::vector<std::uint8_t>& counter_data,
                  std::size_t max_ranges, CUpti_ProfilerReplayMode replay) {
    auto params = make_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    params.pRangeProfilerObject = object_;
    params.configSize = config.size();
    params.pConfig = config.data();
    params.counterDataImageSize = counter_data.size();
    params.pCounterDataImage = counter_data.data();
    params.range = CUPTI_AutoRange;
    params.replayMode = replay;
    params.maxRangesPerPass = max_ranges;
    params.numNestingLevels = 1;
    params.minNestingLevel = 1;
    params.passIndex = 0;
    params.targetNestingLevel = 1;
    check_cupti(cuptiRangeProfilerSetConfig(&params), "cuptiRangeProfilerSetConfig");
  }

  /// Runs `launch` between Start and Stop until CUPTI has every pass it needs, `before_pass`
  /// (when set) before each Start.
  void collect(const std::function<void()>& launch, const std::function<void()>& before_pass) {
    constexpr int kMaxRounds = 64; // kernel replay normally submits every pass in the first round
    for (int round = 0; round < kMaxRounds; ++round) {
      if (before_pass) before_pass();
      auto start = make_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
      start.pRangeProfilerObject = object_;
      check_cupti(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
      launch();
      kernels::check_cuda(cudaDeviceSynchronize(), "profiled launch");
      auto stop = make_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      stop.pRangeProfilerObject = object_;
      check_cupti(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
      if (stop.isAllPassSubmitted != 0) return;
    }
    throw std::runtime_error("CUPTI did not collect all passes within " + std::to_string(kMaxRounds) + " launches");
  }

  std::size_t decode() {
    auto params = make_params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    params.pRangeProfilerObject = object_;
    check_cupti(cuptiRangeProfilerDecodeData(&params), "cuptiRangeProfilerDecodeData");
    return params.numOfRangeDropped;
  }

private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

std::string chip_name(int device) {
  auto params = make_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  params.deviceIndex = static_cast<std::size_t>(device);
  check_cupti(cuptiDeviceGetChipName(&params), "cuptiDeviceGetChipName");
  return params.pChipName;
}

std::vector<std::uint8_t> counter_availability(CUcontext context) {
  auto params = make_params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  params.ctx = context;
  check_cupti(cuptiProfilerGetCounterAvailability(&params), "cuptiProfilerGetCounterAvailability (size)");
  std::vector<std::uint8_t> image(params.counterAvailabilityImageSize);
  params.pCounterAvailabilityImage = image.data();
  check_cupti(cuptiProfilerGetCounterAvailability(&params), "cuptiProfilerGetCounterAvailability");
  return image;
}

/// Adds the metrics; when CUPTI rejects the list, finds the first name it rejects alone.
void add_metrics_naming_unknown(HostObject& host, std::vector<const char*>& names, const std::string& chip,
                                const std::vector<std::uint8_t>& availability) {
  const CUptiResult result = host.add_metrics(names);
  if (result == CUPTI_SUCCESS) return;
  for (const char* name : names) {
    HostObject single(chip, availability);
    std::vector<const char*> one{name};
    if (single.add_metrics(one) != CUPTI_SUCCESS) {
      throw InputError(std::string("unknown metric '") + name + "' on chip " + chip);
    }
  }
  check_cupti(result, "cuptiProfilerHostConfigAddMetrics");
}

/// The runtime's context on `device`. The driver's cuCtxGetCurrent is fetched through the
/// runtime, so nothing links libcuda: the `advisor` executable must start on machines
/// without a driver (it reports "no CUDA device" there).
CUcontext current_context(int device) {
  kernels::require_device(device);
  kernels::check_cuda(cudaFree(nullptr), "creating the CUDA context");
  using GetCurrentContext = CUresult (*)(CUcontext*);
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  kernels::check_cuda(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &entry, 4000, cudaEnableDefault, &found),
                      "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)");
  CUcontext context = nullptr;
  if (found != cudaDriverEntryPointSuccess || entry == nullptr ||
      reinterpret_cast<GetCurrentContext>(entry)(&context) != CUDA_SUCCESS || context == nullptr) {
    throw std::runtime_error("no current CUDA context after cudaFree(0)");
  }
  return context;
}

} // namespace

std::vector<RangeValues> measure_kernels(const std::vector<std::string>& metric_names,
                                         const std::function<void()>& launch, int device, int max_kernels,
                                         const std::function<void()>& before_each_pass) {
  if (metric_names.empty()) throw InputError("cupti: no metrics requested");
  if (max_kernels < 1) throw InputError("cupti: max_kernels must be at least 1");
  const CUcontext context = current_context(device);
  std::vector<const char*> names;
  for (const std::string& name : metric_names) names.push_back(name.c_str());
  const auto max_ranges = static_cast<std::size_t>(max_kernels);

  const ProfilerSession session;
  const std::string chip = chip_name(device);
  const std::vector<std::uint8_t> availability = counter_availability(context);
  HostObject host(chip, availability);
  add_metrics_naming_unknown(host, names, chip, availability);
  const std::vector<std::uint8_t> config = host.config_image();

  RangeProfiler profiler(context);
  std::vector<std::uint8_t> counter_data = profiler.counter_data_image(names, max_ranges);
  profiler.set_config(config, counter_data, max_ranges, before_each_pass ? CUPTI_UserReplay : CUPTI_KernelReplay);
  profiler.collect(launch, before_each_pass);
  if (const std::size_t dropped = profiler.decode(); dropped > 0) {
    throw std::runtime_error("cupti: " + std::to_string(dropped) +
                             " kernels beyond max_kernels=" + std::to_string(max_kernels) + " were not profiled");
  }

  auto info = make_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  check_cupti(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  std::vector<RangeValues> ranges;
  for (std::size_t range = 0; range < info.numTotalRanges; ++range) {
    auto range_info = make_params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
    range_info.pCounterDataImage = counter_data.data();
    range_info.counterDataImageSize = counter_data.size();
    range_info.rangeIndex = range;
    range_info.rangeDelimiter = "/";
    check_cupti(cuptiRangeProfilerCounterDataGetRangeInfo(&range_info), "cuptiRangeProfilerCounterDataGetRangeInfo");
    RangeValues values;
    values.range_name = range_info.rangeName != nullptr ? range_info.rangeName : "";
    const std::vector<double> evaluated = host.evaluate(counter_data, range, names);
    for (std::size_t i = 0; i < names.size(); ++i) values.metrics[metric_names[i]] = evaluated[i];
    ranges.push_back(std::move(values));
  }
  return ranges;
}

std::map<std::string, double> measure(const std::vector<std::string>& metric_names, const std::function<void()>& launch,
                                      int device, const std::function<void()>& before_each_pass) {
  std::vector<RangeValues> ranges = measure_kernels(metric_names, launch, device, 1, before_each_pass);
  if (ranges.size() != 1) {
    throw std::runtime_error("cupti: the launch ran " + std::to_string(ranges.size()) +
                             " kernels; measure needs exactly one");
  }
  return std::move(ranges.front().metrics);
}

} // namespace cachewise::cupti
