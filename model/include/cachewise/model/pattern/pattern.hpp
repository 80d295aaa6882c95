// cachewise access patterns (docs/pattern-format.md, docs/pattern-families.md): a kernel's
// arrays and the affine accesses its threads make, phase by phase, with checks and JSON form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/model/errors.hpp"

namespace cachewise {

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
  std::map<IndexVar, std::int64_t> thread_terms;               ///< threadIdx / blockIdx coefficients
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
  std::int64_t useful_bytes = 0; ///< each input read once, each output written once
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

} // namespace cachewise
