// cachewise device profile, schema v1 (docs/profile-format.md): what the probe measured about a
// device, the contract between probe and model. Its JSON form is profile_json.hpp, its files
// profile_files.hpp, the bundled copies bundled_profiles.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/model/profile/calibration.hpp"
#include "cachewise/model/errors.hpp"

namespace cachewise {

inline constexpr int kProfileSchemaVersion = 1;

enum class Confidence { high, medium, low, assumed };

/// Where a value came from. `spread` is relative: (p75 - p25) / median of the samples.
struct Provenance {
  std::string method;
  std::int64_t samples = 0;
  double spread = 0.0;
  Confidence confidence = Confidence::high;
  friend bool operator==(const Provenance&, const Provenance&) = default;
};

struct Measured {
  double value = 0.0;
  Provenance provenance;
  friend bool operator==(const Measured&, const Measured&) = default;
};

struct MeasuredFlag {
  bool value = false;
  Provenance provenance;
  friend bool operator==(const MeasuredFlag&, const MeasuredFlag&) = default;
};

enum class ReplacementPolicy { lru, plru, fifo, random, adaptive, unknown };

struct Replacement {
  ReplacementPolicy policy = ReplacementPolicy::unknown;
  std::string fingerprint; ///< what the eviction test saw, in words
  Provenance provenance;
  friend bool operator==(const Replacement&, const Replacement&) = default;
};

struct DeviceIdentity {
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int registers_per_sm = 0;
  int registers_per_block = 0;
  std::int64_t global_memory_bytes = 0;
  std::int64_t l2_bytes_reported = 0;
  int sm_clock_mhz_before = 0; ///< observed, never set
  int sm_clock_mhz_after = 0;
  int memory_clock_mhz = 0;
  int memory_bus_width_bits = 0;
  std::string driver_version;
  std::string runtime_version;
  std::string probed_at; ///< ISO-8601 UTC
  std::string probe_command;
  std::string probe_version;
  friend bool operator==(const DeviceIdentity&, const DeviceIdentity&) = default;
};

struct L1Profile {
  Measured capacity_bytes; ///< at the default carveout
  std::optional<Measured> capacity_max_carveout_bytes;
  Measured line_bytes;
  Measured sector_bytes;
  std::optional<Measured> ways;
  Replacement replacement;
  Measured hit_latency_cycles;
  std::optional<Measured> read_bandwidth_gb_per_s; ///< whole chip
  MeasuredFlag allocates_on_store;
  friend bool operator==(const L1Profile&, const L1Profile&) = default;
};

/// Where a launch's blocks run, by the partition they see as near: the hardware deals the blocks
/// of a wave to SMs in the order `dispatch_sm_ids` (block i of a wave on SM
/// dispatch_sm_ids[i % size]), and SM s's near partition is `near_partition_by_sm[s]`. On the
/// H200 consecutive blocks share their near partition 96% of the time (docs/probe.md).
struct SmPlacement {
  std::vector<int> dispatch_sm_ids;
  std::vector<int> near_partition_by_sm;
  Provenance provenance;
  friend bool operator==(const SmPlacement&, const SmPlacement&) = default;
};

struct L2Profile {
  Measured capacity_bytes;
  Measured near_capacity_bytes; ///< the partition an SM sees as near
  int partitions = 1;
  Measured line_bytes;
  Measured sector_bytes;
  std::optional<Measured> fill_granularity_bytes;
  std::optional<Measured> slice_interleave_bytes;
  std::optional<Measured> ways;
  Replacement replacement;
  Measured near_hit_latency_cycles;
  Measured far_hit_latency_cycles;
  std::optional<Measured> read_bandwidth_gb_per_s;
  std::optional<Measured> write_bandwidth_gb_per_s;
  /// A store's time per sector when it writes one sector of each line it touches, over stores
  /// that write whole lines (L2-resident data); absent when the probe did not measure it.
  std::optional<Measured> sparse_line_write_slowdown;
  /// Absent when the probe did not map it: then block i of a wave is near partition i % partitions.
  std::optional<SmPlacement> sm_placement;
  MeasuredFlag allocates_on_store;
  friend bool operator==(const L2Profile&, const L2Profile&) = default;
};

struct DramProfile {
  Measured latency_cycles;
  Measured read_bandwidth_gb_per_s;
  Measured write_bandwidth_gb_per_s;
  std::optional<Measured> copy_bandwidth_gb_per_s; ///< device-to-device, bytes read + written
  std::optional<Measured> fetch_granularity_bytes;
  /// By store burst B (2, 4, 8, ...): a copy's time with B vectors per thread (B loads, then B
  /// stores) over its time with 1; empty when the probe did not measure it.
  std::map<std::int64_t, Measured> store_burst_slowdown;
  /// By rounds R: a copy's time when each thread moves R vectors one after another (blocks
  /// that live R times longer) over its time with 1; empty when the probe did not measure it.
  std::map<std::int64_t, Measured> block_walk_slowdown;
  /// By run bytes S (128, 256, ...): a tiled copy's time when each block writes its tile to the
  /// mirrored position (a transpose's write addresses: S contiguous bytes per row, the rows far
  /// apart, the blocks dispatched around it writing elsewhere) over its time to the same
  /// position; empty when the probe did not measure it.
  std::map<std::int64_t, Measured> spread_write_slowdown;
  friend bool operator==(const DramProfile&, const DramProfile&) = default;
};

struct SharedMemoryProfile {
  Measured banks;
  Measured bank_width_bytes;
  std::optional<Measured> extra_wavefront_cycles;
  std::int64_t per_sm_bytes = 0;
  std::int64_t per_block_optin_bytes = 0;
  friend bool operator==(const SharedMemoryProfile&, const SharedMemoryProfile&) = default;
};

struct TlbProfile {
  std::optional<Measured> page_bytes;
  std::optional<Measured> reach_bytes;
  std::optional<Measured> entries;
  std::optional<Measured> miss_penalty_cycles;
  friend bool operator==(const TlbProfile&, const TlbProfile&) = default;
};

/// One raw measurement curve (x, y) kept for plots and re-analysis.
struct Curve {
  std::string name;
  std::string x_unit;
  std::string y_unit;
  std::vector<std::pair<double, double>> points;
  friend bool operator==(const Curve&, const Curve&) = default;
};

struct DeviceProfile {
  int schema_version = kProfileSchemaVersion;
  DeviceIdentity device;
  L1Profile l1;
  L2Profile l2;
  DramProfile dram;
  SharedMemoryProfile shared_memory;
  TlbProfile tlb;
  std::vector<Curve> curves; ///< curves embedded in the profile itself
  Calibration calibration;   ///< the time model's fitted constants (docs/calibration.md)
  friend bool operator==(const DeviceProfile&, const DeviceProfile&) = default;
};

std::string to_string(Confidence confidence);
std::string to_string(ReplacementPolicy policy);

/// The most rounds per block a profile's block_walk_slowdown may name.
inline constexpr std::int64_t kMaxBlockWalkRounds = 1 << 20;
/// The longest write run (bytes) a profile's spread_write_slowdown may name.
inline constexpr std::int64_t kMaxSpreadRunBytes = 1 << 20;

} // namespace cachewise
