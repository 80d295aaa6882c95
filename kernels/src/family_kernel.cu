#include <limits>
#include <string>

#include "cachewise/kernels.hpp"
#include "cuda_check.hpp"
#include "launchers.hpp"

namespace cachewise::kernels {

dim3 to_dim3(const Dim3& extent, const char* what) {
  constexpr std::int64_t kMaxGridX = 2147483647, kMaxGridYZ = 65535;
  if (extent.x < 1 || extent.y < 1 || extent.z < 1 || extent.x > kMaxGridX || extent.y > kMaxGridYZ ||
      extent.z > kMaxGridYZ) {
    throw InputError(std::string("kernels: ") + what + " (" + std::to_string(extent.x) + ", " +
                     std::to_string(extent.y) + ", " + std::to_string(extent.z) + ") exceeds CUDA's launch limits");
  }
  return dim3(static_cast<unsigned>(extent.x), static_cast<unsigned>(extent.y), static_cast<unsigned>(extent.z));
}

void allow_shared_bytes(const void* kernel, std::int64_t shared_bytes) {
  constexpr std::int64_t kDefaultDynamicLimitBytes = 48 * 1024;
  if (shared_bytes <= kDefaultDynamicLimitBytes) return;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)),
             "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
}

void require_int32_offsets(std::int64_t largest_offset_elements, const char* what) {
  if (largest_offset_elements >= std::numeric_limits<std::int32_t>::max()) {
    throw InputError(std::string("kernels: ") + what + " spans " + std::to_string(largest_offset_elements) +
                     " elements, more than the kernels' 32-bit per-thread offsets reach (2^31 - 1)");
  }
}

void check_launch(const char* kernel_name) {
  check_cuda(cudaGetLastError(), (std::string("launch of ") + kernel_name).c_str());
}

void launch_family_kernel(const ProblemSpec& problem, const Config& config, Workload& workload, void* stream) {
  if (!(workload.problem() == problem)) {
    throw InputError("kernels: the workload was allocated for another problem (" + workload.problem().family +
                     ", n=" + std::to_string(workload.problem().n) + ")");
  }
  const KernelPattern pattern = build_pattern(problem, config); // same errors as `advisor simulate`
  const FamilyShape shape = family_shape(problem, config);
  if (workload.array_elements() != shape.array_elements) {
    throw InputError("kernels: the workload's arrays have other sizes than this config needs (copy stride " +
                     std::to_string(shape.copy_stride) + "?)");
  }
  const std::vector<void*> arrays = workload.device_arrays();
  launch_request({problem, config, pattern, shape, arrays, static_cast<cudaStream_t>(stream)});
}

void launch_request(const LaunchRequest& request) {
  const std::string& family = request.problem.family;
  if (family == "transpose") {
    launch_transpose(request);
  } else if (family == "copy") {
    launch_copy(request);
  } else if (family == "stencil2d") {
    launch_stencil2d(request);
  } else if (family == "stencil3d") {
    launch_stencil3d(request);
  } else {
    launch_gemm(request);
  }
}

} // namespace cachewise::kernels
