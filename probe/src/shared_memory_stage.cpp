// Stage: shared-memory banks.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "probe_stages.hpp"

namespace cachewise::probe::detail {

void Probe::shared_banks() {
  std::vector<Point> curve;
  std::vector<double> spreads;
  for (int stride = 4; stride <= 1024; stride *= 2) {
    std::vector<double> samples;
    for (int r = 0; r < 3; ++r) samples.push_back(gpu::shared_load_cycles(stride, 4096));
    const Summary summary = summarize(samples);
    spreads.push_back(summary.spread);
    curve.emplace_back(stride, summary.median);
  }
  add_curve("shared memory: cycles per dependent load vs lane stride", "bytes (lane stride)", kLatencyUnit, curve);
  const std::optional<BankAnalysis> banks = analyze_banks(curve, profile_.device.warp_size);
  const double spread = *std::ranges::max_element(spreads);
  const std::string method =
      "one warp, lane i loads the 4-byte word at i x stride with a dependent chain "
      "(ld.shared via inline PTX), cycles per load vs stride 4..1024 B: conflict-free up to "
      "the bank width, saturating at banks x width";
  if (!banks) {
    profile_.shared_memory.banks = measured(32, low(method + "; no conflicts seen, 32 written"));
    profile_.shared_memory.bank_width_bytes = measured(4, low(method + "; no conflicts seen, 4 written"));
    return;
  }
  const Provenance provenance{method, static_cast<std::int64_t>(3 * curve.size()), spread,
                              confidence_from_spread(spread)};
  profile_.shared_memory.banks = measured(banks->banks, provenance);
  profile_.shared_memory.bank_width_bytes = measured(banks->width_bytes, provenance);
  profile_.shared_memory.extra_wavefront_cycles =
      measured(banks->extra_wavefront_cycles,
               {"(cycles at full conflict - conflict-free cycles) / (conflict degree - 1), same curve",
                provenance.samples, spread, confidence_from_spread(spread)});
}

} // namespace cachewise::probe::detail
