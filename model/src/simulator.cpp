// Traffic simulation: blocks are dealt to SMs in waves, the warps of a wave issue their
// instructions round-robin (instruction i of every warp before instruction i+1), and each
// warp instruction goes through the coalescer (global) or the bank model (shared).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <string>
#include <utility>

#include "lowered_pattern.hpp"
#include "sector_cache.hpp"
#include "shared_banks.hpp"
#include "simulation.hpp"

namespace cachewise::detail {

void TrafficCounts::add_scaled(const TrafficCounts& other, double factor) {
  global_load_requests += other.global_load_requests * factor;
  global_store_requests += other.global_store_requests * factor;
  global_load_sectors += other.global_load_sectors * factor;
  global_store_sectors += other.global_store_sectors * factor;
  l1_hit_sectors += other.l1_hit_sectors * factor;
  l2_read_lookups += other.l2_read_lookups * factor;
  l2_read_hits += other.l2_read_hits * factor;
  l2_far_read_lookups += other.l2_far_read_lookups * factor;
  l2_write_lookups += other.l2_write_lookups * factor;
  l2_write_line_lookups += other.l2_write_line_lookups * factor;
  l2_write_hits += other.l2_write_hits * factor;
  dram_read_bytes += other.dram_read_bytes * factor;
  dram_write_bytes += other.dram_write_bytes * factor;
  shared_load_requests += other.shared_load_requests * factor;
  shared_store_requests += other.shared_store_requests * factor;
  shared_load_wavefronts += other.shared_load_wavefronts * factor;
  shared_store_wavefronts += other.shared_store_wavefronts * factor;
  shared_load_ideal_wavefronts += other.shared_load_ideal_wavefronts * factor;
  shared_store_ideal_wavefronts += other.shared_store_ideal_wavefronts * factor;
}

void PhaseCounts::add_scaled(const PhaseCounts& other, double factor) {
  global_load_instructions += other.global_load_instructions * factor;
  load_latency_cycles += other.load_latency_cycles * factor;
  load_rounds += other.load_rounds * factor;
  round_latency_cycles += other.round_latency_cycles * factor;
  dram_round_latency_cycles += other.dram_round_latency_cycles * factor;
  shared_load_instructions += other.shared_load_instructions * factor;
  warp_instructions += other.warp_instructions * factor;
}

namespace {

constexpr int kMaxSectorsPerLine = 8;

/// One 128 B line touched by a warp instruction: which sectors, and for stores which bytes.
struct LineRequest {
  std::uint64_t line = 0;
  std::uint32_t sectors = 0;
  std::array<std::uint32_t, kMaxSectorsPerLine> bytes{};
};

/// Merges the lanes of one warp instruction into distinct lines (a small open-addressed table:
/// a scattered warp touches up to 64 lines and a linear search would dominate).
class Coalescer {
public:
  void reset() {
    for (int i = 0; i < count_; ++i) table_[used_[static_cast<std::size_t>(i)]] = 0;
    count_ = 0;
    last_ = -1;
  }
  int count() const { return count_; }
  const LineRequest& operator[](int i) const { return lines_[static_cast<std::size_t>(i)]; }

  LineRequest& line(std::uint64_t line) {
    if (last_ >= 0 && lines_[static_cast<std::size_t>(last_)].line == line) return lines_[static_cast<std::size_t>(last_)];
    std::size_t slot = static_cast<std::size_t>((line * 0x9E3779B97F4A7C15ULL) >> 57);
    while (table_[slot] != 0) {
      const int index = table_[slot] - 1;
      if (lines_[static_cast<std::size_t>(index)].line == line) {
        last_ = index;
        return lines_[static_cast<std::size_t>(index)];
      }
      slot = (slot + 1) & (kTableSize - 1);
    }
    last_ = count_++;
    table_[slot] = static_cast<std::int16_t>(count_);
    used_[static_cast<std::size_t>(last_)] = slot;
    LineRequest& fresh = lines_[static_cast<std::size_t>(last_)];
    fresh.line = line;
    fresh.sectors = 0;
    fresh.bytes.fill(0);
    return fresh;
  }

private:
  static constexpr std::size_t kTableSize = 128;
  std::array<std::int16_t, kTableSize> table_{};
  std::array<std::size_t, 2 * kWarpLanes> used_{};
  std::array<LineRequest, 2 * kWarpLanes> lines_{};
  int count_ = 0;
  int last_ = -1;
};

std::uint32_t bit_range(int first, int last) {
  const std::uint32_t upper = last >= 31 ? 0xffffffffu : (1u << (last + 1)) - 1u;
  return upper & ~((1u << first) - 1u);
}

/// Per-SM L1s, the partitioned L2 and DRAM, with the profile's geometry and policies.
class MemorySystem {
public:
  /// `sm_count` SMs with their own L1 (screening simulates fewer than the device has) and the
  /// whole L2, scaled by `l2_fraction` (the scratch system that only measures work needs little).
  MemorySystem(const DeviceProfile& profile, std::int64_t l1_capacity_bytes, std::int64_t sm_count, double l2_fraction)
      : line_bytes_(static_cast<int>(profile.l1.line_bytes.value)),
        sector_bytes_(static_cast<int>(profile.l1.sector_bytes.value)),
        partitions_(profile.l2.partitions), l1_allocates_on_store_(profile.l1.allocates_on_store.value),
        l2_allocates_on_store_(profile.l2.allocates_on_store.value),
        l1_latency_(static_cast<int>(profile.l1.hit_latency_cycles.value)),
        near_latency_(static_cast<int>(profile.l2.near_hit_latency_cycles.value)),
        far_latency_(static_cast<int>(profile.l2.far_hit_latency_cycles.value)),
        dram_latency_(static_cast<int>(profile.dram.latency_cycles.value)) {
    line_shift_ = std::countr_zero(static_cast<unsigned>(line_bytes_));
    const auto interleave = static_cast<std::int64_t>(
        profile.l2.slice_interleave_bytes ? profile.l2.slice_interleave_bytes->value : profile.l2.line_bytes.value);
    interleave_lines_ = std::max<std::int64_t>(1, interleave / line_bytes_);
    const auto fetch = static_cast<int>(profile.dram.fetch_granularity_bytes ? profile.dram.fetch_granularity_bytes->value
                                                                             : profile.l2.sector_bytes.value);
    sectors_per_fetch_ = std::clamp(fetch / sector_bytes_, 1, line_bytes_ / sector_bytes_);
    CacheGeometry l1;
    l1.capacity_bytes = l1_capacity_bytes;
    l1.line_bytes = line_bytes_;
    l1.sector_bytes = sector_bytes_;
    l1.ways = profile.l1.ways ? static_cast<int>(profile.l1.ways->value) : kDefaultL1Ways;
    l1.policy = profile.l1.replacement.policy;
    l1.tracks_writes = false;
    l1_.reserve(static_cast<std::size_t>(sm_count));
    for (std::int64_t sm = 0; sm < sm_count; ++sm) l1_.emplace_back(l1);
    // The simulator's SM s runs the s-th block of each wave: its near partition is that of the
    // SM the hardware deals that block to.
    const std::optional<SmPlacement>& placement = profile.l2.sm_placement;
    for (std::int64_t sm = 0; sm < sm_count; ++sm) {
      near_partition_.push_back(placement ? near_partition_of_block(*placement, sm) : static_cast<int>(sm % partitions_));
    }
    CacheGeometry l2;
    l2.capacity_bytes = static_cast<std::int64_t>(profile.l2.capacity_bytes.value * l2_fraction) / partitions_;
    l2.line_bytes = line_bytes_;
    l2.sector_bytes = sector_bytes_;
    l2.ways = profile.l2.ways ? static_cast<int>(profile.l2.ways->value) : kDefaultL2Ways;
    l2.policy = profile.l2.replacement.policy;
    l2_.reserve(static_cast<std::size_t>(partitions_));
    for (int partition = 0; partition < partitions_; ++partition) l2_.emplace_back(l2);
  }

  int line_shift() const { return line_shift_; }
  int sector_bytes() const { return sector_bytes_; }

  int home_partition(std::uint64_t line) const {
    if (partitions_ == 1) return 0;
    const std::uint64_t hash = mix_bits(line / static_cast<std::uint64_t>(interleave_lines_));
    return static_cast<int>((static_cast<Uint128>(hash) * static_cast<std::uint64_t>(partitions_)) >> 64);
  }
  int near_partition(int sm) const { return near_partition_[static_cast<std::size_t>(sm)]; }

  /// A global load of `request` from `sm`; returns the latency of its slowest sector.
  int load(int sm, const LineRequest& request, TrafficCounts& counts) {
    SectorCache& l1 = l1_[static_cast<std::size_t>(sm)];
    const SectorCache::Probe probed = l1.probe(request.line);
    const std::uint32_t hits = request.sectors & l1.valid_mask(probed.slot);
    counts.l1_hit_sectors += sector_count(hits);
    const std::uint32_t misses = request.sectors & ~hits;
    if (misses == 0) {
      l1.touch(probed.slot);
      return l1_latency_;
    }
    Writeback clean; // L1 lines are never dirty (write-through)
    l1.set_valid(l1.allocate(probed, request.line, clean), misses);
    return l2_read(sm, request.line, misses, counts);
  }

  /// A global store: write-through L1, then the home L2 partition.
  void store(int sm, const LineRequest& request, TrafficCounts& counts) {
    SectorCache& l1 = l1_[static_cast<std::size_t>(sm)];
    const SectorCache::Probe probed = l1.probe(request.line);
    counts.l1_hit_sectors += sector_count(request.sectors & l1.valid_mask(probed.slot));
    if (l1_allocates_on_store_) {
      Writeback clean;
      l1.set_valid(l1.allocate(probed, request.line, clean), request.sectors);
    } else if (probed.slot >= 0) {
      l1.touch(probed.slot);
    }
    // Stores go to the home partition; a stale copy in another partition is not invalidated
    // (the patterns modelled never read what they write).
    const int home = home_partition(request.line);
    SectorCache& partition = l2_[static_cast<std::size_t>(home)];
    const int sectors = sector_count(request.sectors);
    // A far-home store passes through the near partition, and the lts counters count it there
    // too: on the H200, uniformly spread stores measure 1.5x the stored sectors in
    // lts__t_sectors_op_write, all hits (docs/validation-h200.md).
    const int lookups_per_sector = home != near_partition(sm) ? 2 : 1;
    counts.l2_write_lookups += sectors * lookups_per_sector;
    counts.l2_write_line_lookups += lookups_per_sector;
    if (home != near_partition(sm) && l2_allocates_on_store_) counts.l2_write_hits += sectors;
    const SectorCache::Probe probed_home = partition.probe(request.line);
    if (l2_allocates_on_store_) {
      const std::int64_t target = allocate(partition, probed_home, request.line, counts);
      partition.write(target, request.sectors, request.bytes.data());
      counts.l2_write_hits += sectors;
      return;
    }
    const std::int64_t target = probed_home.slot;
    const std::uint32_t present = request.sectors & partition.valid_mask(target);
    counts.l2_write_hits += sector_count(present);
    if (present != 0) {
      partition.touch(target);
      partition.write(target, present, request.bytes.data());
    }
    counts.dram_write_bytes += static_cast<double>(sector_count(request.sectors & ~present)) * sector_bytes_;
  }

  /// Screening: the next blocks would run on other SMs of the device, with their own L1s.
  void invalidate_l1s() {
    for (SectorCache& l1 : l1_) l1.invalidate();
  }

  /// Dirty data left in L2 at the end of the kernel is written to DRAM too.
  void flush(TrafficCounts& counts) {
    for (SectorCache& partition : l2_) account(partition.flush(), counts);
  }

private:
  static constexpr int kDefaultL1Ways = 4;
  static constexpr int kDefaultL2Ways = 16;

  void account(const Writeback& evicted, TrafficCounts& counts) const {
    counts.dram_write_bytes += static_cast<double>(evicted.dirty_sectors) * sector_bytes_;
    // A partly written sector that was never filled is merged by a DRAM read first.
    counts.dram_read_bytes += static_cast<double>(evicted.partial_sectors) * sector_bytes_;
  }

  int l2_read(int sm, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts) {
    const int home = home_partition(line);
    const int near = near_partition(sm);
    if (home == near) return read_home(home, line, sectors, counts, near_latency_);
    // Far-home data: looked up in the near partition first, which keeps a copy.
    SectorCache& near_partition = l2_[static_cast<std::size_t>(near)];
    const Lookup near_lookup = read_lookup(near_partition, line, sectors, counts);
    if (near_lookup.misses == 0) return near_latency_;
    counts.l2_far_read_lookups += sector_count(near_lookup.misses);
    const int latency = read_home(home, line, near_lookup.misses, counts, far_latency_);
    near_partition.set_valid(allocate(near_partition, near_lookup.probed, line, counts), near_lookup.misses);
    return latency;
  }

  struct Lookup {
    SectorCache::Probe probed;
    std::uint32_t misses = 0;
  };

  /// Counts a read lookup of `sectors` (touching the line when all hit).
  Lookup read_lookup(SectorCache& partition, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts) const {
    counts.l2_read_lookups += sector_count(sectors);
    const SectorCache::Probe probed = partition.probe(line);
    const std::uint32_t hits = sectors & partition.valid_mask(probed.slot);
    counts.l2_read_hits += sector_count(hits);
    if (hits == sectors) partition.touch(probed.slot);
    return {probed, sectors & ~hits};
  }

  std::int64_t allocate(SectorCache& partition, const SectorCache::Probe& probed, std::uint64_t line, TrafficCounts& counts) const {
    Writeback evicted;
    const std::int64_t slot = partition.allocate(probed, line, evicted);
    account(evicted, counts);
    return slot;
  }

  int read_home(int home, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts, int hit_latency) {
    SectorCache& partition = l2_[static_cast<std::size_t>(home)];
    const Lookup lookup = read_lookup(partition, line, sectors, counts);
    if (lookup.misses == 0) return hit_latency;
    const std::uint32_t misses = lookup.misses;
    const std::int64_t slot = allocate(partition, lookup.probed, line, counts);
    // DRAM delivers whole fetch granules (e.g. 64 B = two sectors).
    std::uint32_t fetched = 0;
    const std::uint32_t granule = (1u << sectors_per_fetch_) - 1u;
    for (int first = 0; first < partition.sectors_per_line(); first += sectors_per_fetch_) {
      const std::uint32_t mask = granule << first;
      if ((misses & mask) != 0) {
        fetched |= mask;
        counts.dram_read_bytes += static_cast<double>(sectors_per_fetch_) * sector_bytes_;
      }
    }
    partition.set_valid(slot, fetched);
    return dram_latency_;
  }

  int line_bytes_;
  int sector_bytes_;
  int line_shift_ = 7;
  int partitions_;
  std::int64_t interleave_lines_ = 1;
  int sectors_per_fetch_ = 1;
  bool l1_allocates_on_store_;
  bool l2_allocates_on_store_;
  int l1_latency_;
  int near_latency_;
  int far_latency_;
  int dram_latency_;
  std::vector<SectorCache> l1_;
  std::vector<int> near_partition_; ///< by simulated SM
  std::vector<SectorCache> l2_;
};

/// L1 left over next to the shared memory the resident blocks take (they share one array).
std::int64_t l1_capacity_bytes(const KernelPattern& pattern, const DeviceProfile& profile, int resident_blocks) {
  const auto configured = static_cast<std::int64_t>(profile.l1.capacity_bytes.value);
  if (!profile.l1.capacity_max_carveout_bytes) return configured;
  const std::int64_t unified = static_cast<std::int64_t>(profile.l1.capacity_max_carveout_bytes->value);
  const std::int64_t shared = shared_bytes_per_block(pattern) * resident_blocks;
  const auto minimum = static_cast<std::int64_t>(profile.l1.line_bytes.value) * (profile.l1.ways ? static_cast<std::int64_t>(profile.l1.ways->value) : 1);
  return std::clamp(unified - shared, minimum, configured);
}

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
    if (affordable < static_cast<double>(all)) trips[l] = std::min(all, std::max(kMinLoopTrips, static_cast<std::int64_t>(affordable)));
  }
  return trips;
}

/// Executes the phases of the blocks of one wave.
class WaveRunner {
public:
  WaveRunner(const LoweredPattern& lowered, const DeviceProfile& profile, MemorySystem& memory,
             std::int64_t loads_in_flight)
      : lowered_(lowered), memory_(memory), loads_in_flight_(loads_in_flight),
        dram_latency_cycles_(static_cast<int>(profile.dram.latency_cycles.value)), banks_(static_cast<int>(profile.shared_memory.banks.value)),
        bank_width_bytes_(static_cast<int>(profile.shared_memory.bank_width_bytes.value)),
        bank_period_bytes_(std::int64_t{banks_} * bank_width_bytes_),
        line_memos_(lowered.access_count * static_cast<std::size_t>(lowered.warps_per_block)),
        wavefront_memos_(lowered.access_count * static_cast<std::size_t>(lowered.warps_per_block) *
                         static_cast<std::size_t>(bank_period_bytes_)),
        warp_classes_(lowered.access_count * static_cast<std::size_t>(lowered.warps_per_block)) {}

  struct Block {
    std::array<std::int64_t, 3> index{};
    int sm = 0;
  };

  /// Warp instructions plus the cache lines they touched so far: what the work budget limits.
  std::int64_t work() const { return work_; }
  MemorySystem& memory() { return memory_; }
  /// Whether shared-memory accesses are skipped (a warm-up that only fills the caches).
  void set_skip_shared(bool skip) { skip_shared_ = skip; }
  /// Whether global stores are kept (for tally_write_runs) until take_stored_lines.
  void set_keep_stored_lines(bool keep) {
    keep_stored_lines_ = keep;
    for (std::vector<std::uint64_t>& lines : last_store_lines_) lines.clear();
  }
  std::vector<StoredLine> take_stored_lines() { return std::exchange(stored_lines_, {}); }

  /// Runs phase `phase` once for every block of the wave; counts go to `traffic` and `stats`.
  void run_phase(const LoweredPhase& phase, std::int64_t outer_value, const std::vector<Block>& blocks,
                 TrafficCounts& traffic, PhaseCounts& stats) {
    const std::size_t slots = phase.loops.size() + 1;
    std::vector<std::int64_t> loop_values(slots, 0);
    loop_values[static_cast<std::size_t>(phase.outer_slot)] = outer_value;
    for (std::size_t l = 0; l < phase.loops.size(); ++l) loop_values[l] = phase.loops[l].begin;
    // Blocks that run some loop backwards see their own values: one row of `block_values` each.
    const bool reversed = std::any_of(phase.loops.begin(), phase.loops.end(),
                                      [](const Loop& loop) { return loop.reversed_where_odd.has_value(); });
    std::vector<std::int64_t> block_values(reversed ? blocks.size() * slots : 0);
    rounds_.assign(blocks.size() * static_cast<std::size_t>(lowered_.warps_per_block), LoadRound{});
    for (std::int64_t iteration = 0; iteration < phase.iterations; ++iteration) {
      if (reversed) {
        for (std::size_t b = 0; b < blocks.size(); ++b) {
          std::int64_t* values = block_values.data() + b * slots;
          std::copy(loop_values.begin(), loop_values.end(), values);
          for (std::size_t l = 0; l < phase.loops.size(); ++l) {
            const Loop& loop = phase.loops[l];
            if (!loop.reversed_where_odd) continue;
            const auto axis = static_cast<std::size_t>(*loop.reversed_where_odd) - static_cast<std::size_t>(IndexVar::block_x);
            const std::int64_t last = loop.begin + (loop.trip_count() - 1) * loop.step;
            if (blocks[b].index[axis] % 2 != 0) values[l] = loop.begin + last - values[l];
          }
        }
      }
      for (const LoweredAccess& access : phase.accesses) {
        for (std::size_t b = 0; b < blocks.size(); ++b) {
          const std::int64_t* values = reversed ? block_values.data() + b * slots : loop_values.data();
          run_instruction(access, blocks[b], b, values, traffic, stats);
        }
      }
      // Odometer step: innermost loop fastest.
      for (std::size_t l = phase.loops.size(); l-- > 0;) {
        loop_values[l] += phase.loops[l].step;
        if (loop_values[l] < phase.loops[l].end) break;
        loop_values[l] = phase.loops[l].begin;
      }
    }
    for (const LoadRound& round : rounds_) {
      if (round.loads > 0) close_round(round, stats);
    }
  }

private:
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

  struct WarpClass {
    int representative = -1;       ///< -1: not classified yet
    std::int64_t shift_elements = 0; ///< this warp's lane offsets minus the representative's
  };

  void compute_scalars(const LoweredAccess& access, const Block& block, const std::int64_t* loop_values) {
    scalars_.clear();
    auto add = [&](const LoweredExpr& expr) {
      scalars_.push_back(expr.scalar(block.index, loop_values));
      for (const LoweredQuotient& term : expr.quotients) scalars_.push_back(term.inner.scalar(block.index, loop_values));
    };
    for (const LoweredGuard& guard : access.guards) add(guard.value);
    for (const LoweredExpr& dim : access.dims) add(dim);
  }

  /// True when every real lane of `warp` meets every guard and bound (affine accesses only).
  bool whole_warp_inside(const LoweredAccess& access, int warp) const {
    const std::size_t guards = access.guards.size();
    for (std::size_t g = 0; g < guards; ++g) {
      const auto [low, high] = access.guard_lane_ranges[static_cast<std::size_t>(warp) * guards + g];
      if (scalars_[g] + low < access.guards[g].lower || scalars_[g] + high >= access.guards[g].upper) return false;
    }
    if (!access.predicated) return true;
    const std::size_t dims = access.dims.size();
    for (std::size_t d = 0; d < dims; ++d) {
      const auto [low, high] = access.dim_lane_ranges[static_cast<std::size_t>(warp) * dims + d];
      const std::int64_t last = scalars_[guards + d] + high + (d + 1 == dims ? access.vector_elements - 1 : 0);
      if (scalars_[guards + d] + low < 0 || last >= access.extents[d]) return false;
    }
    return true;
  }

  /// Byte address (global) or offset (shared) of every lane that issues; returns the lane mask.
  std::uint32_t lane_addresses(const LoweredAccess& access, int warp) {
    const std::uint32_t present = lowered_.lanes_present[static_cast<std::size_t>(warp)];
    const std::int64_t* lane_values = lowered_.lane_values.data();
    std::uint32_t active = 0;
    const std::size_t dims = access.dims.size();
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      if ((present >> lane & 1u) == 0) continue;
      const auto lane_index = static_cast<std::size_t>(warp * kWarpLanes + lane);
      const std::int64_t* scalar = scalars_.data();
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
      addresses_[static_cast<std::size_t>(lane)] = access.base_bytes + offset * access.element_bytes;
      active |= 1u << lane;
    }
    return active;
  }

  void run_instruction(const LoweredAccess& access, const Block& block, std::size_t block_slot,
                       const std::int64_t* loop_values, TrafficCounts& traffic, PhaseCounts& stats) {
    compute_scalars(access, block, loop_values);
    std::int64_t block_offset = 0;
    if (access.affine_only) {
      for (std::size_t d = 0; d < access.dims.size(); ++d) block_offset += scalars_[access.guards.size() + d] * access.strides[d];
    }
    const std::int64_t warp_base = access.base_bytes + block_offset * access.element_bytes;
    for (int warp = 0; warp < lowered_.warps_per_block; ++warp) {
      // Fast path: an affine warp entirely in bounds has fixed lane offsets, so its coalesced
      // lines / bank wavefronts depend only on the base address modulo a line / the banks.
      const bool whole_warp = access.affine_only && whole_warp_inside(access, warp);
      const std::uint32_t active = whole_warp ? lowered_.lanes_present[static_cast<std::size_t>(warp)] : lane_addresses(access, warp);
      if (active == 0) continue;
      stats.warp_instructions += 1;
      ++work_;
      if (access.shared) {
        if (skip_shared_) continue;
        const SharedCost cost = whole_warp ? memoised_wavefronts(access, warp, warp_base, active)
                                           : shared_wavefronts(addresses_.data(), active, access.access_bytes(), banks_,
                                                               bank_width_bytes_);
        if (access.store) {
          traffic.shared_store_requests += 1;
          traffic.shared_store_wavefronts += cost.wavefronts;
          traffic.shared_store_ideal_wavefronts += cost.ideal_wavefronts;
        } else {
          traffic.shared_load_requests += 1;
          traffic.shared_load_wavefronts += cost.wavefronts;
          traffic.shared_load_ideal_wavefronts += cost.ideal_wavefronts;
          stats.shared_load_instructions += 1;
        }
        continue;
      }
      std::uint64_t line_base = 0;
      const std::vector<LineRequest>* lines = &scattered_lines_;
      if (whole_warp) {
        lines = &memoised_lines(access, warp, warp_base, active);
        line_base = static_cast<std::uint64_t>(warp_base >> memory_.line_shift());
      } else {
        coalesce(access, active, 0);
        scattered_lines_.assign(coalesced_.begin(), coalesced_.end());
      }
      work_ += static_cast<std::int64_t>(lines->size());
      if (access.store) {
        traffic.global_store_requests += 1;
        const bool keep = keep_stored_lines_ && !repeats_last_store(block_slot, warp, *lines, line_base);
        for (LineRequest request : *lines) {
          request.line += line_base;
          traffic.global_store_sectors += sector_count(request.sectors);
          memory_.store(block.sm, request, traffic);
          if (keep) stored_lines_.push_back({request.line, static_cast<std::uint32_t>(block_slot), static_cast<std::uint32_t>(warp)});
        }
      } else {
        traffic.global_load_requests += 1;
        int latency = 0;
        for (LineRequest request : *lines) {
          request.line += line_base;
          traffic.global_load_sectors += sector_count(request.sectors);
          latency = std::max(latency, memory_.load(block.sm, request, traffic));
        }
        stats.global_load_instructions += 1;
        stats.load_latency_cycles += latency;
        LoadRound& round = rounds_[block_slot * static_cast<std::size_t>(lowered_.warps_per_block) + static_cast<std::size_t>(warp)];
        round.slowest_cycles = std::max(round.slowest_cycles, latency);
        if (++round.loads == loads_in_flight_) {
          close_round(round, stats);
          round = LoadRound{};
        }
      }
    }
  }

  /// Lines of a whole-warp affine access relative to the line of `warp_base`, cached per
  /// (access, warp) for the last base offset within a line.
  const std::vector<LineRequest>& memoised_lines(const LoweredAccess& access, int warp, std::int64_t warp_base,
                                                 std::uint32_t active) {
    LineMemo& memo = line_memos_[access.id * static_cast<std::size_t>(lowered_.warps_per_block) + static_cast<std::size_t>(warp)];
    const std::int64_t line_bytes = std::int64_t{1} << memory_.line_shift();
    const std::int64_t key = warp_base & (line_bytes - 1);
    if (memo.key != key) {
      fill_whole_warp_addresses(access, warp, warp_base);
      coalesce(access, active, static_cast<std::uint64_t>(warp_base >> memory_.line_shift()));
      memo.lines.assign(coalesced_.begin(), coalesced_.end());
      memo.key = key;
    }
    return memo.lines;
  }

  SharedCost memoised_wavefronts(const LoweredAccess& access, int warp, std::int64_t warp_base, std::uint32_t active) {
    // One entry per base offset modulo the bank period: loops that step the base through a
    // tile (gemm's k loop) revisit the same few offsets, each counted once per simulation;
    // warps whose lanes are a translate of an earlier warp's share its entries.
    const WarpClass& shape = warp_class(access, warp);
    const std::int64_t period = bank_period_bytes_;
    const std::int64_t shifted = warp_base + shape.shift_elements * access.element_bytes;
    const std::int64_t key = ((shifted % period) + period) % period;
    WavefrontMemo& memo =
        wavefront_memos_[(access.id * static_cast<std::size_t>(lowered_.warps_per_block) +
                          static_cast<std::size_t>(shape.representative)) *
                             static_cast<std::size_t>(period) +
                         static_cast<std::size_t>(key)];
    if (!memo.known) {
      fill_whole_warp_addresses(access, warp, warp_base);
      memo.cost = shared_wavefronts(addresses_.data(), active, access.access_bytes(), banks_, bank_width_bytes_);
      memo.known = true;
    }
    return memo.cost;
  }

  /// The earlier warp whose lane offsets (of `access`) equal this warp's up to a shift, or
  /// this warp itself; found once per (access, warp).
  const WarpClass& warp_class(const LoweredAccess& access, int warp) {
    const auto warps = static_cast<std::size_t>(lowered_.warps_per_block);
    WarpClass& found = warp_classes_[access.id * warps + static_cast<std::size_t>(warp)];
    if (found.representative >= 0) return found;
    const std::int64_t* offsets = access.lane_offsets.data();
    const std::uint32_t present = lowered_.lanes_present[static_cast<std::size_t>(warp)];
    auto offset = [&](int w, int lane) { return offsets[static_cast<std::size_t>(w * kWarpLanes + lane)]; };
    found = {warp, 0};
    for (int other = 0; other < warp; ++other) {
      if (warp_classes_[access.id * warps + static_cast<std::size_t>(other)].representative != other) continue;
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

  void fill_whole_warp_addresses(const LoweredAccess& access, int warp, std::int64_t warp_base) {
    const std::int64_t* lane_offsets = access.lane_offsets.data() + static_cast<std::size_t>(warp * kWarpLanes);
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      addresses_[static_cast<std::size_t>(lane)] = warp_base + lane_offsets[lane] * access.element_bytes;
    }
  }

  /// Merges the active lanes into distinct lines (stored relative to `line_base`) in coalesced_.
  void coalesce(const LoweredAccess& access, std::uint32_t active, std::uint64_t line_base) {
    coalescer_.reset();
    const int shift = memory_.line_shift();
    const std::int64_t sector_bytes = memory_.sector_bytes();
    const int sector_shift = std::countr_zero(static_cast<unsigned>(sector_bytes));
    const std::int64_t line_bytes = std::int64_t{1} << shift;
    const std::int64_t bytes = access.access_bytes();
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      if ((active >> lane & 1u) == 0) continue;
      const std::int64_t first = addresses_[static_cast<std::size_t>(lane)];
      const std::int64_t last = first + bytes - 1;
      for (std::int64_t line = first >> shift; line <= last >> shift; ++line) {
        const std::int64_t low = std::max(first, line << shift) & (line_bytes - 1);
        const std::int64_t high = std::min(last, ((line + 1) << shift) - 1) & (line_bytes - 1);
        const auto first_sector = static_cast<int>(low >> sector_shift);
        const auto last_sector = static_cast<int>(high >> sector_shift);
        LineRequest& request = coalescer_.line(static_cast<std::uint64_t>(line) - line_base);
        request.sectors |= bit_range(first_sector, last_sector);
        if (!access.store) continue;
        for (int s = first_sector; s <= last_sector; ++s) {
          const auto from = static_cast<int>(s == first_sector ? low & (sector_bytes - 1) : 0);
          const auto to = static_cast<int>(s == last_sector ? high & (sector_bytes - 1) : sector_bytes - 1);
          request.bytes[static_cast<std::size_t>(s)] |= bit_range(from, to);
        }
      }
    }
    coalesced_.clear();
    for (int i = 0; i < coalescer_.count(); ++i) coalesced_.push_back(coalescer_[i]);
  }

  /// Whether this warp's store touches exactly the lines of its previous store (a gemm thread
  /// tile's columns do, one store per column): kept once, the tally's sort stays small.
  bool repeats_last_store(std::size_t block_slot, int warp, const std::vector<LineRequest>& lines, std::uint64_t line_base) {
    const std::size_t index = block_slot * static_cast<std::size_t>(lowered_.warps_per_block) + static_cast<std::size_t>(warp);
    if (index >= last_store_lines_.size()) last_store_lines_.resize(index + 1);
    std::vector<std::uint64_t>& last = last_store_lines_[index];
    const bool same = last.size() == lines.size() &&
                      std::equal(lines.begin(), lines.end(), last.begin(),
                                 [&](const LineRequest& request, std::uint64_t line) { return request.line + line_base == line; });
    if (!same) {
      last.clear();
      for (const LineRequest& request : lines) last.push_back(request.line + line_base);
    }
    return same;
  }

  const LoweredPattern& lowered_;
  MemorySystem& memory_;
  std::int64_t loads_in_flight_;
  int dram_latency_cycles_; ///< a round this slow waited for DRAM
  std::vector<LoadRound> rounds_; ///< per (block of the wave, warp), during a phase run
  int banks_;
  int bank_width_bytes_;
  std::int64_t bank_period_bytes_; ///< banks x bank width: shifting a warp's offsets by it keeps its banks
  struct LineMemo {
    std::int64_t key = -1;
    std::vector<LineRequest> lines;
  };
  struct WavefrontMemo {
    bool known = false;
    SharedCost cost;
  };

  std::vector<std::int64_t> scalars_;
  std::array<std::int64_t, kWarpLanes> addresses_{};
  Coalescer coalescer_;
  std::vector<LineRequest> coalesced_;
  std::vector<LineRequest> scattered_lines_;
  std::vector<LineMemo> line_memos_;
  std::vector<WavefrontMemo> wavefront_memos_;
  std::vector<WarpClass> warp_classes_;
  std::int64_t work_ = 0;
  bool skip_shared_ = false;
  bool keep_stored_lines_ = false;
  std::vector<StoredLine> stored_lines_;
  std::vector<std::vector<std::uint64_t>> last_store_lines_; ///< per (block of the wave, warp)
};

void check_profile_supported(const DeviceProfile& profile) {
  const double line = profile.l1.line_bytes.value;
  const double sector = profile.l1.sector_bytes.value;
  if (line != profile.l2.line_bytes.value || sector != profile.l2.sector_bytes.value) {
    throw InputError("profile: the model needs equal L1 and L2 line and sector sizes");
  }
  if (sector > 32 || line / sector > kMaxSectorsPerLine) {
    throw InputError("profile: the model supports sectors up to 32 bytes and at most 8 sectors per line");
  }
  if (profile.shared_memory.banks.value > 64) throw InputError("profile: the model supports at most 64 shared-memory banks");
}

} // namespace

SimulationRun run_simulation(const KernelPattern& pattern, const DeviceProfile& profile, const SimulationOptions& options,
                             int blocks_per_sm) {
  check_profile_supported(profile);
  const LoweredPattern lowered = lower_pattern(pattern);
  const std::int64_t total_blocks = pattern.grid.count();
  if (options.simulated_sm_count < 0) {
    throw InputError("simulated_sm_count must not be negative, got " + std::to_string(options.simulated_sm_count));
  }
  const std::int64_t device_sm_count = profile.device.sm_count;
  const std::int64_t sm_count =
      options.simulated_sm_count > 0 ? std::min<std::int64_t>(device_sm_count, options.simulated_sm_count) : device_sm_count;
  // Screening keeps the whole L2: it sees the same blocks in the same order as with every SM
  // (a scaled-down L2 would lose the reuse between block rows a stencil relies on).
  const bool screening = sm_count < device_sm_count;
  const std::int64_t wave_blocks = sm_count * blocks_per_sm;
  const std::vector<std::int64_t> simulated_trips = plan_loop_trips(lowered, options, wave_blocks);
  std::int64_t block_limit =
      options.max_simulated_blocks > 0
          ? std::min(total_blocks, (options.max_simulated_blocks + wave_blocks - 1) / wave_blocks * wave_blocks)
          : total_blocks;
  // Runs blocks [begin, end) as one wave (SM = position in the wave).
  std::vector<WaveRunner::Block> blocks;
  // `write_runs`: where the wave's stores are tallied (the sample's waves only).
  auto run_wave = [&](WaveRunner& runner, std::int64_t begin, std::int64_t end, std::vector<TrafficCounts>& traffic,
                      std::vector<PhaseCounts>& stats, WriteRuns* write_runs = nullptr) {
    // The blocks of the previous screening wave ran on SMs these ones do not use.
    if (screening) runner.memory().invalidate_l1s();
    blocks.clear();
    for (std::int64_t b = begin; b < end; ++b) {
      const std::array<std::int64_t, 3> index = {b % pattern.grid.x, (b / pattern.grid.x) % pattern.grid.y,
                                                 b / (pattern.grid.x * pattern.grid.y)};
      blocks.push_back({index, static_cast<int>((b - begin) % sm_count)});
    }
    runner.set_keep_stored_lines(write_runs != nullptr);
    for (std::size_t p = 0; p < lowered.phases.size();) {
      const LoweredPhase& phase = lowered.phases[p];
      if (phase.phase_loop < 0) {
        runner.run_phase(phase, 0, blocks, traffic[0], stats[p]);
        ++p;
        continue;
      }
      const PhaseLoop& loop = lowered.phase_loops[static_cast<std::size_t>(phase.phase_loop)];
      const std::int64_t trips = simulated_trips[static_cast<std::size_t>(phase.phase_loop)];
      TrafficCounts& segment = traffic[1 + static_cast<std::size_t>(phase.phase_loop)];
      for (std::int64_t trip = 0; trip < trips; ++trip) {
        for (std::size_t q = loop.first_phase; q < loop.first_phase + loop.phase_count; ++q) {
          runner.run_phase(lowered.phases[q], loop.loop.begin + trip * loop.loop.step, blocks, segment, stats[q]);
        }
      }
      p = loop.first_phase + loop.phase_count;
    }
    if (write_runs != nullptr) tally_write_runs(runner.take_stored_lines(), write_run_rule(profile.calibration), *write_runs);
  };

  std::int64_t first_block = 0;
  std::int64_t budget_blocks = 1; ///< blocks whose work is one budget
  double block_footprint_bytes = 0; ///< bytes one block reads from DRAM cold, plus its stores
  if (options.work_budget > 0) {
    const double budget = static_cast<double>(options.work_budget);
    // Work of one block (instructions and the lines they touch), measured on a scratch machine.
    // Work does not depend on cache state, so the smallest memory system will do.
    MemorySystem scratch_memory(profile, l1_capacity_bytes(pattern, profile, blocks_per_sm), 1,
                                1.0 / static_cast<double>(device_sm_count));
    WaveRunner scratch(lowered, profile, scratch_memory, pattern.loads_in_flight);
    std::vector<TrafficCounts> scratch_traffic(1 + lowered.phase_loops.size());
    std::vector<PhaseCounts> scratch_stats(lowered.phases.size());
    run_wave(scratch, total_blocks / 2, total_blocks / 2 + 1, scratch_traffic, scratch_stats);
    const auto block_work = static_cast<double>(std::max<std::int64_t>(1, scratch.work()));
    budget_blocks = std::max<std::int64_t>(1, static_cast<std::int64_t>(budget / block_work));
    for (const TrafficCounts& counts : scratch_traffic) {
      block_footprint_bytes += counts.dram_read_bytes + counts.global_store_sectors * profile.l2.sector_bytes.value;
    }
    if (block_work * static_cast<double>(wave_blocks) > budget) {
      // Even one wave is over budget: simulate part of one wave, the same number of blocks
      // on every SM (at least one each).
      const auto rounds = static_cast<std::int64_t>(budget / block_work / static_cast<double>(sm_count));
      block_limit = std::min(block_limit, std::max<std::int64_t>(1, rounds) * sm_count);
    }
    // A sample is taken from the middle of the grid, away from the boundary blocks whose
    // guards make them unlike the bulk; it starts cold, like the kernel.
    const auto expected = std::max<std::int64_t>(sm_count, static_cast<std::int64_t>(budget / block_work));
    if (expected < total_blocks) first_block = (total_blocks - std::min(expected, block_limit)) / 2 / sm_count * sm_count;
  }
  const std::int64_t last_block = std::min(total_blocks, first_block + block_limit);

  MemorySystem memory(profile, l1_capacity_bytes(pattern, profile, blocks_per_sm), sm_count, 1.0);
  WaveRunner runner(lowered, profile, memory, pattern.loads_in_flight);
  // Counts per segment: 0 outside phase loops, 1 + l inside phase loop l (scaled by its trips).
  std::vector<TrafficCounts> segments(1 + lowered.phase_loops.size());
  std::vector<PhaseCounts> phase_counts(lowered.phases.size());
  WriteRuns write_runs;

  if (first_block > 0) {
    // Warm-up: the blocks just before the sample fill the caches (e.g. the halo rows a
    // stencil shares with its upper neighbours); their counts and dirty data are discarded.
    const std::int64_t window = std::min(block_limit, total_blocks - first_block);
    // Screening's sample is too small to warm up on: it warms the L2 with the row of blocks
    // before the sample instead (what a stencil's upper halo needs), at most one budget's
    // work, skipping shared memory, which leaves nothing in the caches.
    const std::int64_t warm_up =
        screening ? std::min({first_block, budget_blocks, pattern.grid.x})
                  : std::min(first_block, std::max<std::int64_t>(1, std::min(wave_blocks / 4, window / 2)));
    std::vector<TrafficCounts> discarded_traffic(segments.size());
    std::vector<PhaseCounts> discarded_stats(phase_counts.size());
    runner.set_skip_shared(screening);
    // A 3D grid's blocks share data with the layer below (a stencil3d chunk's halo planes are
    // the chunk below's last ones), further back than the warm-up reaches. The sample's blocks
    // one layer down run first when the blocks between touch less than the L2 holds, so the
    // device finds that data in L2 too (H200, 8-plane chunks at n=256: 71 MB read; a sample
    // that missed the layer below predicted 79 MB, every halo plane from DRAM).
    const std::int64_t layer_blocks = pattern.grid.x * pattern.grid.y;
    if (pattern.grid.z > 1 && layer_blocks > warm_up && first_block >= layer_blocks &&
        static_cast<double>(layer_blocks) * block_footprint_bytes <= profile.l2.capacity_bytes.value) {
      // In steps of the sample's waves, as much work as the sample gets: one budget.
      const std::int64_t end = first_block - warm_up;
      const std::int64_t step = std::min(wave_blocks, window);
      const std::int64_t start_work = runner.work();
      for (std::int64_t begin = first_block - layer_blocks; begin < end && runner.work() - start_work < options.work_budget;
           begin += step) {
        run_wave(runner, begin, std::min(end, begin + step), discarded_traffic, discarded_stats);
      }
      // Those blocks ran long before the sample, their L1 lines gone with them: only L2 keeps
      // their planes.
      memory.invalidate_l1s();
    }
    run_wave(runner, first_block - warm_up, first_block, discarded_traffic, discarded_stats);
    runner.set_skip_shared(false);
    memory.flush(discarded_traffic[0]);
  }
  const std::int64_t warm_up_work = runner.work();
  std::int64_t simulated_blocks = 0;
  while (first_block + simulated_blocks < last_block &&
         (options.work_budget == 0 || simulated_blocks == 0 || runner.work() - warm_up_work < options.work_budget)) {
    const std::int64_t wave_start = first_block + simulated_blocks;
    const std::int64_t wave_end = std::min(last_block, wave_start + wave_blocks);
    simulated_blocks = wave_end - first_block;
    // The sample's first wave stands for the rest in the write-run tally (its sort of every
    // stored line is the costly part; the later waves of a sample repeat its layout).
    run_wave(runner, wave_start, wave_end, segments, phase_counts, wave_start == first_block ? &write_runs : nullptr);
  }
  memory.flush(segments[0]);

  SimulationRun run;
  run.write_runs = std::move(write_runs);
  run.total_blocks = total_blocks;
  run.blocks_per_sm = blocks_per_sm;
  run.warps_per_block = lowered.warps_per_block;
  const double block_scale = static_cast<double>(total_blocks) / static_cast<double>(simulated_blocks);
  double simulated_work = static_cast<double>(simulated_blocks) / static_cast<double>(total_blocks);
  run.traffic.add_scaled(segments[0], block_scale);
  std::vector<double> loop_scale;
  for (std::size_t l = 0; l < lowered.phase_loops.size(); ++l) {
    const auto all = static_cast<double>(lowered.phase_loops[l].loop.trip_count());
    const auto simulated = static_cast<double>(simulated_trips[l]);
    loop_scale.push_back(simulated > 0 ? all / simulated : 0.0);
    run.traffic.add_scaled(segments[1 + l], block_scale * loop_scale.back());
    if (simulated < all) simulated_work *= simulated / all;
  }
  for (std::size_t p = 0; p < lowered.phases.size(); ++p) {
    const int loop = lowered.phases[p].phase_loop;
    PhaseCounts scaled;
    scaled.add_scaled(phase_counts[p], block_scale * (loop < 0 ? 1.0 : loop_scale[static_cast<std::size_t>(loop)]));
    scaled.runs_per_block =
        loop < 0 ? 1.0 : static_cast<double>(lowered.phase_loops[static_cast<std::size_t>(loop)].loop.trip_count());
    run.phases.push_back(scaled);
  }
  run.simulated_fraction = simulated_work;
  run.sampled = simulated_work < 1.0 || screening;
  return run;
}

} // namespace cachewise::detail
