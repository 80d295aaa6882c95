// The probe's state and stages. Each stage runs microbenchmarks (benchmarks.hpp), turns the raw
// timings into values with the CPU analysis (analysis.hpp), and fills its part of the profile.
// Every value carries its method, sample count, spread and confidence; raw curves go into the
// profile. The stages live one group per file: device_stages.cpp (identity, clocks),
// latency_stages.cpp (L1 / DRAM latency, timing overheads), partition_stages.cpp (per-address
// near/far, partitions, SM placement), l2_chase_stage.cpp (full-cycle L2 chase), capacity_stages.cpp,
// line_stages.cpp, eviction_stages.cpp (ways, replacement), bandwidth_stages.cpp, tlb_stage.cpp,
// write_policy_stage.cpp, shared_memory_stage.cpp; chains.cpp holds the helpers they share.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "analysis.hpp"
#include "benchmarks.hpp"
#include "cachewise/probe.hpp"
#include "probe_common.hpp"

namespace cachewise::probe::detail {

using gpu::CacheOp;
using gpu::DeviceBuffer;

class Probe {
public:
  Probe(const ProbeOptions& options, const ProgressCallback& progress, const StopRequested& stop_requested)
      : options_(options), progress_(progress), stop_requested_(stop_requested), random_(kSeed) {}

  DeviceProfile run();

private:
  // ----- sizes and repeats (chains.cpp) -------------------------------------------------------
  bool quick() const { return options_.quick; }
  int repeats() const { return quick() ? 3 : 7; }
  std::uint64_t l2_reported() const { return static_cast<std::uint64_t>(profile_.device.l2_bytes_reported); }
  int sm_count() const { return profile_.device.sm_count; }

  // ----- chains and shared helpers (chains.cpp) ----------------------------------------------
  static Offsets contiguous(std::uint64_t first, std::uint64_t bytes, std::uint64_t spacing);
  Offsets shuffled(Offsets offsets);
  Offsets sample(const Offsets& offsets, std::size_t count);
  Offsets random_blocks(std::uint64_t first, std::uint64_t span, std::uint64_t block, std::uint64_t count,
                        std::uint64_t node_spacing);
  double chase_cycle(const Offsets& order, CacheOp op, int runs = 1, int carveout = -1);
  void flush_l2();
  void add_curve(std::string name, std::string x_unit, std::string y_unit, std::vector<Point> points);
  Summary bandwidth(const gpu::BandwidthRun& run);
  static int passes_for(std::uint64_t bytes_per_pass, double target);
  static void cross_check_capacity(Measured& capacity, const std::optional<Rise>& knee, const std::string& what);

  // ----- device identity and clocks (device_stages.cpp) ---------------------------------------
  void identity();
  void clocks_after();

  // ----- latency chases and timing overheads (latency_stages.cpp) -----------------------------
  void l1_latency();
  void dram_latency();
  void calibrate_per_hop_overhead();
  void calibrate_script_overhead();
  double l1_miss_threshold_in_script() const { return 0.5 * (l1_hit_ + l2_near_) + script_overhead_; }
  double l2_miss_threshold_in_script() const { return 0.5 * (l2_slowest_hit_ + dram_) + script_overhead_; }

  struct HopStats {
    double mean = 0;
    double hit_fraction = 0;
    double near_fraction = 0; ///< hops below the near/far threshold
  };
  HopStats classify_hops(const std::vector<std::uint32_t>& hops) const;

  // ----- per-address near/far, partitions, SM placement (partition_stages.cpp) ----------------
  void l2_near_far();
  void record_partitions(const TwoClusters& clusters, const std::vector<int>& classes, const std::string& other_sms,
                         double most_flipped);
  std::string compare_classes_on_other_sms(const std::vector<int>& classes, double& most_flipped);
  std::optional<std::vector<int>> near_far_classes_from(int sm, const Offsets& addresses);
  void l2_first_touch();
  double first_touch_overhead_check();
  void sm_placement();

  // ----- the full-cycle L2 chase (l2_chase_stage.cpp) -----------------------------------------
  struct ChaseSmLevels {
    int sm = 0;
    int side = -1; ///< near partition per the SM placement (-1: unknown)
    double near_cycles = 0;
    double far_cycles = 0;
  };
  /// The chase's plateaus, named: near (the SM's partition holds the working set), far (only
  /// the whole L2 does), DRAM (beyond L2).
  struct ChaseLevels {
    std::optional<Plateau> near, far, dram;
    std::optional<Step> near_step;  ///< near -> the next level: the SM's near capacity
    std::optional<Step> total_step; ///< the last L2 level -> DRAM: the whole L2's capacity
  };
  void l2_chase();
  double full_cycle_chase(const Offsets& order, int sm);
  Offsets full_cycle_order(std::uint64_t working_set);
  std::vector<std::vector<Point>> chase_curves(const std::vector<double>& sizes_bytes, const std::vector<int>& sms);
  void refine_chase_steps(std::vector<Point>& curve);
  ChaseLevels name_levels(const Plateaus& plateaus) const;
  int other_side_sm() const;
  int side_of(int sm) const;
  std::vector<ChaseSmLevels> chase_per_sm(double near_bytes, double far_bytes);
  std::string per_sm_spread(const std::vector<ChaseSmLevels>& per_sm, bool far) const;
  void record_chase_latencies(const ChaseLevels& home, const std::string& curves_method);
  static std::string describe_levels(const ChaseLevels& levels);

  // ----- capacities (capacity_stages.cpp) ------------------------------------------------------
  std::pair<Measured, std::vector<Point>> l1_sweep(int carveout);
  void l1_capacity_default();
  void l1_capacity_max_carveout();

  /// How the working set is brought into L2 before the timed sample.
  enum class Warm {
    stores, ///< cudaMemset of the range: every line written once, by whichever SM
    reads,  ///< every SM streams the range twice with ld.global.cg
  };
  struct L2Sweep {
    std::vector<Point> latency;
    std::vector<Point> hits;
    std::vector<Point> near_hits;
    std::optional<Rise> rise;
    std::optional<HitCapacity> by_hits; ///< W x hit fraction / plateau fraction beyond the knee
  };
  HopStats l2_point(std::uint64_t working_set, Warm warm);
  L2Sweep l2_sweep(Warm warm);
  double l2_step_mib() const { return quick() ? 4 : 1; }
  int l2_point_repeats() const { return quick() ? 2 : 4; }
  /// The reported capacity's step: the hit-fraction estimate moves by about 0.3 MiB between runs
  /// (H200: 39.41 and 39.47 MiB), too close to a 1 MiB rounding boundary to repeat.
  double l2_capacity_step_bytes() const { return (quick() ? 4.0 : 2.0) * kMiB; }
  void l2_capacity();
  void record_l2_capacity(const L2Sweep& primary, const std::string& method_text);
  void record_near_capacity(const L2Sweep& stored);

  // ----- lines and sectors (line_stages.cpp) ---------------------------------------------------
  std::vector<Point> partial_line_curve(std::uint64_t region, const std::vector<double>& offsets, bool through_l1,
                                        int lines);
  std::pair<double, Offsets> block_test_nodes(double capacity, double fraction, double block, std::uint64_t span);
  static Measured line_from_block_test(const std::vector<Point>& knees, std::size_t blocks_tried, double sector,
                                       std::string method);
  void l1_line();
  void l2_line();

  // ----- eviction sets: ways and replacement (eviction_stages.cpp) ----------------------------
  /// One level's eviction-set search (see reduce_eviction_set).
  struct EvictionLevel {
    const char* label = "L1";
    CacheOp op = CacheOp::ca;
    std::uint64_t region = 0; ///< candidates and targets are random 128 B lines of [region, region + span)
    std::uint64_t span = 0;
    double capacity_bytes = 0;       ///< candidates: 2x it, then 4x if that does not evict
    std::string capacity_source;     ///< where capacity_bytes comes from (method text)
    bool parallel_walk = false;      ///< kMaxWalkers threads walk the candidates (else one thread, in order)
    bool flush_l2_first = false;     ///< evict L2 after writing the chains (L2: the writes filled it)
    int targets = 1;                 ///< at most this many targets, in a fixed order
    std::size_t enough_agreeing = 3; ///< stop once this many minimal sets share one size
    double budget_s = 1;             ///< for the whole level; targets left when it runs out are skipped
    std::size_t max_calls_per_target = 1;
  };
  /// One target's search: its calibration and reduction.
  struct EvictionTarget {
    std::uint64_t line = 0;
    std::size_t candidates = 0;
    EvictionThreshold calibration;
    EvictionSetResult result;
  };
  struct EvictionFindings {
    std::vector<EvictionTarget> targets; ///< the targets tried, in order
    std::optional<WaysVote> ways;
    ReplacementGuess replacement;
    int fingerprint_trials = 0; ///< per probed line
    std::string method;
  };
  /// The probe's word in a line: in the first sector, apart from the chain words (0 and 8).
  static constexpr std::uint64_t kProbeWord = 16;
  /// Calibration runs per target: probe after just loading it, and after walking all candidates.
  static constexpr int kCalibrationRuns = 5;
  std::size_t chain_length_for(const EvictionLevel& level, std::size_t lines) const;
  std::uint32_t eviction_probe(const EvictionLevel& level, const Offsets& lines, std::size_t chain_length,
                               std::optional<std::uint64_t> target, std::uint64_t probe, int walks);
  std::uint32_t eviction_oracle_cycles(const EvictionLevel& level, std::uint64_t target, const Offsets& lines);
  EvictionThreshold calibrate_target(const EvictionLevel& level, std::uint64_t target, const Offsets& candidates,
                                     std::vector<Point>& calibration_curve, double x);
  EvictionTarget search_target(const EvictionLevel& level, std::uint64_t line, const Offsets& all_candidates,
                               std::size_t index, const EvictionSetOptions& options, std::vector<Point>& calibration);
  EvictionFindings find_eviction_sets(const EvictionLevel& level);
  std::string eviction_method(const EvictionLevel& level, const EvictionSetOptions& options,
                              const EvictionFindings& findings, bool ran_out) const;
  ReplacementGuess replacement_fingerprint(const EvictionLevel& level, EvictionFindings& findings);
  static void record_eviction_findings(const EvictionFindings& findings, std::optional<Measured>& ways,
                                       Replacement& replacement);
  void l1_ways();
  void l2_ways();

  // ----- bandwidths (bandwidth_stages.cpp) -----------------------------------------------------
  void l1_bandwidth();
  void l1_bandwidth_curve();
  void l2_bandwidth();
  void dram_bandwidth();
  void copy_shape_slowdowns(std::uint64_t copy_bytes);
  void spread_writes();

  // ----- shared memory, TLB, write policy -----------------------------------------------------
  void shared_banks();
  double tlb_point(std::uint64_t region, std::uint64_t stride);
  std::uint64_t grow_buffer_for_tlb();
  void tlb();
  std::vector<StrideCurve> tlb_curves(std::uint64_t largest);
  std::string tlb_method(const std::vector<StrideCurve>& curves, const TlbReach& found, std::uint64_t largest,
                         std::uint64_t buffer_bytes) const;
  void tlb_page_block_test(double reach, std::uint64_t largest);
  MeasuredFlag store_then_load(const std::vector<gpu::ScriptStep>& steps, double threshold, int lines,
                               const std::string& test, const char* level);
  void store_allocation();

  // ----- state --------------------------------------------------------------------------------
  ProbeOptions options_;
  ProgressCallback progress_;
  StopRequested stop_requested_;
  std::mt19937_64 random_;
  std::unique_ptr<DeviceBuffer> buffer_;
  DeviceProfile profile_;
  // Levels later stages classify against (cycles).
  double l1_hit_ = 0;
  double l1_sector_ = kSector;
  double l2_near_ = 0;
  double l2_far_ = 0;
  double l2_slowest_hit_ = 0; ///< the slower of the far levels found (the chase's, the first-touch test's)
  double dram_ = 0;
  double overhead_ = 0;        ///< extra cycles of per-hop timing over a plain chase
  double script_overhead_ = 0; ///< extra cycles of a script's timed load over a plain chase
  double near_fraction_ = 0.5;
  std::vector<int> sm_ids_;           ///< SM ids blocks ran on
  Offsets near_far_addresses_;        ///< the near/far test's addresses, timed from the home SM
  std::vector<int> near_far_classes_; ///< their classes there: 0 near, 1 far
  int home_sm_ = 0;                   ///< the SM the per-SM latency tests run on
  // The first-touch per-address test (partition_stages.cpp), cross-checked by the chase.
  std::string partition_method_; ///< the self-pointer test's text
  std::optional<TwoClusters> first_touch_;
  std::string first_touch_method_;
  // The full-cycle chase's levels and steps (l2_chase_stage.cpp), cross-checked by the capacity stage.
  ChaseLevels chase_;
};

} // namespace cachewise::probe::detail
