// cachewise prediction: what the simulator says about a kernel, counters keyed by CUPTI metric
// names, the time estimate and its terms.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/model/errors.hpp"
#include "cachewise/model/timing/summarised_loop.hpp"

namespace cachewise {

struct Prediction {
  /// Counts and rates keyed by CUPTI metric names, e.g. "l1tex__t_sector_hit_rate.pct",
  /// "lts__t_sectors_op_read.sum", "dram__bytes_read.sum",
  /// "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum".
  std::map<std::string, double, std::less<>> metrics;
  double time_us = 0.0;
  /// The term that sets the time (see time_terms_us): "dram", "l2", "l1", "atomics",
  /// "latency", "shared", "constant", "issue", "compute" or "blocks".
  std::string bottleneck;
  double achieved_bandwidth_gb_per_s = 0.0; ///< useful_bytes / time
  double achieved_gflop_per_s = 0.0;        ///< f32-equivalent flops / time: the headline where issue bounds it
  int blocks_per_sm = 0;
  std::int64_t grid_blocks = 0; ///< blocks the kernel launches
  int warps_per_block = 0;
  std::int64_t waves = 0;
  /// The time terms, each summed over the waves. Per wave the estimate is the soft maximum
  /// (exponent 4) of two sides, and time_us = "launch" + the sum of those over the waves:
  /// "memory" = soft maximum (exponent 16) of "dram", "l2", "l1", "atomics" (one address's
  /// atomics in a row) + "exposed_latency" (the loaded latency chain the resident blocks leave
  /// uncovered); "sm" from "latency" (a block's chain of load rounds and its barrier drains) and
  /// the work, the soft maximum (exponent 4) of "compute" + "issue", "shared", "constant"
  /// (constant-cache requests) and "blocks" (block dispatch): their sum in the first wave, the
  /// larger of the work and latency + work / resident blocks after it (docs/model.md).
  std::map<std::string, double, std::less<>> time_terms_us;
  bool sampled = false;
  double simulated_fraction = 1.0; ///< simulated blocks x loop iterations / all of them
  /// Global stores in spread runs (a warp's consecutive lines of a row that the blocks around it
  /// do not continue, docs/model.md "DRAM factors"): their share of the stored lines, their mean
  /// run (bytes, by line), and the factor the profile's spread_write_slowdown put on DRAM time.
  double spread_write_fraction = 0.0;
  double spread_write_run_bytes = 0.0;
  double spread_write_factor = 1.0;
  /// A user kernel's loops that its traced blocks jumped ahead, over every prediction made of
  /// its trace so far (the simulator does not set these; prediction_to_json leaves them out).
  std::vector<SummarisedLoop> summarised_loops;
  double metric(std::string_view name) const; ///< throws InputError when absent
};

nlohmann::json prediction_to_json(const Prediction& prediction);
/// [{"loop", "runs", "trips_interpreted", "trips_extrapolated"}, ...]
nlohmann::json summarised_loops_to_json(const std::vector<SummarisedLoop>& loops);

} // namespace cachewise
