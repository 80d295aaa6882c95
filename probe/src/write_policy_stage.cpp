// Stage: write policy (does a store allocate in L1 / L2).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "probe_stages.hpp"

namespace cachewise::probe::detail {

/// Runs a store-then-load script and turns its timed loads into a flag: set when most hit.
MeasuredFlag Probe::store_then_load(const std::vector<gpu::ScriptStep>& steps, double threshold, int lines,
                                    const std::string& test, const char* level) {
  const std::vector<std::uint32_t> cycles = gpu::run_script(*buffer_, steps, home_sm_);
  const auto hits = static_cast<int>(std::ranges::count_if(cycles, [&](std::uint32_t c) { return c < threshold; }));
  return {hits * 2 > lines,
          {"store-then-load test: " + test + ": " + std::to_string(hits) + "/" + std::to_string(lines) + " " + level +
               " hits (threshold " + format_number(threshold) + " cycles)",
           lines, 0.0, hits == 0 || hits == lines ? Confidence::high : Confidence::low}};
}

void Probe::store_allocation() {
  const std::uint64_t region = 6 * kGiB + 512 * kMiB;
  constexpr int kLines = 16;
  buffer_->zero(region, 2 * kMiB);
  // L1: the line is in L2 only; store to it, then load it through L1.
  std::vector<gpu::ScriptStep> l1_steps;
  for (int i = 0; i < kLines; ++i) {
    const std::uint64_t line = region + static_cast<std::uint64_t>(i) * 4 * kKiB;
    l1_steps.push_back({gpu::Op::load_cg, line, false});
    l1_steps.push_back({gpu::Op::store_wb, line, false});
    l1_steps.push_back({gpu::Op::load_ca, line, true});
  }
  profile_.l1.allocates_on_store =
      store_then_load(l1_steps, l1_miss_threshold_in_script(), kLines,
                      "line resident in L2 only, st.global.wb 8 B, then time ld.global.ca of the same bytes", "L1");

  // L2: evict everything, store whole sectors (4 x 8 B) to cold lines, then load them back. A
  // partial sector would need a DRAM fill before it can be read, hiding the allocation.
  flush_l2();
  std::vector<gpu::ScriptStep> l2_steps;
  for (int i = 0; i < kLines; ++i) {
    const std::uint64_t line = region + kMiB + static_cast<std::uint64_t>(i) * 4 * kKiB;
    for (std::uint64_t word = 0; word < kSector; word += 8) l2_steps.push_back({gpu::Op::store_cg, line + word, false});
    l2_steps.push_back({gpu::Op::load_cg, line, true});
  }
  profile_.l2.allocates_on_store = store_then_load(
      l2_steps, l2_miss_threshold_in_script(), kLines,
      "after evicting L2, st.global.cg of a whole 32 B sector of a cold line, then time ld.global.cg of it", "L2");
}

} // namespace cachewise::probe::detail
