// cachewise::Calibration — the time model's fitted and measured constants, as data: the
// `calibration` section of a device profile (docs/calibration.md). Each value carries its
// source (which run, which cases, fitted or measured). A profile without one gets
// default_calibration(), named "defaults": neutral values that add no fitted cost.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace cachewise {

/// One calibrated number and where it came from ("fitted on run 13, ..." / "measured: ...").
struct CalibratedValue {
  double value = 0.0;
  std::string source;
  friend bool operator==(const CalibratedValue&, const CalibratedValue&) = default;
};

/// How far measured time strays from predicted time: measured / predicted lies in
/// [low_ratio, high_ratio] for the residuals named by `source` (held-out cases).
struct TimeErrorBand {
  double low_ratio = 1.0;
  double high_ratio = 1.0;
  std::int64_t residuals = 0; ///< configs the band was taken from
  std::string source;
  friend bool operator==(const TimeErrorBand&, const TimeErrorBand&) = default;
};

/// The family key of the band used for a custom or traced kernel.
inline constexpr std::string_view kAllFamiliesBand = "all";

/// gemm's instructions beyond its accesses and FMAs, per warp (smsp__inst_executed.sum fit).
struct GemmOverheadFit {
  CalibratedValue per_tile_element_instructions; ///< each tile element a thread loads
  CalibratedValue per_k_step_instructions;
  /// Per inner-product step, by thread tile "TMxTN" (1x1 ... 8x8); absent tiles cost 0.
  std::map<std::string, double, std::less<>> inner_step_instructions_by_thread_tile;
  std::string inner_step_source;
  friend bool operator==(const GemmOverheadFit&, const GemmOverheadFit&) = default;
};

struct Calibration {
  std::string name = "defaults"; ///< shown beside every prediction
  std::string description;
  /// Soft-maximum exponent of the SM side against the memory side, and of the memory levels
  /// (DRAM, L2, L1) among themselves.
  CalibratedValue combine_exponent{4.0, "default: a soft maximum"};
  CalibratedValue memory_levels_combine_exponent{4.0, "default: a soft maximum"};
  /// A round's latency under load, as a multiple of the profile's idle latencies.
  CalibratedValue loaded_dram_latency_factor{1.0, "default: idle latency"};
  CalibratedValue loaded_cache_latency_factor{1.0, "default: idle latency"};
  CalibratedValue block_launch_cycles{0.0, "default: none"};
  CalibratedValue barrier_cycles{0.0, "default: none"};
  CalibratedValue launch_overhead_us{0.0, "default: none"};
  /// SM cycles the L2 slice that homes an address takes per atomic operation on it (atomics on
  /// one address serialise there); optional in the JSON.
  CalibratedValue same_address_atomic_cycles{0.0, "default: none"};
  /// Machine instructions of an integer division or remainder by a register, one PTX
  /// instruction (WarpTrace::register_divisions); optional in the JSON.
  CalibratedValue register_division_instructions{1.0, "default: one instruction, as in PTX"};
  /// SM cycles the constant cache takes per request (one address of a warp's constant read;
  /// WarpTrace::constant_requests); optional in the JSON.
  CalibratedValue constant_request_cycles{0.0, "default: none"};
  /// Write runs: a warp's run of lines is compact when the blocks within `neighbour_blocks`
  /// of it in dispatch order continue it to `compact_run_factor` times its length.
  CalibratedValue write_run_neighbour_blocks{0.0, "default: every run compact"};
  CalibratedValue write_run_compact_factor{1.0, "default: every run compact"};
  /// Rounds in which stencil3d's streaming kernels issue a batch of planes' taps (the loads a
  /// warp has in flight are the batch over this); optional in the JSON.
  CalibratedValue stencil3d_streaming_batch_rounds{1.0, "default: the whole batch in flight"};
  GemmOverheadFit gemm_overhead{{0.0, "default: none"}, {0.0, "default: none"}, {}, "default: none"};
  /// Candidates the advisor predicts again with its refinement options after screening.
  CalibratedValue screening_refined_candidates{1.0e9, "default: every candidate"};
  /// Of those, a candidate screened at this many times the `top`-th screened time or more is not
  /// refined: it cannot reach the shown ranks while refined / screened times of one kernel's
  /// candidates spread less than this (docs/advisor.md); 0 refines every one. Optional in the JSON.
  CalibratedValue screening_refine_margin{0.0, "default: every shortlisted candidate refined"};
  /// By family ("transpose", ..., and kAllFamiliesBand); empty: no band is known.
  std::map<std::string, TimeErrorBand, std::less<>> time_error_bands;
  friend bool operator==(const Calibration&, const Calibration&) = default;
};

/// The documented defaults (docs/calibration.md), name "defaults".
inline Calibration default_calibration() { return Calibration{}; }

/// The band for a family, else the all-families one, else none.
std::optional<TimeErrorBand> time_error_band(const Calibration& calibration, std::string_view family);

/// Where a predicted time's measurement is expected to lie (us).
struct TimeInterval {
  double low_us = 0.0;
  double high_us = 0.0;
};
/// time_us scaled by the family's band (time_error_band); none when the calibration has none.
std::optional<TimeInterval> time_interval(const Calibration& calibration, std::string_view family, double time_us);
/// "expected 36.12-42.40 us (calibration h200-run21)", or "no error band (calibration defaults)".
std::string time_interval_text(const Calibration& calibration, std::string_view family, double time_us);
/// {"calibration": name, "time_band_us": {"low", "high"} or null}, to merge into a prediction's JSON.
nlohmann::json time_interval_json(const Calibration& calibration, std::string_view family, double time_us);

/// Validates and converts; errors name the JSON path under `path`
/// ("profile.calibration.combine_exponent.value: expected a value > 0, got -1").
Calibration calibration_from_json(const nlohmann::json& json, const std::string& path = "calibration");
nlohmann::json calibration_to_json(const Calibration& calibration);

} // namespace cachewise
