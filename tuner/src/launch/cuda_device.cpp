// The CUDA driver API Device: primary context, modules from PTX (JIT for the device) or
// cubin, device buffers, cuLaunchKernel with kernelParams pointing into the packed argument
// buffer, cuEvent timing. Built only with CUDA; it must run in the process that measures (a
// forked child), never in a parent that forks after CUDA is initialised. The driver's entry
// points come through the static runtime (cudaGetDriverEntryPointByVersion), as cudart_static
// loads libcuda at run time: linking libcuda would keep `advisor` from starting at all on a
// machine without the driver, where it must take the static path.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <map>
#include <vector>

#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/device.hpp"
#include "cachewise/tuner/devices.hpp"

namespace cachewise::tuner {
namespace {

template <typename Function>
Function entry_point(const char* symbol) {
  void* pointer = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t error =
      cudaGetDriverEntryPointByVersion(symbol, &pointer, CUDA_VERSION, cudaEnableDefault, &status);
  if (error != cudaSuccess) throw NoDeviceError(std::string("no CUDA device: ") + cudaGetErrorString(error));
  if (status != cudaDriverEntryPointSuccess || pointer == nullptr) {
    throw NoDeviceError(std::string("no CUDA device: the driver has no ") + symbol);
  }
  return reinterpret_cast<Function>(pointer);
}

/// The driver functions used, typed by cuda.h (whose macros name the current versions).
struct Driver {
#define CACHEWISE_DRIVER_FUNCTION(name) decltype(&::name) name = entry_point<decltype(&::name)>(#name)
  CACHEWISE_DRIVER_FUNCTION(cuInit);
  CACHEWISE_DRIVER_FUNCTION(cuGetErrorName);
  CACHEWISE_DRIVER_FUNCTION(cuGetErrorString);
  CACHEWISE_DRIVER_FUNCTION(cuDeviceGetCount);
  CACHEWISE_DRIVER_FUNCTION(cuDeviceGet);
  CACHEWISE_DRIVER_FUNCTION(cuDeviceGetName);
  CACHEWISE_DRIVER_FUNCTION(cuDeviceGetUuid);
  CACHEWISE_DRIVER_FUNCTION(cuDeviceGetAttribute);
  CACHEWISE_DRIVER_FUNCTION(cuDeviceTotalMem);
  CACHEWISE_DRIVER_FUNCTION(cuDevicePrimaryCtxRetain);
  CACHEWISE_DRIVER_FUNCTION(cuDevicePrimaryCtxRelease);
  CACHEWISE_DRIVER_FUNCTION(cuCtxSetCurrent);
  CACHEWISE_DRIVER_FUNCTION(cuModuleLoadDataEx);
  CACHEWISE_DRIVER_FUNCTION(cuModuleGetFunction);
  CACHEWISE_DRIVER_FUNCTION(cuModuleUnload);
  CACHEWISE_DRIVER_FUNCTION(cuFuncSetAttribute);
  CACHEWISE_DRIVER_FUNCTION(cuMemAlloc);
  CACHEWISE_DRIVER_FUNCTION(cuMemFree);
  CACHEWISE_DRIVER_FUNCTION(cuMemcpyHtoD);
  CACHEWISE_DRIVER_FUNCTION(cuMemcpyDtoH);
  CACHEWISE_DRIVER_FUNCTION(cuLaunchKernel);
  CACHEWISE_DRIVER_FUNCTION(cuEventCreate);
  CACHEWISE_DRIVER_FUNCTION(cuEventDestroy);
  CACHEWISE_DRIVER_FUNCTION(cuEventRecord);
  CACHEWISE_DRIVER_FUNCTION(cuEventSynchronize);
  CACHEWISE_DRIVER_FUNCTION(cuEventElapsedTime);
#undef CACHEWISE_DRIVER_FUNCTION
};

const Driver& driver() {
  static const Driver loaded;
  return loaded;
}

void check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  driver().cuGetErrorName(result, &name);
  driver().cuGetErrorString(result, &text);
  throw InputError(std::string(what) + ": " + (name ? name : "CUDA error") + " (" + (text ? text : "") + ")");
}

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  check(driver().cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
  return value;
}

class CudaDevice final : public Device {
public:
  explicit CudaDevice(int ordinal) {
    check(driver().cuInit(0), "cuInit");
    int count = 0;
    check(driver().cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal >= count)
      throw NoDeviceError("no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(count) + " found)");
    check(driver().cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    check(driver().cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    check(driver().cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    check(driver().cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
    check(driver().cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
    limits_ = query_limits();
  }

  ~CudaDevice() override {
    for (const auto& [id, pointer] : buffers_) driver().cuMemFree(pointer);
    for (CUmodule module : modules_) driver().cuModuleUnload(module);
    driver().cuEventDestroy(start_);
    driver().cuEventDestroy(stop_);
    driver().cuDevicePrimaryCtxRelease(device_);
  }

  DeviceLimits limits() const override { return limits_; }

  std::uint64_t load_module(const std::string& image) override {
    std::array<char, 4096> log{};
    std::array<CUjit_option, 2> options{CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    std::array<void*, 2> values{log.data(), reinterpret_cast<void*>(log.size())};
    CUmodule module = nullptr;
    const CUresult result = driver().cuModuleLoadDataEx(&module, image.c_str(), static_cast<unsigned>(options.size()),
                                                        options.data(), values.data());
    if (result != CUDA_SUCCESS && log[0] != '\0') throw InputError(std::string("cuModuleLoadDataEx: ") + log.data());
    check(result, "cuModuleLoadDataEx");
    modules_.push_back(module);
    return modules_.size() - 1;
  }

  std::uint64_t function(std::uint64_t module, const std::string& entry) override {
    CUfunction function = nullptr;
    check(driver().cuModuleGetFunction(&function, modules_.at(module), entry.c_str()),
          ("cuModuleGetFunction " + entry).c_str());
    functions_.push_back(function);
    return functions_.size() - 1;
  }

  DeviceBuffer allocate(std::int64_t bytes) override {
    CUdeviceptr pointer = 0;
    check(driver().cuMemAlloc(&pointer, static_cast<std::size_t>(bytes)), "cuMemAlloc");
    const std::uint64_t id = next_buffer_++;
    buffers_[id] = pointer;
    return {id, static_cast<std::uint64_t>(pointer), bytes};
  }

  void release(const DeviceBuffer& buffer) override {
    const auto found = buffers_.find(buffer.id);
    if (found == buffers_.end()) return;
    driver().cuMemFree(found->second);
    buffers_.erase(found);
  }

  void copy_to_device(const DeviceBuffer& buffer, std::span<const std::byte> bytes) override {
    check(driver().cuMemcpyHtoD(buffers_.at(buffer.id), bytes.data(), bytes.size()), "cuMemcpyHtoD");
  }

  std::vector<std::byte> copy_from_device(const DeviceBuffer& buffer) override {
    std::vector<std::byte> bytes(static_cast<std::size_t>(buffer.bytes));
    check(driver().cuMemcpyDtoH(bytes.data(), buffers_.at(buffer.id), bytes.size()), "cuMemcpyDtoH");
    return bytes;
  }

  double launch_timed(std::uint64_t function, const LaunchShape& shape, const PackedArguments& arguments) override {
    check_launch_limits(shape, limits_);
    CUfunction kernel = functions_.at(function);
    if (shape.dynamic_shared_bytes > 48 * 1024) { // above 48 KiB a kernel must opt in
      check(driver().cuFuncSetAttribute(kernel, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        static_cast<int>(shape.dynamic_shared_bytes)),
            "cuFuncSetAttribute");
    }
    std::vector<std::byte> storage = arguments.bytes; // kernelParams point into it
    std::vector<void*> parameters;
    for (const std::size_t offset : arguments.offsets) parameters.push_back(storage.data() + offset);
    check(driver().cuEventRecord(start_, nullptr), "cuEventRecord");
    check(
        driver().cuLaunchKernel(kernel, static_cast<unsigned>(shape.grid.x), static_cast<unsigned>(shape.grid.y),
                                static_cast<unsigned>(shape.grid.z), static_cast<unsigned>(shape.block.x),
                                static_cast<unsigned>(shape.block.y), static_cast<unsigned>(shape.block.z),
                                static_cast<unsigned>(shape.dynamic_shared_bytes), nullptr, parameters.data(), nullptr),
        "cuLaunchKernel");
    check(driver().cuEventRecord(stop_, nullptr), "cuEventRecord");
    check(driver().cuEventSynchronize(stop_), "kernel execution");
    float milliseconds = 0.0f;
    check(driver().cuEventElapsedTime(&milliseconds, start_, stop_), "cuEventElapsedTime");
    return milliseconds;
  }

private:
  DeviceLimits query_limits() const {
    DeviceLimits limits;
    std::array<char, 256> name{};
    check(driver().cuDeviceGetName(name.data(), static_cast<int>(name.size()), device_), "cuDeviceGetName");
    limits.name = name.data();
    limits.compute_capability = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                                attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    limits.max_threads_per_block = attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    limits.max_block = {attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
                        attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                        attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
    limits.max_grid = {attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
                       attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                       attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
    limits.max_shared_bytes_per_block = attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    limits.l2_bytes = attribute(device_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    std::size_t memory_bytes = 0;
    check(driver().cuDeviceTotalMem(&memory_bytes, device_), "cuDeviceTotalMem");
    limits.global_memory_bytes = static_cast<std::int64_t>(memory_bytes);
    return limits;
  }

  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
  DeviceLimits limits_;
  std::vector<CUmodule> modules_;
  std::vector<CUfunction> functions_;
  std::map<std::uint64_t, CUdeviceptr> buffers_;
  std::uint64_t next_buffer_ = 1;
};

} // namespace

std::unique_ptr<Device> open_cuda_device(int ordinal) {
  int count = 0;
  if (driver().cuInit(0) != CUDA_SUCCESS || driver().cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    throw NoDeviceError("no CUDA device");
  }
  return std::make_unique<CudaDevice>(ordinal);
}

std::vector<MeasuringDevice> list_cuda_devices() {
  int count = 0;
  if (driver().cuInit(0) != CUDA_SUCCESS || driver().cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    throw NoDeviceError("no CUDA device");
  }
  std::vector<MeasuringDevice> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    check(driver().cuDeviceGet(&device, ordinal), "cuDeviceGet");
    std::array<char, 256> name{};
    check(driver().cuDeviceGetName(name.data(), static_cast<int>(name.size()), device), "cuDeviceGetName");
    CUuuid uuid{};
    check(driver().cuDeviceGetUuid(&uuid, device), "cuDeviceGetUuid");
    // nvidia-smi's spelling: GPU-8-4-4-4-12 hex digits.
    std::string text = "GPU-";
    constexpr char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 16; ++i) {
      if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
      const auto byte = static_cast<unsigned char>(uuid.bytes[i]);
      text += kHex[byte >> 4];
      text += kHex[byte & 15];
    }
    const int cc = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                   attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    devices.push_back({ordinal, name.data(), text, cc, {}, -1});
  }
  return devices;
}

} // namespace cachewise::tuner
