#include "cachewise/validation/evicted_pass.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "cachewise/cupti.hpp"
#include "cachewise/kernels.hpp"

namespace cachewise::validation {
namespace {

constexpr std::string_view kDramWrite = "dram__bytes_write.sum";

} // namespace

// On the H200 every pass carried ~4.7 MB of writes whatever the kernel (a 4 KB copy's pass wrote
// 4.9 MB where ncu counts 0 B), and an eviction right after an eviction only 3-7 KB: they land
// in the first range or the one after it, so both ranges count on both sides of the subtraction.
double pass_baseline_dram_write_bytes() {
  const std::vector<cupti::RangeValues> idle = cupti::measure_kernels(
      {std::string(kDramWrite)},
      [] {
        kernels::evict_l2();
        kernels::evict_l2();
      },
      0, 2, [] { kernels::evict_l2(); });
  double bytes = 0;
  for (const cupti::RangeValues& range : idle) bytes += range.metrics.at(std::string(kDramWrite));
  return bytes;
}

std::map<std::string, double> measure_evicted_pass(const std::vector<std::string>& counters,
                                                   const std::function<void()>& launch, double baseline_bytes) {
  const std::vector<cupti::RangeValues> ranges = cupti::measure_kernels(
      counters,
      [&] {
        launch();
        kernels::evict_l2();
      },
      0, 2, [] { kernels::evict_l2(); });
  if (ranges.size() != 2) throw std::runtime_error("validate: expected the launch and the eviction as two ranges");
  std::map<std::string, double> metrics = ranges[0].metrics;
  const std::string dram_write(kDramWrite);
  if (metrics.contains(dram_write)) {
    metrics[dram_write] =
        std::max(0.0, ranges[0].metrics.at(dram_write) + ranges[1].metrics.at(dram_write) - baseline_bytes);
  }
  return metrics;
}

} // namespace cachewise::validation
