// Shared gtest main. A gpu test binary (one linking gpu_marker.cpp) exits with 77 (ctest's
// SKIP_RETURN_CODE for gpu-labelled tests) when no CUDA device is usable, printing why.
#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#ifdef CACHEWISE_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

extern "C" int cachewise_test_is_gpu_binary() __attribute__((weak));

namespace {
constexpr int kSkipReturnCode = 77;

bool cuda_device_present(const char** why) {
#ifdef CACHEWISE_WITH_CUDA
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    *why = cudaGetErrorString(status);
    return false;
  }
  if (count == 0) {
    *why = "cudaGetDeviceCount returned 0";
    return false;
  }
  return true;
#else
  *why = "built without CUDA";
  return false;
#endif
}
} // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (cachewise_test_is_gpu_binary != nullptr && cachewise_test_is_gpu_binary() != 0) {
    const char* why = "";
    if (!cuda_device_present(&why)) {
      std::printf("SKIPPED: no CUDA device (%s); gpu tests need one\n", why);
      return kSkipReturnCode;
    }
  }
  return RUN_ALL_TESTS();
}
