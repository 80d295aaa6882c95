// A traced kernel through the sampler: the blocks of a wave issue their warps' steps
// round-robin (step i of every warp of every block before step i+1), barrier interval by
// barrier interval, through the same coalescer, memory system and bank model as a pattern.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "cachewise/model/simulation/kernel_trace.hpp"
#include "simulation/lane_shape_memo.hpp"
#include "simulation/trace_runner.hpp"
#include "simulation/lowered_pattern.hpp"
#include "simulation/memory_system.hpp"
#include "simulation/sampling.hpp"
#include "simulation/shared_banks.hpp"

namespace cachewise::detail {
namespace {

constexpr std::uint64_t kLocalAlignmentBytes = std::uint64_t{1} << 20;
constexpr std::uint64_t kLowestLocalWindow = std::uint64_t{1} << 30;
constexpr std::uint64_t kLocalWordBytes = 4; // local memory interleaves 4-byte words across threads

std::string hex(std::uint64_t value) {
  std::ostringstream text;
  text << "0x" << std::hex << value;
  return text.str();
}

std::string block_name(const std::array<std::int64_t, 3>& index) {
  return "(" + std::to_string(index[0]) + ", " + std::to_string(index[1]) + ", " + std::to_string(index[2]) + ")";
}

/// The loads a warp has issued since its last wait and the slowest of them.
struct LoadRound {
  std::int64_t loads = 0;
  int slowest_cycles = 0;
};

/// Where one warp is in its trace and what it has open.
struct WarpState {
  std::size_t cursor = 0; ///< into its block's steps
  std::size_t end = 0;
  LoadRound round;
  double store_run = 0; ///< global stores since the warp's last global load (weighted, TraceStep::weight)
};

/// A trace step as the runner keeps it for the wave: 24 bytes instead of a TraceStep's 272,
/// the lanes' offsets interned as a shape.
struct CompactStep {
  TraceStep::Kind kind = TraceStep::Kind::access;
  TraceSpace space = TraceSpace::global;
  TraceOp op = TraceOp::load;
  std::uint8_t bytes = 4;
  bool idle = false;       ///< an access no lane issues: it takes its slot, nothing more
  std::uint32_t shape = 0; ///< LaneShapes id (accesses with active lanes)
  std::uint64_t base = 0;  ///< address (global), offset (shared, local) of the first active lane
  float weight = 1.0F;     ///< TraceStep::weight
};

/// A reference block (TranslatedBlock) compacted once for every block moved from it.
struct CompactReference {
  std::shared_ptr<const BlockTrace> trace; ///< kept alive: its address identifies the reference
  std::shared_ptr<const std::vector<std::array<std::int64_t, 3>>> step_per_block;
  std::vector<CompactStep> steps;
  std::vector<std::size_t> warp_end; ///< per warp: the end of its steps (the previous warp's end begins them)
  std::vector<WarpTrace> totals;     ///< per warp: its counts, no steps
  /// Per step: the active lanes' lowest address and highest end, for the moved span's check.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> span;
};

/// A block of the wave: its warps' steps one after another (WarpState says where each lies),
/// its own or, translated, a reference's moved by `offset` blocks.
struct CompactBlock {
  std::vector<CompactStep> steps;
  const CompactReference* reference = nullptr;
  std::array<std::int64_t, 3> offset{};

  const std::vector<CompactStep>& compact_steps() const { return reference ? reference->steps : steps; }
  /// How far step `at`'s lanes move from the reference's (0 for a block of its own).
  std::uint64_t move(std::size_t at) const {
    if (!reference) return 0;
    const std::array<std::int64_t, 3>& step = (*reference->step_per_block)[at];
    std::uint64_t moved = 0;
    for (std::size_t a = 0; a < 3; ++a)
      moved += static_cast<std::uint64_t>(offset[a]) * static_cast<std::uint64_t>(step[a]);
    return moved;
  }
};

class TraceRunner final : public WaveExecutor {
public:
  TraceRunner(const TracedKernel& kernel, const TraceLayout& layout, const DeviceProfile& profile, MemorySystem& memory)
      : kernel_(kernel),
        layout_(layout),
        memory_(memory),
        dram_latency_cycles_(static_cast<int>(profile.dram.latency_cycles.value)),
        banks_(static_cast<int>(profile.shared_memory.banks.value)),
        bank_width_bytes_(static_cast<int>(profile.shared_memory.bank_width_bytes.value)),
        coalescer_(memory.line_shift(), memory.sector_bytes()),
        line_memo_(std::uint64_t{1} << memory.line_shift()),
        wavefront_memo_(static_cast<std::uint64_t>(banks_) * static_cast<std::uint64_t>(bank_width_bytes_)) {}

  std::int64_t work() const override { return static_cast<std::int64_t>(work_); }
  void set_skip_shared(bool skip) override { skip_shared_ = skip; }

  void run_wave(const std::vector<WaveBlock>& blocks, WaveCounts& counts, std::vector<StoredLine>* stored) override {
    stored_ = stored;
    if (shapes_.size() > kMaxShapes) forget_shapes();
    if (blocks_.size() < blocks.size()) blocks_.resize(blocks.size());
    warps_.assign(blocks.size() * static_cast<std::size_t>(layout_.warps_per_block), WarpState{});
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      std::optional<TranslatedBlock> translated;
      if (kernel_.translate_block) translated = kernel_.translate_block(blocks[b].index);
      if (!translated || !move_reference(*translated, blocks[b].index, b, counts.trace))
        compact(kernel_.trace_block(blocks[b].index), blocks[b].index, b, counts.trace);
    }
    for (std::size_t phase = 0; start_phase(phase, blocks.size(), counts); ++phase) {
      PhaseCounts& stats = counts.phases[phase];
      for (bool issued = true; issued;) {
        issued = false;
        for (std::size_t b = 0; b < blocks.size(); ++b) {
          for (int warp = 0; warp < layout_.warps_per_block; ++warp)
            issued |= issue_next(blocks[b], b, warp, counts, stats);
        }
      }
      end_phase(phase, blocks.size(), counts.trace, stats);
    }
    for (WarpState& warp_state : warps_) close_store_run(warp_state.store_run, counts.trace, 1.0);
    stored_ = nullptr;
  }

private:
  /// Shapes of earlier waves are no longer referenced: past this many (about 20 MB) they and
  /// the memos keyed by them go, so scattered accesses cannot grow the table without end.
  static constexpr std::size_t kMaxShapes = std::size_t{1} << 16;

  void forget_shapes() {
    references_.clear(); // their steps name shapes
    shapes_.clear();
    line_memo_.clear();
    wavefront_memo_.clear();
  }

  /// A warp's instructions, divisions, constant requests and flops.
  static void tally_counts(const WarpTrace& warp, TraceTally& tally) {
    tally.warp_instructions += warp.warp_instructions;
    tally.register_divisions += warp.register_divisions;
    tally.constant_requests += warp.constant_requests;
    tally.flops += warp.flops;
  }

  /// Checks the block's trace (warps, lane widths, buffers, frame), tallies its instructions
  /// and keeps it compact in slot `slot`, while it is still in cache.
  void compact(const BlockTrace& trace, const std::array<std::int64_t, 3>& index, std::size_t slot, TraceTally& tally) {
    if (trace.warps.size() != static_cast<std::size_t>(layout_.warps_per_block)) {
      throw InputError("trace of block " + block_name(index) + " of kernel '" + kernel_.name + "' has " +
                       std::to_string(trace.warps.size()) + " warps; its " + std::to_string(layout_.threads_per_block) +
                       " threads make " + std::to_string(layout_.warps_per_block));
    }
    CompactBlock& block = blocks_[slot];
    block.reference = nullptr;
    block.steps.clear();
    std::size_t steps = 0;
    for (const WarpTrace& warp : trace.warps) steps += warp.steps.size();
    block.steps.reserve(steps);
    for (std::size_t w = 0; w < trace.warps.size(); ++w) {
      const WarpTrace& warp = trace.warps[w];
      tally_counts(warp, tally);
      WarpState& warp_state = state(slot, static_cast<int>(w));
      warp_state.cursor = block.steps.size();
      for (const TraceStep& step : warp.steps) {
        if (!(step.weight >= 1.0F) || !std::isfinite(step.weight)) {
          throw InputError(describe(step, index, static_cast<int>(w)) + " has weight " + std::to_string(step.weight) +
                           "; expected a finite weight >= 1");
        }
        CompactStep compact{step.kind, step.space, step.op,    step.bytes_per_lane, step.active_mask == 0,
                            0,         0,          step.weight};
        if (step.kind == TraceStep::Kind::access && step.active_mask != 0) {
          check_step(step, index, static_cast<int>(w));
          compact.shape = shapes_.intern(step.address, step.active_mask, step.bytes_per_lane, step.instruction);
          compact.base = step.address[static_cast<std::size_t>(std::countr_zero(step.active_mask))];
        }
        block.steps.push_back(compact);
      }
      warp_state.end = block.steps.size();
    }
  }

  /// Puts a translated block in slot `slot`: its reference compacted (once), its counts tallied.
  /// False when a moved global or local access's span leaves the buffer or frame: the block is
  /// then traced whole, and its checks name the access.
  bool move_reference(const TranslatedBlock& translated, const std::array<std::int64_t, 3>& index, std::size_t slot,
                      TraceTally& tally) {
    const CompactReference& reference = compact_reference(translated);
    std::array<std::int64_t, 3> offset{};
    for (std::size_t a = 0; a < 3; ++a) offset[a] = index[a] - reference.trace->block_index[a];
    CompactBlock& block = blocks_[slot];
    block.reference = &reference;
    block.offset = offset;
    for (std::size_t at = 0; at < reference.steps.size(); ++at) {
      const CompactStep& step = reference.steps[at];
      if (step.kind != TraceStep::Kind::access || step.idle || step.space == TraceSpace::shared) continue;
      const std::uint64_t moved = block.move(at);
      if (moved == 0) continue;
      const auto [low, end] = reference.span[at];
      const std::uint64_t first = low + moved;
      const std::uint64_t bytes = end - low;
      const bool inside = first + bytes > first && // the moved span does not wrap past 2^64
                          (step.space == TraceSpace::global
                               ? inside_a_buffer(first, bytes)
                               : first + bytes <= static_cast<std::uint64_t>(kernel_.local_bytes_per_thread));
      if (!inside) return false;
    }
    std::size_t begin = 0;
    for (std::size_t w = 0; w < reference.totals.size(); ++w) {
      tally_counts(reference.totals[w], tally);
      WarpState& warp_state = state(slot, static_cast<int>(w));
      warp_state.cursor = begin;
      warp_state.end = begin = reference.warp_end[w];
    }
    return true;
  }

  /// The reference's compact steps, made (and checked) on its first use.
  const CompactReference& compact_reference(const TranslatedBlock& translated) {
    for (const std::unique_ptr<CompactReference>& known : references_)
      if (known->trace == translated.reference) return *known;
    const BlockTrace& trace = *translated.reference;
    std::size_t steps = 0;
    for (const WarpTrace& warp : trace.warps) steps += warp.steps.size();
    if (!translated.step_per_block || translated.step_per_block->size() != steps)
      throw InputError("translated block of kernel '" + kernel_.name + "': " + std::to_string(steps) +
                       " steps in its reference, a step per block for " +
                       std::to_string(translated.step_per_block ? translated.step_per_block->size() : 0));
    // Compacted in slot 0's storage, then moved out: compact() does the checks and interning.
    TraceTally scratch;
    CompactBlock& slot = blocks_[0];
    std::vector<CompactStep> kept = std::move(slot.steps);
    const CompactReference* kept_reference = slot.reference;
    const std::array<std::int64_t, 3> kept_offset = slot.offset;
    std::vector<WarpState> kept_states(warps_.begin(), warps_.begin() + layout_.warps_per_block);
    compact(trace, trace.block_index, 0, scratch);
    auto reference = std::make_unique<CompactReference>();
    reference->trace = translated.reference;
    reference->step_per_block = translated.step_per_block;
    reference->steps = std::move(slot.steps);
    for (int w = 0; w < layout_.warps_per_block; ++w) reference->warp_end.push_back(state(0, w).end);
    for (const WarpTrace& warp : trace.warps) {
      WarpTrace totals;
      totals.warp_instructions = warp.warp_instructions;
      totals.register_divisions = warp.register_divisions;
      totals.constant_requests = warp.constant_requests;
      totals.flops = warp.flops;
      reference->totals.push_back(totals);
      for (const TraceStep& step : warp.steps) {
        std::uint64_t low = ~std::uint64_t{0}, high = 0;
        for (int lane = 0; lane < kWarpLanes; ++lane) {
          if ((step.active_mask >> lane & 1u) == 0) continue;
          low = std::min(low, step.address[static_cast<std::size_t>(lane)]);
          high = std::max(high, step.address[static_cast<std::size_t>(lane)]);
        }
        reference->span.emplace_back(low, high + step.bytes_per_lane);
      }
    }
    slot.steps = std::move(kept);
    slot.reference = kept_reference;
    slot.offset = kept_offset;
    std::copy(kept_states.begin(), kept_states.end(), warps_.begin());
    references_.push_back(std::move(reference));
    return *references_.back();
  }

  void check_step(const TraceStep& step, const std::array<std::int64_t, 3>& index, int warp) {
    const int bytes = step.bytes_per_lane;
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16) {
      throw InputError(describe(step, index, warp) + " moves " + std::to_string(bytes) +
                       " bytes per lane; expected 1, 2, 4, 8 or 16");
    }
    if (step.space == TraceSpace::global) check_inside_buffers(step, index, warp);
    if (step.space == TraceSpace::local) check_inside_frame(step, index, warp);
  }

  WarpState& state(std::size_t block_slot, int warp) {
    return warps_[block_slot * static_cast<std::size_t>(layout_.warps_per_block) + static_cast<std::size_t>(warp)];
  }

  /// Whether some warp has steps left for barrier interval `phase`; counts the blocks reaching
  /// it. Every block runs its first interval, even one without memory accesses.
  bool start_phase(std::size_t phase, std::size_t blocks, WaveCounts& counts) {
    bool any = false;
    for (std::size_t b = 0; b < blocks; ++b) {
      bool reached = phase == 0;
      for (int warp = 0; warp < layout_.warps_per_block; ++warp) reached |= state(b, warp).cursor < state(b, warp).end;
      if (!reached) continue;
      if (counts.phases.size() <= phase) counts.phases.resize(phase + 1);
      if (counts.trace.phase_blocks.size() <= phase) counts.trace.phase_blocks.resize(phase + 1, 0.0);
      counts.trace.phase_blocks[phase] += 1;
      any = true;
    }
    return any;
  }

  /// Every warp is at a barrier or done: its open round closes, and it passes the barrier. A
  /// barrier that stands for several (TraceStep::weight; the first warp's) repeats the interval.
  void end_phase(std::size_t phase, std::size_t blocks, TraceTally& tally, PhaseCounts& stats) {
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::vector<CompactStep>& steps = blocks_[b].compact_steps();
      bool repeats_counted = false;
      for (int warp = 0; warp < layout_.warps_per_block; ++warp) {
        WarpState& warp_state = state(b, warp);
        while (warp_state.cursor < warp_state.end && steps[warp_state.cursor].kind == TraceStep::Kind::wait_loads) {
          ++warp_state.cursor;
        }
        const double weight = warp_state.cursor < warp_state.end ? steps[warp_state.cursor].weight : 1.0;
        close_round(warp_state.round, tally, stats, weight);
        if (warp_state.cursor >= warp_state.end) continue;
        if (!repeats_counted) tally.phase_blocks[phase] += weight - 1.0;
        repeats_counted = true;
        ++warp_state.cursor; // the barrier
      }
    }
  }

  /// The warp's waits up to its next access, then that access; false at a barrier or the end.
  bool issue_next(const WaveBlock& block, std::size_t block_slot, int warp, WaveCounts& counts, PhaseCounts& stats) {
    WarpState& warp_state = state(block_slot, warp);
    const CompactBlock& compact_block = blocks_[block_slot];
    const std::vector<CompactStep>& steps = compact_block.compact_steps();
    while (warp_state.cursor < warp_state.end && steps[warp_state.cursor].kind == TraceStep::Kind::wait_loads) {
      close_round(warp_state.round, counts.trace, stats, steps[warp_state.cursor].weight);
      ++warp_state.cursor;
    }
    if (warp_state.cursor >= warp_state.end || steps[warp_state.cursor].kind != TraceStep::Kind::access) return false;
    const std::size_t at = warp_state.cursor++;
    if (steps[at].idle) return true;
    if (!compact_block.reference) {
      run_access(steps[at], block, block_slot, warp, warp_state, counts, stats);
      return true;
    }
    CompactStep moved = steps[at];
    moved.base += compact_block.move(at);
    run_access(moved, block, block_slot, warp, warp_state, counts, stats);
    return true;
  }

  /// A round closed by a step of weight `weight` (its wait, barrier or end) counts that often.
  void close_round(LoadRound& round, TraceTally& tally, PhaseCounts& stats, double weight) const {
    if (round.loads == 0) return;
    stats.load_rounds += weight;
    stats.round_latency_cycles += weight * round.slowest_cycles;
    if (round.slowest_cycles >= dram_latency_cycles_) stats.dram_round_latency_cycles += weight * round.slowest_cycles;
    tally.load_rounds += weight;
    round = LoadRound{};
  }

  static void close_store_run(double& run, TraceTally& tally, double weight) {
    if (run == 0) return;
    tally.store_runs += weight;
    tally.stores_in_runs += run;
    run = 0;
  }

  void run_access(const CompactStep& step, const WaveBlock& block, std::size_t block_slot, int warp,
                  WarpState& warp_state, WaveCounts& counts, PhaseCounts& stats) {
    const double weight = step.weight;
    stats.warp_instructions += weight;
    work_ += weight; // the work of the executions it stands for: the sample's size is the replay's
    // A step that stands for several counts into a scratch first, scaled by its weight after.
    const bool weighted = weight != 1.0;
    if (weighted) scratch_ = TrafficCounts{};
    TrafficCounts& traffic = weighted ? scratch_ : counts.segments[0];
    int dirtied_sectors = 0;
    if (step.space == TraceSpace::shared) {
      if (!skip_shared_) run_shared(step, traffic, stats, weight);
    } else {
      dirtied_sectors = run_global(step, block, block_slot, warp, warp_state, counts, traffic, weight);
    }
    if (!weighted) return;
    // Write-backs of lines evicted now happen once; the executions the step stands for each dirty
    // as many sectors as it did (a stream's new lines; none where they overwrite the same ones).
    const double evicted_write_bytes = scratch_.dram_write_bytes;
    counts.segments[0].add_scaled(scratch_, weight);
    counts.segments[0].dram_write_bytes +=
        (1.0 - weight) * evicted_write_bytes + (weight - 1.0) * dirtied_sectors * memory_.sector_bytes();
  }

  /// A global or local access; returns the sectors its stores made DRAM write on their own.
  int run_global(const CompactStep& step, const WaveBlock& block, std::size_t block_slot, int warp,
                 WarpState& warp_state, WaveCounts& counts, TrafficCounts& traffic, double weight) {
    std::uint64_t line_base = 0;
    const std::vector<LineRequest>& lines =
        step.space == TraceSpace::global ? global_lines(step, line_base) : local_lines(step, block, warp);
    work_ += weight * static_cast<double>(lines.size());
    if (step.op == TraceOp::atomic && step.space == TraceSpace::global)
      tally_atomic_addresses(step, counts.trace, weight);
    if (step.op != TraceOp::load) {
      traffic.global_store_requests += 1;
      int dirtied_sectors = 0;
      for (LineRequest request : lines) {
        request.line += line_base;
        traffic.global_store_sectors += sector_count(request.sectors);
        dirtied_sectors += memory_.store(block.sm, request, traffic);
        if (stored_ != nullptr)
          stored_->push_back({request.line, static_cast<std::uint32_t>(block_slot), static_cast<std::uint32_t>(warp)});
      }
      if (step.space == TraceSpace::global) warp_state.store_run += weight;
      return dirtied_sectors;
    }
    traffic.global_load_requests += 1;
    traffic.global_load_lines += static_cast<double>(lines.size());
    int latency = 0;
    for (LineRequest request : lines) {
      request.line += line_base;
      traffic.global_load_sectors += sector_count(request.sectors);
      latency = std::max(latency, memory_.load(block.sm, request, traffic));
    }
    warp_state.round.slowest_cycles = std::max(warp_state.round.slowest_cycles, latency);
    ++warp_state.round.loads;
    counts.trace.global_loads += weight;
    if (step.space == TraceSpace::global) close_store_run(warp_state.store_run, counts.trace, weight);
    return 0;
  }

  /// Each active lane of a global atomic is one operation on its address at L2.
  void tally_atomic_addresses(const CompactStep& step, TraceTally& tally, double weight) {
    const std::uint32_t mask = shapes_.addresses(step.shape, step.base, addresses_.data());
    for (std::uint32_t bits = mask; bits != 0; bits &= bits - 1) {
      tally.atomics_by_address[static_cast<std::uint64_t>(
          addresses_[static_cast<std::size_t>(std::countr_zero(bits))])] += weight;
    }
  }

  void run_shared(const CompactStep& step, TrafficCounts& traffic, PhaseCounts& stats, double weight) {
    bool known = false;
    const bool atomic = step.op == TraceOp::atomic;
    SharedCost& cost = wavefront_memo_.find(step.shape, step.base, atomic, known);
    if (!known) {
      const std::uint32_t mask = shapes_.addresses(step.shape, step.base, addresses_.data());
      cost = shared_wavefronts(addresses_.data(), mask, step.bytes, banks_, bank_width_bytes_, atomic);
    }
    if (step.op != TraceOp::load) {
      traffic.shared_store_wavefronts += cost.wavefronts;
      traffic.shared_store_ideal_wavefronts += cost.ideal_wavefronts;
      return;
    }
    traffic.shared_load_wavefronts += cost.wavefronts;
    traffic.shared_load_ideal_wavefronts += cost.ideal_wavefronts;
    stats.shared_load_instructions += weight;
  }

  /// The lines of a global access relative to `line_base`, the line of its first active lane.
  const std::vector<LineRequest>& global_lines(const CompactStep& step, std::uint64_t& line_base) {
    line_base = step.base >> memory_.line_shift();
    bool known = false;
    const bool store = step.op != TraceOp::load;
    std::vector<LineRequest>& lines = line_memo_.find(step.shape, step.base, store, known);
    if (!known) {
      const std::uint32_t mask = shapes_.addresses(step.shape, step.base, addresses_.data());
      coalescer_.reset(line_base);
      coalescer_.add_lanes(addresses_.data(), mask, step.bytes, store);
      coalescer_.copy_lines(lines);
    }
    return lines;
  }

  /// The lines of a local access: each active lane's frame bytes, word by word at their
  /// interleaved addresses.
  const std::vector<LineRequest>& local_lines(const CompactStep& step, const WaveBlock& block, int warp) {
    coalescer_.reset(0);
    const bool store = step.op != TraceOp::load;
    const std::uint32_t mask = shapes_.addresses(step.shape, step.base, addresses_.data());
    const auto block_linear = static_cast<std::uint64_t>(
        block.index[0] + kernel_.grid.x * (block.index[1] + kernel_.grid.y * block.index[2]));
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      if ((mask >> lane & 1u) == 0) continue;
      const auto first = static_cast<std::uint64_t>(addresses_[static_cast<std::size_t>(lane)]);
      const std::uint64_t end = first + step.bytes;
      const std::uint64_t thread = block_linear * static_cast<std::uint64_t>(layout_.threads_per_block) +
                                   static_cast<std::uint64_t>(warp * kWarpLanes + lane);
      for (std::uint64_t offset = first; offset < end;) {
        const std::uint64_t word = offset / kLocalWordBytes;
        const std::uint64_t word_end = std::min(end, (word + 1) * kLocalWordBytes);
        const std::uint64_t address = layout_.local_window + word * kLocalWordBytes * layout_.threads_total +
                                      thread * kLocalWordBytes + offset % kLocalWordBytes;
        coalescer_.add(static_cast<std::int64_t>(address), static_cast<std::int64_t>(word_end - offset), store);
        offset = word_end;
      }
    }
    coalescer_.copy_lines(lines_);
    return lines_;
  }

  /// Fast when the lanes' span lies in one buffer; otherwise lane by lane, naming the first outside.
  void check_inside_buffers(const TraceStep& step, const std::array<std::int64_t, 3>& index, int warp) {
    std::uint64_t low = ~std::uint64_t{0};
    std::uint64_t high = 0;
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      if ((step.active_mask >> lane & 1u) == 0) continue;
      low = std::min(low, step.address[static_cast<std::size_t>(lane)]);
      high = std::max(high, step.address[static_cast<std::size_t>(lane)]);
    }
    if (inside_a_buffer(low, high - low + step.bytes_per_lane)) return;
    const bool let_through = kernel_.simulate_out_of_bounds_reads && step.op == TraceOp::load;
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      if ((step.active_mask >> lane & 1u) == 0) continue;
      const std::uint64_t address = step.address[static_cast<std::size_t>(lane)];
      if (let_through && address + step.bytes_per_lane <= layout_.local_window) continue;
      if (!inside_a_buffer(address, step.bytes_per_lane)) {
        throw InputError(describe(step, index, warp) + ", lane " + std::to_string(lane) + " at " + hex(address) + " (" +
                         std::to_string(step.bytes_per_lane) + " bytes) lies outside every buffer" + buffer_list());
      }
    }
  }

  void check_inside_frame(const TraceStep& step, const std::array<std::int64_t, 3>& index, int warp) const {
    const auto frame_bytes = static_cast<std::uint64_t>(kernel_.local_bytes_per_thread);
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      if ((step.active_mask >> lane & 1u) == 0) continue;
      const std::uint64_t first = step.address[static_cast<std::size_t>(lane)];
      if (first >= frame_bytes || first + step.bytes_per_lane > frame_bytes) {
        throw InputError(describe(step, index, warp) + ", lane " + std::to_string(lane) + " at frame offset " +
                         std::to_string(first) + " lies outside the " + std::to_string(frame_bytes) +
                         "-byte local frame");
      }
    }
  }

  bool inside_a_buffer(std::uint64_t address, std::uint64_t bytes) {
    auto inside = [&](const TraceBuffer& buffer) {
      return address >= buffer.base_address &&
             address + bytes <= buffer.base_address + static_cast<std::uint64_t>(buffer.bytes);
    };
    const std::vector<TraceBuffer>& buffers = layout_.buffers;
    if (last_buffer_ < buffers.size() && inside(buffers[last_buffer_])) return true;
    const auto after =
        std::upper_bound(buffers.begin(), buffers.end(), address,
                         [](std::uint64_t value, const TraceBuffer& buffer) { return value < buffer.base_address; });
    if (after == buffers.begin() || !inside(*(after - 1))) return false;
    last_buffer_ = static_cast<std::size_t>(after - 1 - buffers.begin());
    return true;
  }

  std::string describe(const TraceStep& step, const std::array<std::int64_t, 3>& index, int warp) const {
    const char* op = step.op == TraceOp::load ? "load" : step.op == TraceOp::store ? "store" : "atomic";
    const char* space = step.space == TraceSpace::global   ? "global"
                        : step.space == TraceSpace::shared ? "shared"
                                                           : "local";
    return "kernel '" + kernel_.name + "': " + space + " " + op + " (instruction " + std::to_string(step.instruction) +
           ") of block " + block_name(index) + ", warp " + std::to_string(warp);
  }

  std::string buffer_list() const {
    std::string list;
    for (const TraceBuffer& buffer : layout_.buffers) {
      list += (list.empty() ? " (" : ", ") + buffer.name + " at " + hex(buffer.base_address) + ", " +
              std::to_string(buffer.bytes) + " bytes";
    }
    return list.empty() ? " (the kernel has none)" : list + ")";
  }

  const TracedKernel& kernel_;
  const TraceLayout& layout_;
  MemorySystem& memory_;
  int dram_latency_cycles_; ///< a round this slow waited for DRAM
  int banks_;
  int bank_width_bytes_;
  Coalescer coalescer_;
  LaneShapes shapes_;
  ShapeMemo<std::vector<LineRequest>> line_memo_; ///< lines relative to the first active lane's
  ShapeMemo<SharedCost> wavefront_memo_;
  std::vector<LineRequest> lines_; ///< a local access's
  TrafficCounts scratch_;          ///< a weighted step's counts before scaling
  std::array<std::int64_t, kWarpLanes> addresses_{};
  std::vector<CompactBlock> blocks_;                          ///< the wave's blocks
  std::vector<std::unique_ptr<CompactReference>> references_; ///< of the translated blocks so far
  std::vector<WarpState> warps_;                              ///< per (block of the wave, warp)
  std::vector<StoredLine>* stored_ = nullptr;
  std::size_t last_buffer_ = 0;
  double work_ = 0;
  bool skip_shared_ = false;
};

} // namespace

TraceLayout trace_layout(const TracedKernel& kernel) {
  TraceLayout layout;
  layout.buffers = kernel.buffers;
  std::sort(layout.buffers.begin(), layout.buffers.end(),
            [](const TraceBuffer& a, const TraceBuffer& b) { return a.base_address < b.base_address; });
  std::uint64_t end = kLowestLocalWindow;
  for (const TraceBuffer& buffer : layout.buffers) {
    const auto bytes = static_cast<std::uint64_t>(buffer.bytes);
    const std::uint64_t rounded = std::max(
        (bytes + kLocalAlignmentBytes - 1) / kLocalAlignmentBytes * kLocalAlignmentBytes, kLocalAlignmentBytes);
    end = std::max(end, buffer.base_address + (kernel.simulate_out_of_bounds_reads ? 2 * rounded : bytes));
  }
  layout.local_window = (end + kLocalAlignmentBytes - 1) / kLocalAlignmentBytes * kLocalAlignmentBytes;
  layout.threads_per_block = kernel.block.count();
  layout.threads_total =
      static_cast<std::uint64_t>(kernel.grid.count()) * static_cast<std::uint64_t>(layout.threads_per_block);
  layout.warps_per_block = static_cast<int>((layout.threads_per_block + kWarpLanes - 1) / kWarpLanes);
  return layout;
}

std::unique_ptr<WaveExecutor> make_trace_runner(const TracedKernel& kernel, const TraceLayout& layout,
                                                const DeviceProfile& profile, MemorySystem& memory) {
  return std::make_unique<TraceRunner>(kernel, layout, profile, memory);
}

} // namespace cachewise::detail
