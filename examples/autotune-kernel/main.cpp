// Uses the config cachewise_autotune chose for the consumer's own kernel: the macros in the
// preprocessor, the constexpr values at compile time, config_for at run time.
#include <cstdint>
#include <cstdio>

#include "transpose.h"

namespace tuned = cachewise_tuned::transpose_guarded;

#if CACHEWISE_TUNED_TRANSPOSE_GUARDED_ROWS4096_COLS4096_TILE %      \
        CACHEWISE_TUNED_TRANSPOSE_GUARDED_ROWS4096_COLS4096_ROWS != \
    0
#error "the tuned config breaks the spec's constraint TILE % ROWS == 0"
#endif

// What a launch site would do: the block shape as compile-time constants of the tuned bucket.
template <std::int64_t Tile, std::int64_t Rows>
constexpr std::int64_t threads_per_block() {
  static_assert(Tile % Rows == 0, "a whole number of row passes per tile");
  return Tile * Rows;
}
constexpr std::int64_t large_threads =
    threads_per_block<tuned::rows4096_cols4096.TILE, tuned::rows4096_cols4096.ROWS>();
static_assert(large_threads >= 64 && large_threads <= 1024, "a block the spec allows");
static_assert(&tuned::config_for(1000, 1000) == &tuned::rows1000_cols1000, "exact sizes pick their bucket");
static_assert(&tuned::config_for(3000, 5000) == &tuned::rows4096_cols4096, "closer on a log scale to 4096x4096");

int main() {
  std::printf("device: %s\nsource: %s\n", tuned::device_name,
              CACHEWISE_TUNED_TRANSPOSE_GUARDED_FROM_MEASUREMENT ? "measured" : "static ranking, not measured");
  const std::int64_t sizes[][2] = {{1000, 1000}, {2000, 3000}, {8192, 8192}};
  for (const auto& size : sizes) {
    const tuned::Config& config = tuned::config_for(size[0], size[1]);
    std::printf("%lldx%lld -> bucket %lldx%lld: TILE=%lld ROWS=%lld PAD=%lld (%.4f ms)\n",
                static_cast<long long>(size[0]), static_cast<long long>(size[1]), static_cast<long long>(config.rows),
                static_cast<long long>(config.cols), static_cast<long long>(config.TILE),
                static_cast<long long>(config.ROWS), static_cast<long long>(config.PAD), config.time_ms);
  }
  return 0;
}
