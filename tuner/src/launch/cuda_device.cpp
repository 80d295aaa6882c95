// The CUDA driver API Device: primary context, modules from PTX (JIT for the device) or
// cubin, device buffers, cuLaunchKernel with kernelParams pointing into the packed argument
// buffer, cuEvent timing. Built only with CUDA; it must run in the process that measures (a
// forked child), never in a parent that forks after CUDA is initialised.
#include <cuda.h>

#include <array>
#include <map>
#include <vector>

#include "cachewise/errors.hpp"
#include "cachewise/tuner/device.hpp"

namespace cachewise::tuner {
namespace {

void check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  throw InputError(std::string(what) + ": " + (name ? name : "CUDA error") + " (" + (text ? text : "") + ")");
}

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  check(cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
  return value;
}

class CudaDevice final : public Device {
public:
  explicit CudaDevice(int ordinal) {
    check(cuInit(0), "cuInit");
    int count = 0;
    check(cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal >= count) throw NoDeviceError("no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(count) + " found)");
    check(cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    check(cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
    check(cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
    limits_ = query_limits();
  }

  ~CudaDevice() override {
    for (const auto& [id, pointer] : buffers_) cuMemFree(pointer);
    for (CUmodule module : modules_) cuModuleUnload(module);
    cuEventDestroy(start_);
    cuEventDestroy(stop_);
    cuDevicePrimaryCtxRelease(device_);
  }

  DeviceLimits limits() const override { return limits_; }

  std::uint64_t load_module(const std::string& image) override {
    std::array<char, 4096> log{};
    std::array<CUjit_option, 2> options{CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    std::array<void*, 2> values{log.data(), reinterpret_cast<void*>(log.size())};
    CUmodule module = nullptr;
    const CUresult result = cuModuleLoadDataEx(&module, image.c_str(), static_cast<unsigned>(options.size()), options.data(), values.data());
    if (result != CUDA_SUCCESS && log[0] != '\0') throw InputError(std::string("cuModuleLoadDataEx: ") + log.data());
    check(result, "cuModuleLoadDataEx");
    modules_.push_back(module);
    return modules_.size() - 1;
  }

  std::uint64_t function(std::uint64_t module, const std::string& entry) override {
    CUfunction function = nullptr;
    check(cuModuleGetFunction(&function, modules_.at(module), entry.c_str()), ("cuModuleGetFunction " + entry).c_str());
    functions_.push_back(function);
    return functions_.size() - 1;
  }

  DeviceBuffer allocate(std::int64_t bytes) override {
    CUdeviceptr pointer = 0;
    check(cuMemAlloc(&pointer, static_cast<std::size_t>(bytes)), "cuMemAlloc");
    const std::uint64_t id = next_buffer_++;
    buffers_[id] = pointer;
    return {id, static_cast<std::uint64_t>(pointer), bytes};
  }

  void release(const DeviceBuffer& buffer) override {
    const auto found = buffers_.find(buffer.id);
    if (found == buffers_.end()) return;
    cuMemFree(found->second);
    buffers_.erase(found);
  }

  void copy_to_device(const DeviceBuffer& buffer, std::span<const std::byte> bytes) override {
    check(cuMemcpyHtoD(buffers_.at(buffer.id), bytes.data(), bytes.size()), "cuMemcpyHtoD");
  }

  std::vector<std::byte> copy_from_device(const DeviceBuffer& buffer) override {
    std::vector<std::byte> bytes(static_cast<std::size_t>(buffer.bytes));
    check(cuMemcpyDtoH(bytes.data(), buffers_.at(buffer.id), bytes.size()), "cuMemcpyDtoH");
    return bytes;
  }

  double launch_timed(std::uint64_t function, const LaunchShape& shape, const PackedArguments& arguments) override {
    check_launch_limits(shape, limits_);
    CUfunction kernel = functions_.at(function);
    if (shape.dynamic_shared_bytes > 48 * 1024) { // above 48 KiB a kernel must opt in
      check(cuFuncSetAttribute(kernel, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(shape.dynamic_shared_bytes)),
            "cuFuncSetAttribute");
    }
    std::vector<std::byte> storage = arguments.bytes; // kernelParams point into it
    std::vector<void*> parameters;
    for (const std::size_t offset : arguments.offsets) parameters.push_back(storage.data() + offset);
    check(cuEventRecord(start_, nullptr), "cuEventRecord");
    check(cuLaunchKernel(kernel, static_cast<unsigned>(shape.grid.x), static_cast<unsigned>(shape.grid.y),
                         static_cast<unsigned>(shape.grid.z), static_cast<unsigned>(shape.block.x), static_cast<unsigned>(shape.block.y),
                         static_cast<unsigned>(shape.block.z), static_cast<unsigned>(shape.dynamic_shared_bytes), nullptr,
                         parameters.data(), nullptr),
          "cuLaunchKernel");
    check(cuEventRecord(stop_, nullptr), "cuEventRecord");
    check(cuEventSynchronize(stop_), "kernel execution");
    float milliseconds = 0.0f;
    check(cuEventElapsedTime(&milliseconds, start_, stop_), "cuEventElapsedTime");
    return milliseconds;
  }

private:
  DeviceLimits query_limits() const {
    DeviceLimits limits;
    std::array<char, 256> name{};
    check(cuDeviceGetName(name.data(), static_cast<int>(name.size()), device_), "cuDeviceGetName");
    limits.name = name.data();
    limits.compute_capability = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                                attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    limits.max_threads_per_block = attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    limits.max_block = {attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X), attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                        attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
    limits.max_grid = {attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                       attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
    limits.max_shared_bytes_per_block = attribute(device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    limits.l2_bytes = attribute(device_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    std::size_t memory_bytes = 0;
    check(cuDeviceTotalMem(&memory_bytes, device_), "cuDeviceTotalMem");
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
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    throw NoDeviceError("no CUDA device");
  }
  return std::make_unique<CudaDevice>(ordinal);
}

} // namespace cachewise::tuner
