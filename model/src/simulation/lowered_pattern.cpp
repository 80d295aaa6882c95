#include "simulation/lowered_pattern.hpp"

#include "cachewise/model/simulation/kernel_trace.hpp"

#include <algorithm>
#include <bit>

namespace cachewise::detail {
namespace {

constexpr std::int64_t kGlobalBaseBytes = std::int64_t{1} << 30;
constexpr std::int64_t kGlobalAlignmentBytes = std::int64_t{1} << 20;
constexpr std::int64_t kSharedAlignmentBytes = 128;

std::int64_t round_up(std::int64_t value, std::int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::int64_t array_bytes(const ArrayDecl& array) {
  std::int64_t bytes = array.element_bytes;
  for (const std::int64_t extent : array.extents) bytes *= extent;
  return bytes;
}

class Lowerer {
public:
  explicit Lowerer(const KernelPattern& pattern) : pattern_(pattern) {
    out_.grid = {pattern.grid.x, pattern.grid.y, pattern.grid.z};
    out_.block = {pattern.block.x, pattern.block.y, pattern.block.z};
    const std::int64_t threads = pattern.block.count();
    out_.warps_per_block = static_cast<int>((threads + kWarpLanes - 1) / kWarpLanes);
    for (int warp = 0; warp < out_.warps_per_block; ++warp) {
      std::uint32_t present = 0;
      for (int lane = 0; lane < kWarpLanes; ++lane) {
        if (warp * kWarpLanes + lane < threads) present |= 1u << lane;
      }
      out_.lanes_present.push_back(present);
    }
    // Table 0 is all zeros: expressions without thread terms point at it.
    out_.lane_values.assign(static_cast<std::size_t>(out_.warps_per_block * kWarpLanes), 0);
    const std::int64_t bx = pattern.block.x;
    const std::int64_t by = pattern.block.y;
    for (std::int64_t t = 0; t < out_.warps_per_block * std::int64_t{kWarpLanes}; ++t) {
      thread_x_.push_back(t % bx);
      thread_y_.push_back((t / bx) % by);
      thread_z_.push_back(t / (bx * by));
      thread_linear_.push_back(t);
    }
  }

  LoweredPattern run() {
    place_arrays();
    out_.phase_loops = pattern_.phase_loops;
    for (std::size_t p = 0; p < pattern_.phases.size(); ++p) out_.phases.push_back(lower_phase(p));
    return std::move(out_);
  }

private:
  void place_arrays() {
    bases_ = global_array_bases(pattern_);
    std::int64_t shared_next = 0;
    for (std::size_t a = 0; a < pattern_.arrays.size(); ++a) {
      const ArrayDecl& array = pattern_.arrays[a];
      if (array.space == MemorySpace::global) continue;
      bases_[a] = shared_next;
      shared_next = round_up(shared_next + array_bytes(array), kSharedAlignmentBytes);
    }
    out_.array_base_bytes = bases_;
  }

  /// Per-lane value of the thread terms, appended as a new table (or the zero table).
  std::size_t lane_table(const std::map<IndexVar, std::int64_t>& terms) {
    bool any = false;
    for (const auto& [variable, coefficient] : terms) {
      if (variable != IndexVar::block_x && variable != IndexVar::block_y && variable != IndexVar::block_z &&
          coefficient != 0) {
        any = true;
      }
    }
    if (!any) return 0;
    const std::size_t offset = out_.lane_values.size();
    const std::size_t lanes = thread_x_.size();
    out_.lane_values.resize(offset + lanes, 0);
    std::int64_t* sums = out_.lane_values.data() + offset;
    for (const auto& [variable, coefficient] : terms) {
      const std::vector<std::int64_t>* values = nullptr;
      switch (variable) {
      case IndexVar::thread_x: values = &thread_x_; break;
      case IndexVar::thread_y: values = &thread_y_; break;
      case IndexVar::thread_z: values = &thread_z_; break;
      case IndexVar::thread_linear: values = &thread_linear_; break;
      case IndexVar::block_x:
      case IndexVar::block_y:
      case IndexVar::block_z: break;
      }
      if (values == nullptr) continue;
      for (std::size_t t = 0; t < lanes; ++t) sums[t] += coefficient * (*values)[t];
    }
    return offset;
  }

  LinearTerm linear(std::int64_t constant, const std::map<IndexVar, std::int64_t>& thread_terms,
                    const std::map<std::string, std::int64_t, std::less<>>& loop_terms, const LoweredPhase& phase) {
    LinearTerm term;
    term.constant = constant;
    for (const auto& [variable, coefficient] : thread_terms) {
      if (variable == IndexVar::block_x) term.block[0] += coefficient;
      if (variable == IndexVar::block_y) term.block[1] += coefficient;
      if (variable == IndexVar::block_z) term.block[2] += coefficient;
    }
    for (const auto& [name, coefficient] : loop_terms) term.loops.emplace_back(slot_of(phase, name), coefficient);
    term.lane_table = lane_table(thread_terms);
    return term;
  }

  LoweredExpr expr(const AffineIndex& index, const LoweredPhase& phase) {
    LoweredExpr out;
    out.linear = linear(index.constant, index.thread_terms, index.loop_terms, phase);
    for (const QuotientTerm& term : index.quotient_terms) {
      const bool uniform = std::all_of(term.thread_terms.begin(), term.thread_terms.end(), [](const auto& entry) {
        return entry.first == IndexVar::block_x || entry.first == IndexVar::block_y || entry.first == IndexVar::block_z;
      });
      LoweredQuotient lowered{linear(term.constant, term.thread_terms, term.loop_terms, phase), term.coefficient,
                              term.divisor, term.modulus};
      const auto power_of_two = [](std::int64_t value) {
        return value > 0 && std::has_single_bit(static_cast<std::uint64_t>(value));
      };
      if (power_of_two(term.divisor))
        lowered.divisor_shift = std::countr_zero(static_cast<std::uint64_t>(term.divisor));
      if (power_of_two(term.modulus)) lowered.modulus_mask = term.modulus - 1;
      (uniform ? out.uniform_quotients : out.quotients).push_back(std::move(lowered));
    }
    return out;
  }

  int slot_of(const LoweredPhase& phase, const std::string& name) const {
    for (std::size_t l = 0; l < phase.loops.size(); ++l) {
      if (phase.loops[l].name == name) return static_cast<int>(l);
    }
    return phase.outer_slot; // validate_pattern guarantees the name is in scope
  }

  LoweredPhase lower_phase(std::size_t index) {
    const Phase& phase = pattern_.phases[index];
    LoweredPhase out;
    out.loops = phase.loops;
    out.outer_slot = static_cast<int>(phase.loops.size());
    for (std::size_t l = 0; l < pattern_.phase_loops.size(); ++l) {
      const PhaseLoop& loop = pattern_.phase_loops[l];
      if (index >= loop.first_phase && index < loop.first_phase + loop.phase_count)
        out.phase_loop = static_cast<int>(l);
    }
    for (const Loop& loop : phase.loops) out.iterations *= loop.trip_count();
    for (const Access& access : phase.accesses) {
      const auto array_index =
          static_cast<std::size_t>(std::find_if(pattern_.arrays.begin(), pattern_.arrays.end(),
                                                [&](const ArrayDecl& a) { return a.name == access.array; }) -
                                   pattern_.arrays.begin());
      const ArrayDecl& array = pattern_.arrays[array_index];
      LoweredAccess lowered;
      lowered.id = out_.access_count++;
      lowered.shared = array.space == MemorySpace::shared;
      lowered.store = access.is_store;
      lowered.predicated = access.predicated;
      lowered.element_bytes = array.element_bytes;
      lowered.vector_elements = access.vector_elements;
      lowered.base_bytes = bases_[array_index];
      lowered.extents = array.extents;
      lowered.strides.assign(array.extents.size(), 1);
      for (std::size_t d = array.extents.size() - 1; d > 0; --d) {
        lowered.strides[d - 1] = lowered.strides[d] * array.extents[d];
      }
      for (const AffineIndex& index_expr : access.index) lowered.dims.push_back(expr(index_expr, out));
      for (const Guard& guard : access.guards)
        lowered.guards.push_back({expr(guard.value, out), guard.lower, guard.upper});
      add_fast_path(lowered);
      out.accesses.push_back(std::move(lowered));
    }
    return out;
  }

  std::pair<std::int64_t, std::int64_t> lane_range(const LinearTerm& term, int warp) const {
    std::int64_t low = INT64_MAX;
    std::int64_t high = INT64_MIN;
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      if ((out_.lanes_present[static_cast<std::size_t>(warp)] >> lane & 1u) == 0) continue;
      const std::int64_t value = out_.lane_values[term.lane_table + static_cast<std::size_t>(warp * kWarpLanes + lane)];
      low = std::min(low, value);
      high = std::max(high, value);
    }
    return {low, high};
  }

  void add_fast_path(LoweredAccess& access) const {
    const auto has_quotients = [](const LoweredExpr& e) { return !e.quotients.empty(); };
    access.affine_only = std::none_of(access.dims.begin(), access.dims.end(), has_quotients) &&
                         std::none_of(access.guards.begin(), access.guards.end(),
                                      [&](const LoweredGuard& g) { return has_quotients(g.value); });
    if (!access.affine_only) return;
    for (int warp = 0; warp < out_.warps_per_block; ++warp) {
      for (int lane = 0; lane < kWarpLanes; ++lane) {
        std::int64_t offset = 0;
        for (std::size_t d = 0; d < access.dims.size(); ++d) {
          offset +=
              access.strides[d] *
              out_.lane_values[access.dims[d].linear.lane_table + static_cast<std::size_t>(warp * kWarpLanes + lane)];
        }
        access.lane_offsets.push_back(offset);
      }
      for (const LoweredExpr& dim : access.dims) access.dim_lane_ranges.push_back(lane_range(dim.linear, warp));
      for (const LoweredGuard& guard : access.guards)
        access.guard_lane_ranges.push_back(lane_range(guard.value.linear, warp));
    }
    const auto block_ranges = [&](const std::vector<std::pair<std::int64_t, std::int64_t>>& per_warp,
                                  std::size_t count) {
      std::vector<std::pair<std::int64_t, std::int64_t>> ranges(count, {INT64_MAX, INT64_MIN});
      for (std::size_t i = 0; i < per_warp.size(); ++i) {
        auto& range = ranges[i % count];
        range = {std::min(range.first, per_warp[i].first), std::max(range.second, per_warp[i].second)};
      }
      return ranges;
    };
    access.dim_block_ranges = block_ranges(access.dim_lane_ranges, access.dims.size());
    access.guard_block_ranges = block_ranges(access.guard_lane_ranges, access.guards.size());
  }

  const KernelPattern& pattern_;
  LoweredPattern out_;
  std::vector<std::int64_t> bases_;
  /// Per thread slot of the block's warps (lanes past the block included): its index variables.
  std::vector<std::int64_t> thread_x_, thread_y_, thread_z_, thread_linear_;
};

} // namespace

LoweredPattern lower_pattern(const KernelPattern& pattern) { return Lowerer(pattern).run(); }

void access_scalars(const LoweredAccess& access, const std::array<std::int64_t, 3>& block_index,
                    const std::int64_t* loop_values, std::vector<std::int64_t>& scalars) {
  scalars.clear();
  auto add = [&](const LoweredExpr& expr) {
    scalars.push_back(expr.scalar(block_index, loop_values));
    for (const LoweredQuotient& term : expr.quotients) scalars.push_back(term.inner.scalar(block_index, loop_values));
  };
  for (const LoweredGuard& guard : access.guards) add(guard.value);
  for (const LoweredExpr& dim : access.dims) add(dim);
}

std::uint32_t lane_addresses(const LoweredPattern& lowered, const LoweredAccess& access, int warp,
                             const std::int64_t* scalars, std::int64_t* addresses) {
  const std::uint32_t present = lowered.lanes_present[static_cast<std::size_t>(warp)];
  const std::int64_t* lane_values = lowered.lane_values.data();
  std::uint32_t active = 0;
  const std::size_t dims = access.dims.size();
  for (int lane = 0; lane < kWarpLanes; ++lane) {
    if ((present >> lane & 1u) == 0) continue;
    const auto lane_index = static_cast<std::size_t>(warp * kWarpLanes + lane);
    const std::int64_t* scalar = scalars;
    bool issues = true;
    for (const LoweredGuard& guard : access.guards) {
      const std::int64_t value = lane_value(guard.value, scalar, lane_values, lane_index);
      scalar += 1 + guard.value.quotients.size();
      if (value < guard.lower || value >= guard.upper) issues = false;
    }
    if (!issues) continue;
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < dims; ++d) {
      const LoweredExpr& dim = access.dims[d];
      const std::int64_t index = lane_value(dim, scalar, lane_values, lane_index);
      scalar += 1 + dim.quotients.size();
      const std::int64_t last = d + 1 == dims ? index + access.vector_elements - 1 : index;
      if (access.predicated && (index < 0 || last >= access.extents[d])) {
        issues = false;
        break;
      }
      offset += index * access.strides[d];
    }
    if (!issues) continue;
    addresses[lane] = access.base_bytes + offset * access.element_bytes;
    active |= 1u << lane;
  }
  return active;
}

bool has_reversed_loops(const LoweredPhase& phase) {
  return std::any_of(phase.loops.begin(), phase.loops.end(),
                     [](const Loop& loop) { return loop.reversed_where_odd.has_value(); });
}

void block_loop_values(const LoweredPhase& phase, const std::array<std::int64_t, 3>& block_index,
                       const std::int64_t* loop_values, std::int64_t* values) {
  std::copy(loop_values, loop_values + phase.loops.size() + 1, values);
  for (std::size_t l = 0; l < phase.loops.size(); ++l) {
    const Loop& loop = phase.loops[l];
    if (!loop.reversed_where_odd) continue;
    const auto axis = static_cast<std::size_t>(*loop.reversed_where_odd) - static_cast<std::size_t>(IndexVar::block_x);
    const std::int64_t last = loop.begin + (loop.trip_count() - 1) * loop.step;
    if (block_index[axis] % 2 != 0) values[l] = loop.begin + last - values[l];
  }
}

void advance_loops(const LoweredPhase& phase, std::vector<std::int64_t>& loop_values) {
  for (std::size_t l = phase.loops.size(); l-- > 0;) {
    loop_values[l] += phase.loops[l].step;
    if (loop_values[l] < phase.loops[l].end) break;
    loop_values[l] = phase.loops[l].begin;
  }
}

} // namespace cachewise::detail

namespace cachewise {

std::vector<std::int64_t> global_array_bases(const KernelPattern& pattern) {
  std::vector<std::int64_t> bases;
  std::int64_t next = detail::kGlobalBaseBytes;
  for (const ArrayDecl& array : pattern.arrays) {
    bases.push_back(array.space == MemorySpace::global ? next : 0);
    if (array.space == MemorySpace::global)
      next = detail::round_up(next + detail::array_bytes(array), detail::kGlobalAlignmentBytes);
  }
  return bases;
}

} // namespace cachewise
