#include "device_info.hpp"

#include <dlfcn.h>

#include <array>
#include <string>

#include <cuda_runtime.h>

#include "cuda_check.hpp"

namespace cachewise::probe {
namespace {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

/// The few NVML entry points the probe reads, resolved at run time so the library does not link
/// against the driver. Only get calls: the probe never changes clocks.
class Nvml {
public:
  Nvml() {
    library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) return;
    init_ = reinterpret_cast<Init>(dlsym(library_, "nvmlInit_v2"));
    shutdown_ = reinterpret_cast<Shutdown>(dlsym(library_, "nvmlShutdown"));
    handle_by_bus_id_ = reinterpret_cast<HandleByBusId>(dlsym(library_, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock_info_ = reinterpret_cast<ClockInfo>(dlsym(library_, "nvmlDeviceGetClockInfo"));
    driver_version_ = reinterpret_cast<DriverVersion>(dlsym(library_, "nvmlSystemGetDriverVersion"));
    ready_ = init_ != nullptr && shutdown_ != nullptr && handle_by_bus_id_ != nullptr && clock_info_ != nullptr &&
             driver_version_ != nullptr && init_() == kSuccess;
  }
  ~Nvml() {
    if (ready_) shutdown_();
    if (library_ != nullptr) dlclose(library_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::optional<ObservedClocks> clocks(int device) const {
    void* handle = device_handle(device);
    if (handle == nullptr) return std::nullopt;
    unsigned sm = 0;
    unsigned memory = 0;
    if (clock_info_(handle, kClockSm, &sm) != kSuccess || clock_info_(handle, kClockMemory, &memory) != kSuccess) {
      return std::nullopt;
    }
    return ObservedClocks{static_cast<int>(sm), static_cast<int>(memory)};
  }

  std::optional<std::string> driver_version() const {
    if (!ready_) return std::nullopt;
    std::array<char, 96> text{};
    if (driver_version_(text.data(), static_cast<unsigned>(text.size())) != kSuccess) return std::nullopt;
    return std::string(text.data());
  }

private:
  using Init = int (*)();
  using Shutdown = int (*)();
  using HandleByBusId = int (*)(const char*, void**);
  using ClockInfo = int (*)(void*, int, unsigned*);
  using DriverVersion = int (*)(char*, unsigned);
  static constexpr int kSuccess = 0;
  static constexpr int kClockSm = 1;     // NVML_CLOCK_SM
  static constexpr int kClockMemory = 2; // NVML_CLOCK_MEM

  void* device_handle(int device) const {
    if (!ready_) return nullptr;
    std::array<char, 32> bus_id{};
    if (cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), device) != cudaSuccess) return nullptr;
    void* handle = nullptr;
    return handle_by_bus_id_(bus_id.data(), &handle) == kSuccess ? handle : nullptr;
  }

  void* library_ = nullptr;
  bool ready_ = false;
  Init init_ = nullptr;
  Shutdown shutdown_ = nullptr;
  HandleByBusId handle_by_bus_id_ = nullptr;
  ClockInfo clock_info_ = nullptr;
  DriverVersion driver_version_ = nullptr;
};

} // namespace

void read_device_identity(int device, DeviceIdentity& identity, SharedMemoryProfile& shared_memory) {
  cudaDeviceProp properties{};
  kernels::check_cuda(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  identity.name = properties.name;
  identity.compute_capability_major = properties.major;
  identity.compute_capability_minor = properties.minor;
  identity.sm_count = properties.multiProcessorCount;
  identity.warp_size = properties.warpSize;
  identity.max_threads_per_block = properties.maxThreadsPerBlock;
  identity.max_threads_per_sm = properties.maxThreadsPerMultiProcessor;
  identity.max_blocks_per_sm = properties.maxBlocksPerMultiProcessor;
  identity.registers_per_sm = properties.regsPerMultiprocessor;
  identity.registers_per_block = properties.regsPerBlock;
  identity.global_memory_bytes = static_cast<std::int64_t>(properties.totalGlobalMem);
  identity.l2_bytes_reported = properties.l2CacheSize;
  identity.memory_bus_width_bits = properties.memoryBusWidth;
  shared_memory.per_sm_bytes = static_cast<std::int64_t>(properties.sharedMemPerMultiprocessor);
  shared_memory.per_block_optin_bytes = static_cast<std::int64_t>(properties.sharedMemPerBlockOptin);

  int runtime = 0;
  kernels::check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  identity.runtime_version = cuda_version_text(runtime);
  int driver_api = 0;
  kernels::check_cuda(cudaDriverGetVersion(&driver_api), "cudaDriverGetVersion");
  const Nvml nvml;
  const std::optional<std::string> driver = nvml.driver_version();
  identity.driver_version = (driver ? *driver + " (CUDA " : "(CUDA ") + cuda_version_text(driver_api) + ")";
}

std::optional<ObservedClocks> read_clocks_nvml(int device) { return Nvml().clocks(device); }

} // namespace cachewise::probe
