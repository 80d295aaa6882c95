// A KernelPattern through the sampler: its lowered phases executed wave by wave, instruction i
// of every warp of every block before instruction i+1, global accesses through the coalescer
// and memory system, shared ones through the bank model.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <utility>

#include "simulation/lane_part_memo.hpp"
#include "simulation/lowered_pattern.hpp"
#include "simulation/memory_system.hpp"
#include "simulation/sampling.hpp"
#include "simulation/shared_banks.hpp"

namespace cachewise::detail {
namespace {

/// How many iterations of each phase loop to simulate: all of them unless one wave of blocks
/// running them would alone exceed the work budget (then the first ones, at least 2).
std::vector<std::int64_t> plan_loop_trips(const LoweredPattern& lowered, const SimulationOptions& options,
                                          std::int64_t wave_blocks) {
  constexpr std::int64_t kMinLoopTrips = 2;
  std::vector<std::int64_t> trips;
  for (const PhaseLoop& loop : lowered.phase_loops) trips.push_back(loop.loop.trip_count());
  if (options.work_budget == 0 || trips.empty()) return trips;
  double fixed = 0;
  double per_trip = 0;
  for (const LoweredPhase& phase : lowered.phases) {
    const double instructions =
        static_cast<double>(phase.iterations) * static_cast<double>(phase.accesses.size()) * lowered.warps_per_block;
    (phase.phase_loop >= 0 ? per_trip : fixed) += instructions;
  }
  const double budget_per_block = static_cast<double>(options.work_budget) / static_cast<double>(wave_blocks);
  if (per_trip <= 0) return trips;
  const double affordable = std::floor((budget_per_block - fixed) / per_trip);
  for (std::size_t l = 0; l < trips.size(); ++l) {
    const std::int64_t all = trips[l];
    if (affordable < static_cast<double>(all))
      trips[l] = std::min(all, std::max(kMinLoopTrips, static_cast<std::int64_t>(affordable)));
  }
  return trips;
}

struct WarpClass {
  int representative = -1;         ///< -1: not classified yet
  std::int64_t shift_elements = 0; ///< this warp's lane offsets minus the representative's
};

struct KnownCost {
  bool known = false;
  SharedCost cost;
};

bool involves_block(const LinearTerm& term) { return term.block != std::array<std::int64_t, 3>{}; }
bool involves_block(const LoweredExpr& expr) {
  const auto quotient = [](const LoweredQuotient& q) { return involves_block(q.inner); };
  return involves_block(expr.linear) || std::any_of(expr.quotients.begin(), expr.quotients.end(), quotient) ||
         std::any_of(expr.uniform_quotients.begin(), expr.uniform_quotients.end(), quotient);
}
/// Per access id: a shared access none of whose indices and guards involve the block index.
std::vector<bool> block_uniform_shared(const LoweredPattern& lowered) {
  std::vector<bool> uniform(lowered.access_count, false);
  for (const LoweredPhase& phase : lowered.phases) {
    for (const LoweredAccess& access : phase.accesses) {
      bool involves = false;
      LanePartMemo::for_each_expr(access, [&](const LoweredExpr& expr, std::size_t, std::size_t) {
        involves = involves || involves_block(expr);
      });
      uniform[access.id] = access.shared && !involves;
    }
  }
  return uniform;
}

/// The lanes of a lane table's warp whose values lie in [low, high): a direct-mapped table of
/// recent answers (a warp at the grid's edge straddles the same bound in every block of its
/// column, at a different block offset each, so the bound relative to the offset repeats).
class StraddleMemo {
public:
  std::uint32_t inside(const std::vector<std::int64_t>& lane_values, std::size_t first, std::int64_t low,
                       std::int64_t high) {
    const std::uint64_t hash =
        ((first * 0x9E3779B97F4A7C15ULL) ^ (static_cast<std::uint64_t>(low) * 0xBF58476D1CE4E5B9ULL) ^
         static_cast<std::uint64_t>(high)) *
        0x94D049BB133111EBULL;
    Entry& entry = entries_[static_cast<std::size_t>(hash >> (64 - kIndexBits))];
    if (entry.valid && entry.first == first && entry.low == low && entry.high == high) return entry.mask;
    std::uint32_t mask = 0;
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      const std::int64_t value = lane_values[first + static_cast<std::size_t>(lane)];
      if (value >= low && value < high) mask |= 1u << lane;
    }
    entry = {true, first, low, high, mask};
    return mask;
  }

private:
  static constexpr int kIndexBits = 10;
  struct Entry {
    bool valid = false;
    std::size_t first = 0;
    std::int64_t low = 0;
    std::int64_t high = 0;
    std::uint32_t mask = 0;
  };
  std::vector<Entry> entries_ = std::vector<Entry>(std::size_t{1} << kIndexBits);
};

/// What the runner learns about the pattern's warps that does not depend on cache state (lines
/// relative to a base, bank wavefronts, lane parts, warp classes): kept by the kernel, so the
/// sampler's scratch run and its sample share it. Per (access, warp) unless noted.
struct RunnerMemos {
  RunnerMemos(const LoweredPattern& lowered, std::int64_t bank_period_bytes)
      : lines(lowered.access_count * static_cast<std::size_t>(lowered.warps_per_block)),
        wavefronts(lowered.access_count * static_cast<std::size_t>(lowered.warps_per_block) *
                   static_cast<std::size_t>(bank_period_bytes)),
        warp_classes(lines.size()),
        lane_parts(lines.size()),
        partial_wavefronts(lines.size()),
        block_uniform_shared(cachewise::detail::block_uniform_shared(lowered)) {}
  std::vector<LineMemo> lines;
  std::vector<KnownCost> wavefronts; ///< per (access, representative warp, bank offset): whole warps
  std::vector<WarpClass> warp_classes;
  std::vector<LanePartMemo> lane_parts;          ///< accesses with lane quotients
  std::vector<WavefrontMemo> partial_wavefronts; ///< warps with idle lanes
  std::vector<bool> block_uniform_shared;        ///< per access id, see block_uniform_shared
  StraddleMemo straddles;
};

/// Executes the phases of the pattern's blocks, one wave at a time.
class WaveRunner final : public WaveExecutor {
public:
  WaveRunner(const LoweredPattern& lowered, const std::vector<std::int64_t>& simulated_trips,
             const DeviceProfile& profile, MemorySystem& memory, std::int64_t loads_in_flight, RunnerMemos& memos)
      : lowered_(lowered),
        simulated_trips_(simulated_trips),
        memory_(memory),
        loads_in_flight_(loads_in_flight),
        dram_latency_cycles_(static_cast<int>(profile.dram.latency_cycles.value)),
        banks_(static_cast<int>(profile.shared_memory.banks.value)),
        bank_width_bytes_(static_cast<int>(profile.shared_memory.bank_width_bytes.value)),
        bank_period_bytes_(std::int64_t{banks_} * bank_width_bytes_),
        coalescer_(memory.line_shift(), memory.sector_bytes()),
        memos_(memos) {}

  std::int64_t work() const override { return work_; }
  void set_skip_shared(bool skip) override { skip_shared_ = skip; }

  /// Runs the phases of the pattern for the blocks of one wave, each phase loop its planned trips.
  void run_wave(const std::vector<WaveBlock>& blocks, WaveCounts& counts, std::vector<StoredLine>* stored) override {
    set_keep_stored_lines(stored != nullptr);
    for (std::size_t p = 0; p < lowered_.phases.size();) {
      const LoweredPhase& phase = lowered_.phases[p];
      if (phase.phase_loop < 0) {
        run_phase(phase, 0, blocks, counts.segments[0], counts.phases[p]);
        ++p;
        continue;
      }
      const PhaseLoop& loop = lowered_.phase_loops[static_cast<std::size_t>(phase.phase_loop)];
      const std::int64_t trips = simulated_trips_[static_cast<std::size_t>(phase.phase_loop)];
      TrafficCounts& segment = counts.segments[1 + static_cast<std::size_t>(phase.phase_loop)];
      for (std::int64_t trip = 0; trip < trips; ++trip) {
        for (std::size_t q = loop.first_phase; q < loop.first_phase + loop.phase_count; ++q) {
          run_phase(lowered_.phases[q], loop.loop.begin + trip * loop.loop.step, blocks, segment, counts.phases[q]);
        }
      }
      p = loop.first_phase + loop.phase_count;
    }
    if (stored != nullptr) *stored = std::exchange(stored_lines_, {});
  }

private:
  /// Whether global stores are kept (for tally_write_runs) until the wave ends.
  void set_keep_stored_lines(bool keep) {
    keep_stored_lines_ = keep;
    for (std::vector<std::uint64_t>& lines : last_store_lines_) lines.clear();
  }

  /// Runs phase `phase` once for every block of the wave; counts go to `traffic` and `stats`.
  void run_phase(const LoweredPhase& phase, std::int64_t outer_value, const std::vector<WaveBlock>& blocks,
                 TrafficCounts& traffic, PhaseCounts& stats) {
    const std::size_t slots = phase.loops.size() + 1;
    std::vector<std::int64_t> loop_values(slots, 0);
    loop_values[static_cast<std::size_t>(phase.outer_slot)] = outer_value;
    for (std::size_t l = 0; l < phase.loops.size(); ++l) loop_values[l] = phase.loops[l].begin;
    // Blocks that run some loop backwards see their own values: one row of `block_values` each.
    const bool reversed = has_reversed_loops(phase);
    std::vector<std::int64_t> block_values(reversed ? blocks.size() * slots : 0);
    rounds_.assign(blocks.size() * static_cast<std::size_t>(lowered_.warps_per_block), LoadRound{});
    for (std::int64_t iteration = 0; iteration < phase.iterations; ++iteration) {
      if (reversed) {
        for (std::size_t b = 0; b < blocks.size(); ++b) {
          block_loop_values(phase, blocks[b].index, loop_values.data(), block_values.data() + b * slots);
        }
      }
      for (const LoweredAccess& access : phase.accesses) {
        if (!reversed && memos_.block_uniform_shared[access.id]) {
          run_for_every_block(access, blocks.size(), loop_values.data(), traffic, stats);
          continue;
        }
        for (std::size_t b = 0; b < blocks.size(); ++b) {
          const std::int64_t* values = reversed ? block_values.data() + b * slots : loop_values.data();
          run_instruction(access, blocks[b], b, values, traffic, stats);
        }
      }
      advance_loops(phase, loop_values);
    }
    for (const LoadRound& round : rounds_) {
      if (round.loads > 0) close_round(round, stats);
    }
  }

  /// A shared access whose index and guards do not involve the block index costs every block
  /// of the wave the same (no cache state): run for the first block, its counts (whole
  /// numbers, so exact in doubles) taken `blocks` times (gemm's k loop of tile reads).
  void run_for_every_block(const LoweredAccess& access, std::size_t blocks, const std::int64_t* loop_values,
                           TrafficCounts& traffic, PhaseCounts& stats) {
    TrafficCounts one_traffic;
    PhaseCounts one_stats;
    const std::int64_t work_before = work_;
    run_instruction(access, WaveBlock{}, 0, loop_values, one_traffic, one_stats);
    const auto copies = static_cast<double>(blocks);
    work_ = work_before + (work_ - work_before) * static_cast<std::int64_t>(blocks);
    traffic.shared_load_wavefronts += one_traffic.shared_load_wavefronts * copies;
    traffic.shared_load_ideal_wavefronts += one_traffic.shared_load_ideal_wavefronts * copies;
    traffic.shared_store_wavefronts += one_traffic.shared_store_wavefronts * copies;
    traffic.shared_store_ideal_wavefronts += one_traffic.shared_store_ideal_wavefronts * copies;
    stats.warp_instructions += one_stats.warp_instructions * copies;
    stats.shared_load_instructions += one_stats.shared_load_instructions * copies;
  }

  /// The loads a warp has issued in its current round and the slowest of them.
  struct LoadRound {
    std::int64_t loads = 0;
    int slowest_cycles = 0;
  };

  void close_round(const LoadRound& round, PhaseCounts& stats) const {
    stats.load_rounds += 1;
    stats.round_latency_cycles += round.slowest_cycles;
    if (round.slowest_cycles >= dram_latency_cycles_) stats.dram_round_latency_cycles += round.slowest_cycles;
  }

  /// Whether the values in `guard_ranges` (per guard) and `dim_ranges` (per dim) of an affine
  /// access, offset by its scalars, meet every guard and bound.
  bool ranges_inside(const LoweredAccess& access, const std::pair<std::int64_t, std::int64_t>* guard_ranges,
                     const std::pair<std::int64_t, std::int64_t>* dim_ranges) const {
    const std::size_t guards = access.guards.size();
    for (std::size_t g = 0; g < guards; ++g) {
      if (scalars_[g] + guard_ranges[g].first < access.guards[g].lower ||
          scalars_[g] + guard_ranges[g].second >= access.guards[g].upper)
        return false;
    }
    if (!access.predicated) return true;
    const std::size_t dims = access.dims.size();
    for (std::size_t d = 0; d < dims; ++d) {
      const std::int64_t tail = d + 1 == dims ? access.vector_elements - 1 : 0;
      if (scalars_[guards + d] + dim_ranges[d].first < 0 ||
          scalars_[guards + d] + dim_ranges[d].second + tail >= access.extents[d])
        return false;
    }
    return true;
  }

  /// The real lanes of `warp` that issue an affine `access`: those meeting every guard and,
  /// when predicated, inside the array (lane_addresses' mask, one compare per lane and bound,
  /// none when the lanes' range is inside).
  std::uint32_t affine_active_lanes(const LoweredAccess& access, int warp, std::uint32_t present) {
    std::uint32_t active = present;
    const auto keep = [&](const LinearTerm& term, std::int64_t scalar, std::pair<std::int64_t, std::int64_t> range,
                          std::int64_t lower, std::int64_t upper) {
      if (scalar + range.first >= lower && scalar + range.second < upper) return;
      const std::size_t first = term.lane_table + static_cast<std::size_t>(warp * kWarpLanes);
      std::int64_t low = 0;
      std::int64_t high = 0;
      if (!__builtin_sub_overflow(lower, scalar, &low) && !__builtin_sub_overflow(upper, scalar, &high)) {
        active &= memos_.straddles.inside(lowered_.lane_values, first, low, high);
        return;
      }
      for (int lane = 0; lane < kWarpLanes; ++lane) {
        const std::int64_t value = scalar + lowered_.lane_values[first + static_cast<std::size_t>(lane)];
        if (value < lower || value >= upper) active &= ~(1u << lane);
      }
    };
    const std::size_t guards = access.guards.size();
    for (std::size_t g = 0; g < guards; ++g) {
      keep(access.guards[g].value.linear, scalars_[g],
           access.guard_lane_ranges[static_cast<std::size_t>(warp) * guards + g], access.guards[g].lower,
           access.guards[g].upper);
    }
    if (!access.predicated) return active;
    const std::size_t dims = access.dims.size();
    for (std::size_t d = 0; d < dims; ++d) {
      const std::int64_t tail = d + 1 == dims ? access.vector_elements - 1 : 0;
      keep(access.dims[d].linear, scalars_[guards + d],
           access.dim_lane_ranges[static_cast<std::size_t>(warp) * dims + d], 0, access.extents[d] - tail);
    }
    return active;
  }

  void run_instruction(const LoweredAccess& access, const WaveBlock& block, std::size_t block_slot,
                       const std::int64_t* loop_values, TrafficCounts& traffic, PhaseCounts& stats) {
    access_scalars(access, block.index, loop_values, scalars_);
    std::int64_t block_offset = 0;
    LanePartMemo::for_each_expr(access, [&](const LoweredExpr&, std::size_t position, std::size_t index) {
      if (index >= access.guards.size())
        block_offset += scalars_[position] * access.strides[index - access.guards.size()];
    });
    const std::int64_t warp_base = access.base_bytes + block_offset * access.element_bytes;
    const bool block_inside =
        access.affine_only && ranges_inside(access, access.guard_block_ranges.data(), access.dim_block_ranges.data());
    const auto line_base = static_cast<std::uint64_t>(warp_base >> memory_.line_shift());
    for (int warp = 0; warp < lowered_.warps_per_block; ++warp) {
      // A warp's lanes have fixed offsets from the instruction's base (an affine access's, or
      // those its quotient scalars give), so for one set of issuing lanes its coalesced lines
      // and bank wavefronts depend only on the base modulo a line / the bank period.
      const std::uint32_t present = lowered_.lanes_present[static_cast<std::size_t>(warp)];
      const std::size_t slot =
          access.id * static_cast<std::size_t>(lowered_.warps_per_block) + static_cast<std::size_t>(warp);
      LanePartMemo::Part* part = nullptr;
      std::uint32_t active = 0;
      const std::int64_t* offsets = nullptr;
      if (access.affine_only) {
        active = block_inside ? present : affine_active_lanes(access, warp, present);
        offsets = lane_offsets(access, warp);
      } else {
        part = &memos_.lane_parts[slot].find(lowered_, access, warp, scalars_.data());
        active = part_active_lanes(access, *part, present);
        offsets = part->flat_offsets.data();
      }
      if (active == 0) continue;
      stats.warp_instructions += 1;
      ++work_;
      if (access.shared) {
        if (skip_shared_) continue;
        const SharedCost cost =
            active != present ? memoised_wavefronts(access, offsets, warp_base, active, memos_.partial_wavefronts[slot])
            : part != nullptr ? memoised_wavefronts(access, offsets, warp_base, active, part->wavefronts)
                              : memoised_wavefronts(access, warp, warp_base, active);
        if (access.store) {
          traffic.shared_store_wavefronts += cost.wavefronts;
          traffic.shared_store_ideal_wavefronts += cost.ideal_wavefronts;
        } else {
          traffic.shared_load_wavefronts += cost.wavefronts;
          traffic.shared_load_ideal_wavefronts += cost.ideal_wavefronts;
          stats.shared_load_instructions += 1;
        }
        continue;
      }
      const std::vector<LineRequest>& lines =
          memoised_lines(access, offsets, warp_base, active, part != nullptr ? part->lines : memos_.lines[slot]);
      work_ += static_cast<std::int64_t>(lines.size());
      run_global(access, block, block_slot, warp, lines, line_base, traffic, stats);
    }
  }

  /// One warp's global access: its lines (relative to `line_base`) through the memory system.
  void run_global(const LoweredAccess& access, const WaveBlock& block, std::size_t block_slot, int warp,
                  const std::vector<LineRequest>& lines, std::uint64_t line_base, TrafficCounts& traffic,
                  PhaseCounts& stats) {
    if (access.store) {
      traffic.global_store_requests += 1;
      const bool keep = keep_stored_lines_ && !repeats_last_store(block_slot, warp, lines, line_base);
      for (LineRequest request : lines) {
        request.line += line_base;
        traffic.global_store_sectors += sector_count(request.sectors);
        memory_.store(block.sm, request, traffic);
        if (keep)
          stored_lines_.push_back(
              {request.line, static_cast<std::uint32_t>(block_slot), static_cast<std::uint32_t>(warp)});
      }
      return;
    }
    traffic.global_load_requests += 1;
    traffic.global_load_lines += static_cast<double>(lines.size());
    int latency = 0;
    for (LineRequest request : lines) {
      request.line += line_base;
      traffic.global_load_sectors += sector_count(request.sectors);
      latency = std::max(latency, memory_.load(block.sm, request, traffic));
    }
    LoadRound& round =
        rounds_[block_slot * static_cast<std::size_t>(lowered_.warps_per_block) + static_cast<std::size_t>(warp)];
    round.slowest_cycles = std::max(round.slowest_cycles, latency);
    if (++round.loads == loads_in_flight_) {
      close_round(round, stats);
      round = LoadRound{};
    }
  }

  /// The real lanes that issue a quotient access under `part`: every one when their ranges lie
  /// inside every guard and bound, else lane by lane.
  std::uint32_t part_active_lanes(const LoweredAccess& access, const LanePartMemo::Part& part,
                                  std::uint32_t present) const {
    std::uint32_t active = present;
    LanePartMemo::for_each_expr(access, [&](const LoweredExpr&, std::size_t position, std::size_t index) {
      const bool guard = index < access.guards.size();
      if (!guard && !access.predicated) return;
      const std::size_t d = index - access.guards.size();
      const std::int64_t lower = guard ? access.guards[index].lower : 0;
      const std::int64_t tail = !guard && d + 1 == access.dims.size() ? access.vector_elements - 1 : 0;
      const std::int64_t upper = (guard ? access.guards[index].upper : access.extents[d]) - tail;
      const std::int64_t scalar = scalars_[position];
      if (scalar + part.ranges[index].first >= lower && scalar + part.ranges[index].second < upper) return;
      for (int lane = 0; lane < kWarpLanes; ++lane) {
        const std::int64_t value = scalar + part.values[index * kWarpLanes + static_cast<std::size_t>(lane)];
        if (value < lower || value >= upper) active &= ~(1u << lane);
      }
    });
    return active;
  }

  const std::int64_t* lane_offsets(const LoweredAccess& access, int warp) const {
    return access.lane_offsets.data() + static_cast<std::size_t>(warp * kWarpLanes);
  }

  /// Lines of the `active` lanes at `offsets` from `warp_base`, relative to its line, kept in
  /// `memo` for those lanes and the base's offset within a line.
  const std::vector<LineRequest>& memoised_lines(const LoweredAccess& access, const std::int64_t* offsets,
                                                 std::int64_t warp_base, std::uint32_t active, LineMemo& memo) {
    const std::int64_t line_bytes = std::int64_t{1} << memory_.line_shift();
    bool known = false;
    std::vector<LineRequest>& lines = memo.find(warp_base & (line_bytes - 1), active, known);
    if (!known) {
      fill_addresses(access, offsets, warp_base);
      coalesce(access, active, static_cast<std::uint64_t>(warp_base >> memory_.line_shift()));
      lines.assign(coalesced_.begin(), coalesced_.end());
    }
    return lines;
  }

  std::int64_t bank_offset(std::int64_t address) const {
    return ((address % bank_period_bytes_) + bank_period_bytes_) % bank_period_bytes_;
  }

  /// Wavefronts of the `active` lanes at `offsets` from `warp_base`, kept in `memo` for those
  /// lanes and the base's offset within the bank period.
  SharedCost memoised_wavefronts(const LoweredAccess& access, const std::int64_t* offsets, std::int64_t warp_base,
                                 std::uint32_t active, WavefrontMemo& memo) {
    bool known = false;
    SharedCost& cost = memo.find(bank_offset(warp_base), active, known);
    if (!known) {
      fill_addresses(access, offsets, warp_base);
      cost = shared_wavefronts(addresses_.data(), active, access.access_bytes(), banks_, bank_width_bytes_);
    }
    return cost;
  }

  SharedCost memoised_wavefronts(const LoweredAccess& access, int warp, std::int64_t warp_base, std::uint32_t active) {
    // One entry per base offset modulo the bank period: loops that step the base through a
    // tile (gemm's k loop) revisit the same few offsets, each counted once per simulation;
    // warps whose lanes are a translate of an earlier warp's share its entries.
    const WarpClass& shape = warp_class(access, warp);
    const std::int64_t period = bank_period_bytes_;
    const std::int64_t key = bank_offset(warp_base + shape.shift_elements * access.element_bytes);
    KnownCost& memo = memos_.wavefronts[(access.id * static_cast<std::size_t>(lowered_.warps_per_block) +
                                         static_cast<std::size_t>(shape.representative)) *
                                            static_cast<std::size_t>(period) +
                                        static_cast<std::size_t>(key)];
    if (!memo.known) {
      fill_addresses(access, lane_offsets(access, warp), warp_base);
      memo.cost = shared_wavefronts(addresses_.data(), active, access.access_bytes(), banks_, bank_width_bytes_);
      memo.known = true;
    }
    return memo.cost;
  }

  /// The earlier warp whose lane offsets (of `access`) equal this warp's up to a shift, or
  /// this warp itself; found once per (access, warp).
  const WarpClass& warp_class(const LoweredAccess& access, int warp) {
    const auto warps = static_cast<std::size_t>(lowered_.warps_per_block);
    WarpClass& found = memos_.warp_classes[access.id * warps + static_cast<std::size_t>(warp)];
    if (found.representative >= 0) return found;
    const std::int64_t* offsets = access.lane_offsets.data();
    const std::uint32_t present = lowered_.lanes_present[static_cast<std::size_t>(warp)];
    auto offset = [&](int w, int lane) { return offsets[static_cast<std::size_t>(w * kWarpLanes + lane)]; };
    found = {warp, 0};
    for (int other = 0; other < warp; ++other) {
      if (memos_.warp_classes[access.id * warps + static_cast<std::size_t>(other)].representative != other) continue;
      if (lowered_.lanes_present[static_cast<std::size_t>(other)] != present) continue;
      const std::int64_t shift = offset(warp, 0) - offset(other, 0);
      bool same = true;
      for (int lane = 0; lane < kWarpLanes && same; ++lane) {
        same = (present >> lane & 1u) == 0 || offset(warp, lane) - offset(other, lane) == shift;
      }
      if (same) {
        found = {other, shift};
        break;
      }
    }
    return found;
  }

  void fill_addresses(const LoweredAccess& access, const std::int64_t* offsets, std::int64_t warp_base) {
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      addresses_[static_cast<std::size_t>(lane)] = warp_base + offsets[lane] * access.element_bytes;
    }
  }

  /// Merges the active lanes into distinct lines (stored relative to `line_base`) in coalesced_.
  void coalesce(const LoweredAccess& access, std::uint32_t active, std::uint64_t line_base) {
    coalescer_.reset(line_base);
    coalescer_.add_lanes(addresses_.data(), active, access.access_bytes(), access.store);
    coalescer_.copy_lines(coalesced_);
  }

  /// Whether this warp's store touches exactly the lines of its previous store (a gemm thread
  /// tile's columns do, one store per column): kept once, the tally's sort stays small.
  bool repeats_last_store(std::size_t block_slot, int warp, const std::vector<LineRequest>& lines,
                          std::uint64_t line_base) {
    const std::size_t index =
        block_slot * static_cast<std::size_t>(lowered_.warps_per_block) + static_cast<std::size_t>(warp);
    if (index >= last_store_lines_.size()) last_store_lines_.resize(index + 1);
    std::vector<std::uint64_t>& last = last_store_lines_[index];
    const bool same = last.size() == lines.size() && std::equal(lines.begin(), lines.end(), last.begin(),
                                                                [&](const LineRequest& request, std::uint64_t line) {
                                                                  return request.line + line_base == line;
                                                                });
    if (!same) {
      last.clear();
      for (const LineRequest& request : lines) last.push_back(request.line + line_base);
    }
    return same;
  }

  const LoweredPattern& lowered_;
  const std::vector<std::int64_t>& simulated_trips_;
  MemorySystem& memory_;
  std::int64_t loads_in_flight_;
  int dram_latency_cycles_;       ///< a round this slow waited for DRAM
  std::vector<LoadRound> rounds_; ///< per (block of the wave, warp), during a phase run
  int banks_;
  int bank_width_bytes_;
  std::int64_t bank_period_bytes_; ///< banks x bank width: shifting a warp's offsets by it keeps its banks

  std::vector<std::int64_t> scalars_;
  std::array<std::int64_t, kWarpLanes> addresses_{};
  Coalescer coalescer_;
  std::vector<LineRequest> coalesced_;
  RunnerMemos& memos_;
  std::int64_t work_ = 0;
  bool skip_shared_ = false;
  bool keep_stored_lines_ = false;
  std::vector<StoredLine> stored_lines_;
  std::vector<std::vector<std::uint64_t>> last_store_lines_; ///< per (block of the wave, warp)
};

class PatternKernel final : public SimulatedKernel {
public:
  PatternKernel(const KernelPattern& pattern, const DeviceProfile& profile)
      : pattern_(pattern), profile_(profile), lowered_(lower_pattern(pattern)) {}

  Dim3 grid() const override { return pattern_.grid; }
  std::int64_t shared_bytes_per_block() const override { return cachewise::shared_bytes_per_block(pattern_); }
  int warps_per_block() const override { return lowered_.warps_per_block; }
  void plan(const SimulationOptions& options, std::int64_t wave_blocks) override {
    simulated_trips_ = plan_loop_trips(lowered_, options, wave_blocks);
  }
  std::unique_ptr<WaveExecutor> executor(MemorySystem& memory) const override {
    if (!memos_) {
      const std::int64_t bank_period_bytes = static_cast<std::int64_t>(profile_.shared_memory.banks.value) *
                                             static_cast<std::int64_t>(profile_.shared_memory.bank_width_bytes.value);
      memos_ = std::make_unique<RunnerMemos>(lowered_, bank_period_bytes);
    }
    return std::make_unique<WaveRunner>(lowered_, simulated_trips_, profile_, memory, pattern_.loads_in_flight,
                                        *memos_);
  }
  WaveCounts empty_counts() const override {
    WaveCounts counts;
    counts.segments.resize(1 + lowered_.phase_loops.size());
    counts.phases.resize(lowered_.phases.size());
    return counts;
  }

  CountScaling scaling(const WaveCounts& /*sample*/, std::int64_t /*simulated_blocks*/) const override {
    CountScaling scaling;
    scaling.segment_scale.push_back(1.0);
    std::vector<double> loop_scale;
    for (std::size_t l = 0; l < lowered_.phase_loops.size(); ++l) {
      const auto all = static_cast<double>(lowered_.phase_loops[l].loop.trip_count());
      const auto simulated = static_cast<double>(simulated_trips_[l]);
      loop_scale.push_back(simulated > 0 ? all / simulated : 0.0);
      scaling.segment_scale.push_back(loop_scale.back());
      if (simulated < all) scaling.work_fractions.push_back(simulated / all);
    }
    for (const LoweredPhase& phase : lowered_.phases) {
      const int loop = phase.phase_loop;
      scaling.phase_scale.push_back(loop < 0 ? 1.0 : loop_scale[static_cast<std::size_t>(loop)]);
      scaling.runs_per_block.push_back(
          loop < 0 ? 1.0 : static_cast<double>(lowered_.phase_loops[static_cast<std::size_t>(loop)].loop.trip_count()));
    }
    return scaling;
  }

private:
  const KernelPattern& pattern_;
  const DeviceProfile& profile_;
  LoweredPattern lowered_;
  std::vector<std::int64_t> simulated_trips_;
  mutable std::unique_ptr<RunnerMemos> memos_; ///< shared by the executors of one simulation, run one after another
};

} // namespace

SimulationRun run_simulation(const KernelPattern& pattern, const DeviceProfile& profile,
                             const SimulationOptions& options, int blocks_per_sm) {
  check_profile_supported(profile);
  PatternKernel kernel(pattern, profile);
  return run_sampled(kernel, profile, options, blocks_per_sm);
}

} // namespace cachewise::detail
