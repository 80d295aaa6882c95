// cachewise::advisor::CounterSummary — the counters the suggest table shows, from a prediction.
#pragma once

#include <optional>

#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// The counters the suggest table shows, derived from a prediction's CUPTI-named metrics
/// (nullopt when the metric is absent, e.g. no shared-memory access).
struct CounterSummary {
  std::optional<double> load_sectors_per_request;  ///< global loads
  std::optional<double> store_sectors_per_request; ///< global stores
  std::optional<double> shared_load_ways; ///< shared-load wavefronts per conflict-free one: 1 = no bank conflict
  std::optional<double> shared_store_ways;
  std::optional<double> l1_hit_pct;
  std::optional<double> l2_hit_pct;
};
CounterSummary summarize(const Prediction& prediction);

} // namespace cachewise::advisor
