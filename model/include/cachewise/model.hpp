// cachewise::model — the device profile (the contract between probe and model), the
// shared Config / ProblemSpec vocabulary, access-pattern description and the simulator.
// Plain C++20: nothing here needs CUDA at build or run time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/calibration.hpp"

namespace cachewise {

// ---------------------------------------------------------------------------------------
// Errors. Libraries never print: they throw these, and the CLI maps them to one line and
// an exit code (2 for both).
// ---------------------------------------------------------------------------------------

/// Bad input from the user: a malformed file, an unknown name, an impossible size or config.
class InputError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The operation needs a CUDA device and none is usable ("no CUDA device: ...").
class NoDeviceError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------
// Device profile, schema v1 (docs/profile-format.md).
// ---------------------------------------------------------------------------------------

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

/// Near partition of the i-th block of a wave: that of the SM the hardware deals it to.
int near_partition_of_block(const SmPlacement& placement, std::int64_t block);

/// Pairs of neighbouring blocks (i, i + 1) among the first dispatch_sm_ids.size() of a wave
/// that start on SMs of one near partition.
int neighbours_sharing_a_partition(const SmPlacement& placement);

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
  std::string curves_file; ///< raw curves beside the profile, relative to it; may be empty
  std::vector<Curve> curves; ///< curves embedded in the profile itself
  Calibration calibration;   ///< the time model's fitted constants (docs/calibration.md)
  friend bool operator==(const DeviceProfile&, const DeviceProfile&) = default;
};

/// Validates and converts; errors name the JSON path, e.g.
/// "profile.l2.line_bytes: expected a power of two, got 100".
DeviceProfile profile_from_json(const nlohmann::json& json);
nlohmann::json profile_to_json(const DeviceProfile& profile);

/// Reads a profile file; errors are prefixed by the file name.
DeviceProfile load_profile(const std::filesystem::path& path);
/// Writes atomically (temporary file in the same folder, then rename).
void save_profile(const DeviceProfile& profile, const std::filesystem::path& path);

/// Folders searched for bundled profiles, in order: $CACHEWISE_PROFILE_DIR, share/cachewise/profiles
/// beside the running executable's prefix, the configured install prefix, the source tree.
std::vector<std::filesystem::path> bundled_profile_dirs();
/// The bundled profile for a device name (e.g. "NVIDIA H200"), or the H200 one when none matches.
std::filesystem::path bundled_profile_path(std::string_view device_name = {});

std::string to_string(Confidence confidence);
std::string to_string(ReplacementPolicy policy);

// ---------------------------------------------------------------------------------------
// Problem and Config: one vocabulary for advisor, model, kernels and tuner.
// ---------------------------------------------------------------------------------------

enum class DataType { f32, f64, f16 };
int element_bytes(DataType type);
std::string to_string(DataType type);
DataType parse_data_type(std::string_view text); ///< throws InputError naming the valid types

/// What the user wants computed. Unused sizes stay 0; families document which they read.
struct ProblemSpec {
  std::string family;
  std::int64_t n = 0;
  std::int64_t m = 0;
  std::int64_t k = 0;
  DataType dtype = DataType::f32;
  friend bool operator==(const ProblemSpec&, const ProblemSpec&) = default;
};

/// Named integer parameters, e.g. "smem=1,tile=32,block_x=32,block_y=8,pad=1".
class Config {
public:
  Config() = default;
  Config(std::initializer_list<std::pair<const std::string, std::int64_t>> values) : values_(values) {}

  /// Parses "key=value,key=value"; throws InputError on malformed text or duplicate keys.
  static Config parse(std::string_view text);

  bool has(std::string_view key) const;
  /// Throws InputError "config: missing key 'tile'" when absent.
  std::int64_t get(std::string_view key) const;
  std::int64_t get_or(std::string_view key, std::int64_t fallback) const;
  void set(std::string key, std::int64_t value) { values_[std::move(key)] = value; }

  const std::map<std::string, std::int64_t, std::less<>>& values() const { return values_; }
  std::string to_string() const; ///< canonical form, keys sorted
  friend bool operator==(const Config&, const Config&) = default;

private:
  std::map<std::string, std::int64_t, std::less<>> values_;
};

// ---------------------------------------------------------------------------------------
// Access patterns (docs/pattern-format.md, docs/pattern-families.md).
// ---------------------------------------------------------------------------------------

enum class MemorySpace { global, shared };

/// Index variables an affine access may use. Loop variables are named by the phase's loops.
/// `thread_linear` is the x-fastest linear thread id within the block (what tile sweeps use).
enum class IndexVar { thread_x, thread_y, thread_z, block_x, block_y, block_z, thread_linear };

struct Dim3 {
  std::int64_t x = 1;
  std::int64_t y = 1;
  std::int64_t z = 1;
  std::int64_t count() const { return x * y * z; }
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

/// coefficient * (floor((constant + sum(terms)) / divisor) mod modulus), modulus 0 = none.
/// Expresses tile sweeps such as `row = idx / width, col = idx % width` with
/// `idx = thread_linear + i * threads`.
struct QuotientTerm {
  std::int64_t coefficient = 1;
  std::int64_t divisor = 1;
  std::int64_t modulus = 0;
  std::int64_t constant = 0;
  std::map<IndexVar, std::int64_t> thread_terms;
  std::map<std::string, std::int64_t, std::less<>> loop_terms;
  friend bool operator==(const QuotientTerm&, const QuotientTerm&) = default;
};

/// constant + sum(coefficient * variable) + sum(quotient terms): an element index along one
/// array dimension (or a guarded value).
struct AffineIndex {
  std::int64_t constant = 0;
  std::map<IndexVar, std::int64_t> thread_terms; ///< threadIdx / blockIdx coefficients
  std::map<std::string, std::int64_t, std::less<>> loop_terms; ///< loop-variable coefficients
  std::vector<QuotientTerm> quotient_terms;
  friend bool operator==(const AffineIndex&, const AffineIndex&) = default;
};

struct ArrayDecl {
  std::string name;
  MemorySpace space = MemorySpace::global;
  int element_bytes = 4;
  std::vector<std::int64_t> extents; ///< slowest first (row-major)
  friend bool operator==(const ArrayDecl&, const ArrayDecl&) = default;
};

/// A lane takes part only while lower <= value < upper (e.g. a stencil's interior test).
struct Guard {
  AffineIndex value;
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  friend bool operator==(const Guard&, const Guard&) = default;
};

struct Access {
  std::string array;
  bool is_store = false;
  std::vector<AffineIndex> index; ///< one per array dimension
  int vector_elements = 1;        ///< contiguous elements per thread access (1, 2, 4, 8)
  bool predicated = true;         ///< lanes whose index leaves the array issue nothing
  std::vector<Guard> guards;      ///< further conditions a lane must meet to issue
  friend bool operator==(const Access&, const Access&) = default;
};

struct Loop {
  std::string name;
  std::int64_t begin = 0;
  std::int64_t end = 1; ///< exclusive
  std::int64_t step = 1;
  /// A block index (block_x/y/z): blocks whose index along it is odd take the loop's values in
  /// reverse order (stencil3d's odd chunks walk down their planes). A phase's loops only.
  std::optional<IndexVar> reversed_where_odd;
  std::int64_t trip_count() const { return step > 0 && end > begin ? (end - begin + step - 1) / step : 0; }
  friend bool operator==(const Loop&, const Loop&) = default;
};

/// Accesses inside a nest of loops (outermost first), executed in order by every thread;
/// a block-wide barrier separates consecutive phases.
struct Phase {
  std::vector<Loop> loops;
  std::vector<Access> accesses;
  friend bool operator==(const Phase&, const Phase&) = default;
};

/// Runs phases [first_phase, first_phase + phase_count) once per value of `loop`, in order
/// (gemm's k-steps); the loop variable is visible to those phases' accesses. Phase loops do
/// not nest or overlap.
struct PhaseLoop {
  Loop loop;
  std::size_t first_phase = 0;
  std::size_t phase_count = 0;
  friend bool operator==(const PhaseLoop&, const PhaseLoop&) = default;
};

/// The most independent loads a thread can keep outstanding that a pattern may declare.
inline constexpr std::int64_t kMaxLoadsInFlight = 256;
/// The most rounds per block a profile's block_walk_slowdown may name.
inline constexpr std::int64_t kMaxBlockWalkRounds = 1 << 20;
/// The longest write run (bytes) a profile's spread_write_slowdown may name.
inline constexpr std::int64_t kMaxSpreadRunBytes = 1 << 20;

struct KernelPattern {
  std::string name;
  Dim3 grid;
  Dim3 block;
  std::vector<ArrayDecl> arrays;
  std::vector<Phase> phases;
  std::vector<PhaseLoop> phase_loops;
  std::int64_t registers_per_thread = 32; ///< estimate, for occupancy
  std::int64_t loads_in_flight = 4;       ///< independent global loads a thread keeps outstanding (latency chain)
  std::int64_t store_burst = 1;           ///< global stores a thread issues back to back after the loads they need
  double flops = 0.0;                     ///< f32-equivalent arithmetic (an f64 flop counts 2), for the time estimate
  /// Warp instructions of the whole kernel beyond its global and shared accesses and one FMA per
  /// 2 x 32 flops: address arithmetic, loop control, conversions. They take issue slots.
  double overhead_instructions = 0.0;
  std::int64_t useful_bytes = 0;          ///< each input read once, each output written once
  friend bool operator==(const KernelPattern&, const KernelPattern&) = default;
};

/// Checks internal consistency (arrays named, index ranks, loop steps, phase loops, sizes);
/// throws InputError naming the place ("pattern.phases[0].accesses[1].array: ...").
void validate_pattern(const KernelPattern& pattern);

/// Shared memory the pattern declares per block, in bytes.
std::int64_t shared_bytes_per_block(const KernelPattern& pattern);

/// Reads a custom pattern (docs/pattern-format.md); errors name the JSON path ("pattern.arrays[1].extents: ...").
KernelPattern pattern_from_json(const nlohmann::json& json);
nlohmann::json pattern_to_json(const KernelPattern& pattern);
KernelPattern load_pattern(const std::filesystem::path& path);

// ---------------------------------------------------------------------------------------
// Built-in families: ProblemSpec + Config -> KernelPattern.
// ---------------------------------------------------------------------------------------

struct FamilyInfo {
  std::string name;
  std::string summary;
  std::vector<std::string> config_keys; ///< every key build_pattern reads
  std::vector<std::string> size_keys;   ///< which of n, m, k the family reads
};

const std::vector<FamilyInfo>& families();
/// Throws InputError "unknown pattern 'x' (valid: copy, gemm, ...)".
const FamilyInfo& family_info(std::string_view name);

/// Throws InputError for an unknown family, a size <= 0, or sizes whose byte counts overflow
/// 64-bit integers: everything about the problem that no config can fix.
void check_problem(const ProblemSpec& problem);

/// Builds the pattern; throws InputError for an unknown family, a missing or unknown config
/// key, a config breaking the family's rules, or sizes that overflow 64-bit byte counts.
KernelPattern build_pattern(const ProblemSpec& problem, const Config& config);

/// Throws InputError naming the limit when the pattern cannot launch on the device
/// (threads per block, shared memory per block, registers, ...).
void check_fits_device(const KernelPattern& pattern, const DeviceProfile& profile);

/// Resident blocks per SM for the pattern on the device (0 if it cannot launch).
int blocks_per_sm(const KernelPattern& pattern, const DeviceProfile& profile);

// ---------------------------------------------------------------------------------------
// Simulation.
// ---------------------------------------------------------------------------------------

struct SimulationOptions {
  /// Steady-state sampling (docs/model.md): once this much work (warp instructions plus the
  /// cache lines they touch) has been simulated, stop after the current wave and scale the
  /// counts to all blocks; when one wave alone is over budget, simulate part of it (the same
  /// number of blocks per SM); a phase loop (gemm's k-steps) longer than the budget allows is
  /// cut to its first iterations the same way. 0 = simulate everything exactly. The default
  /// keeps one candidate of an n=4096 transpose well under 50 ms; tests bound the error.
  std::int64_t work_budget = std::int64_t{1} << 17;
  /// 0 = no extra limit; otherwise also cap the simulated blocks (rounded up to whole waves).
  std::int64_t max_simulated_blocks = 0;
  /// Screening (0 = off): simulate as if the device had only this many SMs, with the L2
  /// capacity scaled by this / sm_count, and scale the counts to all blocks. A wave then
  /// needs only this many blocks instead of one per SM, so a candidate costs a fraction of a
  /// full simulation; counters stay within the bounds of tests/model/screening_test.cpp, and
  /// the prediction is marked sampled. The advisor ranks with it, then refines the best.
  int simulated_sm_count = 0;
};

struct Prediction {
  /// Counts and rates keyed by CUPTI metric names, e.g. "l1tex__t_sector_hit_rate.pct",
  /// "lts__t_sectors_op_read.sum", "dram__bytes_read.sum",
  /// "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum".
  std::map<std::string, double, std::less<>> metrics;
  double time_us = 0.0;
  std::string bottleneck; ///< "dram", "l2", "l1", "shared", "latency", ...
  double achieved_bandwidth_gb_per_s = 0.0; ///< useful_bytes / time
  int blocks_per_sm = 0;
  std::int64_t grid_blocks = 0; ///< blocks the kernel launches
  int warps_per_block = 0;
  std::int64_t waves = 0;
  /// The time terms combined into time_us, keyed like `bottleneck` ("dram", "l2", "l1",
  /// "shared", "compute", "latency", "issue"), plus "launch" and "loaded_latency" (the latency
  /// chain under load, which the estimate uses; never the bottleneck).
  std::map<std::string, double, std::less<>> time_terms_us;
  bool sampled = false;
  double simulated_fraction = 1.0; ///< simulated blocks x loop iterations / all of them
  /// Global stores in spread runs (a warp's consecutive lines of a row that the blocks around it
  /// do not continue, docs/model.md "Session 10"): their share of the stored lines, their mean
  /// run (bytes, by line), and the factor the profile's spread_write_slowdown put on DRAM time.
  double spread_write_fraction = 0.0;
  double spread_write_run_bytes = 0.0;
  double spread_write_factor = 1.0;
  double metric(std::string_view name) const; ///< throws InputError when absent
};

Prediction simulate(const KernelPattern& pattern, const DeviceProfile& profile, const SimulationOptions& options = {});
nlohmann::json prediction_to_json(const Prediction& prediction);

} // namespace cachewise
