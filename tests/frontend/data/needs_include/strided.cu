// A file that needs an include directory: <stride_config.h> lies in include/, found only with -I.
#include <stride_config.h>

__global__ void strided_copy(const float* in, float* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i * STRIDE_WORDS];
}
