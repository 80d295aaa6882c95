// A KernelPattern lowered for fast simulation: names resolved to slots, thread-dependent
// parts of every index precomputed per (warp, lane), arrays placed at addresses.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cachewise/model/pattern/pattern.hpp"

namespace cachewise::detail {

constexpr int kWarpLanes = 32;

/// constant + block coefficients . blockIdx + loop coefficients . loop values + lane part.
struct LinearTerm {
  std::int64_t constant = 0;
  std::array<std::int64_t, 3> block{};
  std::vector<std::pair<int, std::int64_t>> loops; ///< (loop slot, coefficient)
  std::size_t lane_table = 0;                      ///< offset of warps*32 lane values in LoweredPattern::lane_values

  std::int64_t scalar(const std::array<std::int64_t, 3>& block_index, const std::int64_t* loop_values) const {
    std::int64_t value = constant + block[0] * block_index[0] + block[1] * block_index[1] + block[2] * block_index[2];
    for (const auto& [slot, coefficient] : loops) value += coefficient * loop_values[slot];
    return value;
  }
};

struct LoweredQuotient {
  LinearTerm inner;
  std::int64_t coefficient = 1;
  std::int64_t divisor = 1;
  std::int64_t modulus = 0;
  /// Powers of two (gemm's tile widths): floor division is an arithmetic shift and the
  /// non-negative remainder a mask. -1 when not.
  int divisor_shift = -1;
  std::int64_t modulus_mask = -1;
};

/// coefficient * (floor(inner / divisor) mod modulus).
inline std::int64_t quotient_value(const LoweredQuotient& term, std::int64_t inner) {
  std::int64_t quotient = 0;
  if (term.divisor_shift >= 0) {
    quotient = inner >> term.divisor_shift; // arithmetic: floor for negative values too
  } else {
    quotient = inner / term.divisor;
    if ((inner % term.divisor != 0) && (inner < 0)) --quotient; // floor division
  }
  if (term.modulus > 0) {
    quotient = term.modulus_mask >= 0 ? quotient & term.modulus_mask
                                      : ((quotient % term.modulus) + term.modulus) % term.modulus;
  }
  return term.coefficient * quotient;
}

struct LoweredExpr {
  LinearTerm linear;
  std::vector<LoweredQuotient> quotients; ///< terms that differ between the lanes of a warp
  /// Terms of block indices and loop variables only (stencil3d's odd-chunk offsets): one value
  /// per instruction, added to the linear part's scalar, so the access keeps the fast path.
  std::vector<LoweredQuotient> uniform_quotients;

  /// The lane-independent part for one block and loop values.
  std::int64_t scalar(const std::array<std::int64_t, 3>& block_index, const std::int64_t* loop_values) const {
    std::int64_t value = linear.scalar(block_index, loop_values);
    for (const LoweredQuotient& term : uniform_quotients)
      value += quotient_value(term, term.inner.scalar(block_index, loop_values));
    return value;
  }
};

struct LoweredGuard {
  LoweredExpr value;
  std::int64_t lower = 0;
  std::int64_t upper = 0;
};

struct LoweredAccess {
  std::size_t id = 0; ///< index over all accesses of the pattern
  bool shared = false;
  bool store = false;
  bool predicated = true;
  int element_bytes = 4;
  int vector_elements = 1;
  std::int64_t base_bytes = 0; ///< global address, or offset inside the block's shared memory
  std::vector<LoweredExpr> dims;
  std::vector<std::int64_t> extents;
  std::vector<std::int64_t> strides; ///< elements
  std::vector<LoweredGuard> guards;
  int access_bytes() const { return element_bytes * vector_elements; }

  /// Fast path, for accesses without quotient terms: per (warp, lane) the thread part of the
  /// flat element offset, and per (warp, dim) / (warp, guard) the range [min, max] of the
  /// thread parts over the warp's real lanes. When a whole warp is inside every bound the
  /// addresses are one add per lane.
  bool affine_only = false;
  std::vector<std::int64_t> lane_offsets;
  std::vector<std::pair<std::int64_t, std::int64_t>> dim_lane_ranges;
  std::vector<std::pair<std::int64_t, std::int64_t>> guard_lane_ranges;
  /// The same ranges over every warp of the block (per dim, per guard): when they are inside,
  /// no warp needs its own check.
  std::vector<std::pair<std::int64_t, std::int64_t>> dim_block_ranges;
  std::vector<std::pair<std::int64_t, std::int64_t>> guard_block_ranges;
};

struct LoweredPhase {
  std::vector<Loop> loops;     ///< loop slots 0..loops.size()-1
  int outer_slot = 0;          ///< slot of the enclosing phase loop's variable (== loops.size())
  int phase_loop = -1;         ///< index into KernelPattern::phase_loops, -1 when none encloses it
  std::int64_t iterations = 1; ///< product of the loops' trip counts
  std::vector<LoweredAccess> accesses;
};

struct LoweredPattern {
  std::array<std::int64_t, 3> grid{};
  std::array<std::int64_t, 3> block{};
  int warps_per_block = 1;
  std::vector<std::uint32_t> lanes_present; ///< per warp: lanes that are real threads
  std::vector<std::int64_t> lane_values;    ///< all lane tables, see LinearTerm::lane_table
  std::vector<LoweredPhase> phases;
  std::vector<PhaseLoop> phase_loops;
  std::size_t access_count = 0;
  std::vector<std::int64_t> array_base_bytes; ///< per KernelPattern::arrays: its address (global) or offset (shared)
};

/// Global arrays start 1 MiB-aligned, one after another, from 1 GiB; shared arrays 128 B-aligned from 0.
LoweredPattern lower_pattern(const KernelPattern& pattern);

/// The value of `expr` for one lane, given the per-instruction scalars computed beforehand
/// (`scalars[0]` for the lane-independent part, then one per lane-dependent quotient).
inline std::int64_t lane_value(const LoweredExpr& expr, const std::int64_t* scalars, const std::int64_t* lane_values,
                               std::size_t lane_index) {
  std::int64_t value = scalars[0] + lane_values[expr.linear.lane_table + lane_index];
  for (std::size_t q = 0; q < expr.quotients.size(); ++q) {
    const LoweredQuotient& term = expr.quotients[q];
    value += quotient_value(term, scalars[q + 1] + lane_values[term.inner.lane_table + lane_index]);
  }
  return value;
}

/// The lane-independent values of `access` for one block and the loop values, in the order
/// lane_value reads them: per guard and then per dimension, its scalar and one per lane-dependent quotient.
void access_scalars(const LoweredAccess& access, const std::array<std::int64_t, 3>& block_index,
                    const std::int64_t* loop_values, std::vector<std::int64_t>& scalars);

/// Byte address (global) or offset (shared) in `addresses[lane]` of every lane of `warp` that
/// issues `access` (a real thread, its guards met, inside the array when predicated); returns
/// the mask of those lanes. `scalars` from access_scalars.
std::uint32_t lane_addresses(const LoweredPattern& lowered, const LoweredAccess& access, int warp,
                             const std::int64_t* scalars, std::int64_t* addresses);

/// Whether some loop of the phase runs backwards in some blocks (Loop::reversed_where_odd).
bool has_reversed_loops(const LoweredPhase& phase);

/// The phase's loop values as block `block_index` sees them: `loop_values` with the loops it
/// runs backwards mirrored; `values` holds loops.size() + 1 slots, like `loop_values`.
void block_loop_values(const LoweredPhase& phase, const std::array<std::int64_t, 3>& block_index,
                       const std::int64_t* loop_values, std::int64_t* values);

/// The next iteration's loop values (odometer step, innermost loop fastest).
void advance_loops(const LoweredPhase& phase, std::vector<std::int64_t>& loop_values);

} // namespace cachewise::detail
