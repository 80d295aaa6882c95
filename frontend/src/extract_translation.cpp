// Blocks by translation: which kernels allow it (a dataflow pass over the lowered code), the
// preparation (a reference block, its neighbours, the grid's corners) and the translation.
#include "extract_translation.hpp"

#include <algorithm>
#include <bit>

#include "cachewise/model.hpp"
#include "extract_warp.hpp"

namespace cachewise::frontend {
namespace {

/// Per register: whether its value may depend on the block index.
using FromBlock = std::vector<std::uint8_t>;

bool carries(const FromBlock& from_block, std::int32_t reg) {
  return reg >= 0 && from_block[static_cast<std::size_t>(reg)] != 0;
}

bool carries(const FromBlock& from_block, const Source& source) {
  return source.kind == Source::Kind::reg && carries(from_block, source.reg);
}

/// Whether the instruction's destinations depend on the block index, given which of its operands
/// do; sets `problem` when the instruction is one the translation cannot carry.
bool result_depends(const Program& program, const Instr& instr, const FromBlock& from_block, std::string& problem) {
  std::array<bool, 5> source{};
  bool any_source = false;
  for (int i = 0; i < instr.src_count; ++i) {
    source[static_cast<std::size_t>(i)] = carries(from_block, instr.src[static_cast<std::size_t>(i)]);
    any_source |= source[static_cast<std::size_t>(i)];
  }
  const bool address = carries(from_block, instr.address.reg) ||
                       (instr.op == Op::async_copy && carries(from_block, instr.source_address.reg));
  if (carries(from_block, instr.guard)) problem = "a guard";
  if (!any_source && !address) return false;
  switch (instr.op) {
  case Op::load:
  case Op::store:
  case Op::atomic:
  case Op::async_copy:
    // A generic address picks its window lane by lane; a declared buffer's values feed decisions.
    if (address && instr.generic) problem = "a generic address";
    if (address && instr.op != Op::store && !program.args.contents.empty()) problem = "a read of declared contents";
    return false; // stored values are not traced; loaded ones are data
  case Op::data:
    if (address && instr.reads_constant) problem = "a constant-memory address"; // its distinct addresses count
    return false;
  case Op::mov:
    if (instr.dst_count != instr.src_count) problem = "a split or packed register";
    return true;
  case Op::add:
  case Op::sub:
  case Op::neg:
  case Op::cvt:
  case Op::to_generic:
  case Op::from_generic: return true;
  case Op::mul_lo:
  case Op::mul_wide:
  case Op::mad_lo:
  case Op::mad_wide:
    if (source[0] && source[1]) problem = "a product of two such values";
    return true;
  case Op::shl:
    if (source[1]) problem = "a shift amount";
    return true;
  case Op::selp:
    if (source[2]) problem = "a selection";
    return true;
  case Op::shfl:
    if (source[1] || source[2] || source[3] || source[4]) problem = "a shuffle's lane";
    return source[0];
  case Op::setp: problem = "a comparison"; return false;
  default: problem = "an operation other than addition, multiplication or shift"; return false;
  }
}

/// Whether two traces differ in anything but the active lanes' addresses.
bool same_shape(const BlockTrace& a, const BlockTrace& b) {
  if (a.warps.size() != b.warps.size()) return false;
  for (std::size_t w = 0; w < a.warps.size(); ++w) {
    const WarpTrace& x = a.warps[w];
    const WarpTrace& y = b.warps[w];
    if (x.steps.size() != y.steps.size() || x.warp_instructions != y.warp_instructions || x.flops != y.flops ||
        x.register_divisions != y.register_divisions || x.constant_requests != y.constant_requests)
      return false;
    for (std::size_t s = 0; s < x.steps.size(); ++s) {
      const TraceStep& p = x.steps[s];
      const TraceStep& q = y.steps[s];
      if (p.kind != q.kind || p.space != q.space || p.op != q.op || p.bytes_per_lane != q.bytes_per_lane ||
          p.active_mask != q.active_mask || p.instruction != q.instruction || p.weight != q.weight)
        return false;
    }
  }
  return true;
}

bool same_addresses(const BlockTrace& a, const BlockTrace& b) {
  for (std::size_t w = 0; w < a.warps.size(); ++w) {
    for (std::size_t s = 0; s < a.warps[w].steps.size(); ++s) {
      const TraceStep& p = a.warps[w].steps[s];
      const TraceStep& q = b.warps[w].steps[s];
      bool same = true;
      for_lanes(p.active_mask, [&](int lane) { same &= p.address[lane] == q.address[lane]; });
      if (!same) return false;
    }
  }
  return true;
}

bool same_tally(const std::map<std::int32_t, LoopTally>& a, const std::map<std::int32_t, LoopTally>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.first == y.first && x.second.runs == y.second.runs &&
           x.second.trips_interpreted == y.second.trips_interpreted && x.second.trips_skipped == y.second.trips_skipped;
  });
}

/// The grid's axes longer than one block.
std::vector<int> moving_axes(const Dim3& grid) {
  std::vector<int> axes;
  const std::array<std::int64_t, 3> extent{grid.x, grid.y, grid.z};
  for (int axis = 0; axis < 3; ++axis)
    if (extent[static_cast<std::size_t>(axis)] > 1) axes.push_back(axis);
  return axes;
}

/// The buffer holding [first, first + bytes), or nullptr.
const TraceBuffer* buffer_holding(const std::vector<TraceBuffer>& buffers, std::uint64_t first, std::uint64_t bytes) {
  for (const TraceBuffer& buffer : buffers)
    if (first >= buffer.base_address && first + bytes > first &&
        first + bytes <= buffer.base_address + static_cast<std::uint64_t>(buffer.bytes))
      return &buffer;
  return nullptr;
}

} // namespace

std::string block_index_dependence(const Program& program) {
  FromBlock from_block(static_cast<std::size_t>(program.register_count), 0);
  for (const Special special : {Special::ctaid_x, Special::ctaid_y, Special::ctaid_z})
    from_block[static_cast<std::size_t>(program.special_base + static_cast<std::int32_t>(special))] = 1;
  // Registers are written in loops, so the marks spread until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (const Instr& instr : program.code) {
      std::string problem;
      const bool depends = result_depends(program, instr, from_block, problem);
      if (!problem.empty())
        return program.where(instr.source) + ": " + problem + " depends on the block index (" +
               program.text(instr.source) + ")";
      if (!depends) continue;
      const auto mark = [&](std::int32_t reg) {
        if (reg < 0 || from_block[static_cast<std::size_t>(reg)]) return;
        from_block[static_cast<std::size_t>(reg)] = 1;
        changed = true;
      };
      for (int d = 0; d < instr.dst_count; ++d) mark(instr.dst[static_cast<std::size_t>(d)]);
      if (instr.op != Op::shfl) mark(instr.dst2); // shfl's second destination: whether the source lane was in range
    }
  }
  return {};
}

std::int64_t translation_preparation_blocks(const Dim3& grid) {
  const auto axes = static_cast<std::int64_t>(moving_axes(grid).size());
  return 1 + axes + (std::int64_t{1} << axes);
}

std::unique_ptr<const BlockTranslation> BlockTranslation::prepare(const Program& program) {
  const Dim3& grid = program.args.grid;
  const std::array<std::int64_t, 3> extent{grid.x, grid.y, grid.z};
  const std::array<std::int64_t, 3> middle{grid.x / 2, grid.y / 2, grid.z / 2};
  auto translation = std::unique_ptr<BlockTranslation>(new BlockTranslation());
  try {
    translation->reference_ = interpret_block(program, middle);
    translation->shared_reference_ = std::make_shared<const BlockTrace>(std::move(translation->reference_.trace));
    const BlockTrace& reference = *translation->shared_reference_;
    // Each access's step per block along each axis, from the neighbour along it (one
    // neighbour held at a time: a block's trace may be large).
    std::vector<MovingAccess> accesses;
    for (std::size_t w = 0; w < reference.warps.size(); ++w)
      for (std::size_t s = 0; s < reference.warps[w].steps.size(); ++s) accesses.push_back({w, s, {}, {-1, -1, -1}});
    std::vector<bool> moves(accesses.size(), false);
    for (const int axis : moving_axes(grid)) {
      std::array<std::int64_t, 3> neighbour = middle;
      const auto a = static_cast<std::size_t>(axis);
      const bool ahead = middle[a] + 1 < extent[a];
      neighbour[a] += ahead ? 1 : -1;
      const BlockTrace next = interpret_block(program, neighbour).trace;
      if (!same_shape(reference, next)) return nullptr;
      for (std::size_t i = 0; i < accesses.size(); ++i) {
        MovingAccess& access = accesses[i];
        const TraceStep& here = reference.warps[access.warp].steps[access.step];
        const TraceStep& there = next.warps[access.warp].steps[access.step];
        if (here.active_mask == 0) continue;
        std::array<std::uint64_t, 32> lanes{};
        for_lanes(here.active_mask, [&](int lane) {
          const std::uint64_t difference = there.address[lane] - here.address[lane];
          lanes[static_cast<std::size_t>(lane)] = ahead ? difference : std::uint64_t{0} - difference;
        });
        const std::uint64_t first = lanes[static_cast<std::size_t>(std::countr_zero(here.active_mask))];
        bool uniform = true;
        for_lanes(here.active_mask, [&](int lane) { uniform &= lanes[lane] == first; });
        if (!uniform || first != 0) moves[i] = true;
        if (uniform) {
          access.step_per_block[a] = first;
        } else {
          access.lane_steps[a] = static_cast<std::int32_t>(translation->lane_steps_.size());
          translation->lane_steps_.push_back(lanes);
        }
      }
    }
    for (std::size_t i = 0; i < accesses.size(); ++i)
      if (moves[i]) translation->moving_.push_back(accesses[i]);
    // The corners: an address linear in the block index inside the grid is so at its corners.
    const std::vector<int> axes = moving_axes(grid);
    for (std::uint32_t corner = 0; corner < (1u << axes.size()); ++corner) {
      std::array<std::int64_t, 3> index{0, 0, 0};
      for (std::size_t i = 0; i < axes.size(); ++i) {
        const auto a = static_cast<std::size_t>(axes[i]);
        index[a] = (corner >> i & 1u) != 0 ? extent[a] - 1 : 0;
      }
      const InterpretedBlock interpreted = interpret_block(program, index);
      const std::optional<BlockTrace> translated = translation->translate(program, index);
      if (!translated || !same_shape(interpreted.trace, *translated) ||
          !same_addresses(interpreted.trace, *translated) ||
          interpreted.max_loads_in_flight != translation->reference_.max_loads_in_flight ||
          !same_tally(interpreted.loop_tally, translation->reference_.loop_tally))
        return nullptr;
    }
  } catch (const InputError&) {
    return nullptr; // a block that cannot be traced is interpreted when asked for, and reports why
  }
  translation->share_uniform_steps(program);
  return translation;
}

void BlockTranslation::share_uniform_steps(const Program& program) {
  const Dim3& grid = program.args.grid;
  const std::array<std::int64_t, 3> extent{grid.x, grid.y, grid.z};
  const std::vector<int> axes = moving_axes(grid);
  const BlockTrace& reference = *shared_reference_;
  std::vector<std::size_t> first_step; // per warp: its first step's index over the block
  std::size_t steps = 0;
  for (const WarpTrace& warp : reference.warps) {
    first_step.push_back(steps);
    steps += warp.steps.size();
  }
  auto uniform = std::make_shared<std::vector<std::array<std::int64_t, 3>>>(steps);
  for (const MovingAccess& access : moving_) {
    const TraceStep& step = reference.warps[access.warp].steps[access.step];
    std::array<std::int64_t, 3>& moves = (*uniform)[first_step[access.warp] + access.step];
    for (std::size_t a = 0; a < 3; ++a) {
      if (access.lane_steps[a] >= 0 || access.step_per_block[a] % step.bytes_per_lane != 0) return;
      moves[a] = static_cast<std::int64_t>(access.step_per_block[a]);
    }
    if (step.space != TraceSpace::global) continue; // shared memory and the frame are one interval each
    if (program.args.buffers.empty()) return;
    std::uint64_t low = ~std::uint64_t{0}, high = 0;
    for_lanes(step.active_mask, [&](int lane) {
      low = std::min(low, step.address[lane]);
      high = std::max(high, step.address[lane]);
    });
    const TraceBuffer* holder = nullptr;
    for (std::uint32_t corner = 0; corner < (1u << axes.size()); ++corner) {
      std::uint64_t moved = 0;
      for (std::size_t i = 0; i < axes.size(); ++i) {
        const auto a = static_cast<std::size_t>(axes[i]);
        const std::int64_t index = (corner >> i & 1u) != 0 ? extent[a] - 1 : 0;
        moved += static_cast<std::uint64_t>(index - reference.block_index[a]) * access.step_per_block[a];
      }
      const TraceBuffer* buffer = buffer_holding(program.args.buffers, low + moved, high - low + step.bytes_per_lane);
      if (buffer == nullptr || (holder != nullptr && buffer != holder)) return;
      holder = buffer;
    }
  }
  uniform_steps_ = std::move(uniform);
}

std::optional<BlockTrace> BlockTranslation::translate(const Program& program,
                                                      const std::array<std::int64_t, 3>& block_index) const {
  BlockTrace trace = *shared_reference_;
  trace.block_index = block_index;
  std::array<std::uint64_t, 3> offset{};
  for (std::size_t a = 0; a < 3; ++a)
    offset[a] = static_cast<std::uint64_t>(block_index[a] - shared_reference_->block_index[a]);
  for (const MovingAccess& access : moving_) {
    TraceStep& step = trace.warps[access.warp].steps[access.step];
    std::uint64_t uniform = 0;
    for (std::size_t a = 0; a < 3; ++a) {
      if (access.lane_steps[a] < 0) {
        uniform += offset[a] * access.step_per_block[a];
        continue;
      }
      const std::array<std::uint64_t, 32>& lanes = lane_steps_[static_cast<std::size_t>(access.lane_steps[a])];
      for (std::size_t lane = 0; lane < 32; ++lane) step.address[lane] += offset[a] * lanes[lane];
    }
    for (std::uint64_t& address : step.address) address += uniform;
    if (!obviously_in_bounds(program, step.space, step.active_mask, step.address, step.bytes_per_lane))
      return std::nullopt;
  }
  return trace;
}

} // namespace cachewise::frontend
