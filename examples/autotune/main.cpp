// Prints the transpose config cachewise_autotune chose for a few sizes.
#include <cstdint>
#include <cstdio>

#include "transpose.h"

int main() {
  namespace tuned = cachewise_tuned::transpose_f32;
  std::printf("device: %s\nsource: %s\n", tuned::device_name,
              CACHEWISE_TUNED_TRANSPOSE_F32_FROM_MEASUREMENT ? "measured" : "static recommendation, not measured");
  const std::int64_t sizes[] = {1000, 4096, 10000, 20000};
  for (const std::int64_t n : sizes) {
    const tuned::Config& config = tuned::config_for(n);
    std::printf("n=%lld -> tuned for n=%lld: smem=%lld tile=%lld block=%lldx%lld pad=%lld (%.4f ms)\n",
                static_cast<long long>(n), static_cast<long long>(config.n), static_cast<long long>(config.smem),
                static_cast<long long>(config.tile), static_cast<long long>(config.block_x),
                static_cast<long long>(config.block_y), static_cast<long long>(config.pad), config.time_ms);
  }
  return 0;
}
