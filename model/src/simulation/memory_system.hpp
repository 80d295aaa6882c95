// The memory hierarchy a warp's global accesses go through: one L1 per simulated SM, the
// partitioned L2 and DRAM, with the profile's geometry and policies (docs/model.md, "Memory system").
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cachewise/model/profile/device_profile.hpp"
#include "simulation/coalescer.hpp"
#include "simulation/sector_cache.hpp"
#include "simulation/simulation_run.hpp"

namespace cachewise::detail {

class MemorySystem {
public:
  /// `sm_count` SMs with their own L1 (screening simulates fewer than the device has) and the
  /// whole L2, scaled by `l2_fraction` (the scratch system that only measures work needs little).
  MemorySystem(const DeviceProfile& profile, std::int64_t l1_capacity_bytes, std::int64_t sm_count, double l2_fraction);

  int line_shift() const { return line_shift_; }
  int sector_bytes() const { return sector_bytes_; }
  int home_partition(std::uint64_t line) const;
  int near_partition(int sm) const { return near_partition_[static_cast<std::size_t>(sm)]; }

  /// A global load of `request` from `sm`; returns the latency of its slowest sector.
  int load(int sm, const LineRequest& request, TrafficCounts& counts);
  /// A global store: write-through L1, then the home L2 partition. Returns the sectors it
  /// makes DRAM write on its own: those it dirtied in L2 that were clean, or wrote past it.
  int store(int sm, const LineRequest& request, TrafficCounts& counts);
  /// Screening: the next blocks would run on other SMs of the device, with their own L1s.
  void invalidate_l1s();
  /// Dirty data left in L2 at the end of the kernel is written to DRAM too.
  void flush(TrafficCounts& counts);

private:
  static constexpr int kDefaultL1Ways = 4;
  static constexpr int kDefaultL2Ways = 16;

  struct Lookup {
    SectorCache::Probe probed;
    std::uint32_t misses = 0;
  };

  void account(const Writeback& evicted, TrafficCounts& counts) const;
  int l2_read(int sm, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts);
  /// Counts a read lookup of `sectors` (touching the line when all hit).
  Lookup read_lookup(SectorCache& partition, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts) const;
  std::int64_t allocate(SectorCache& partition, const SectorCache::Probe& probed, std::uint64_t line,
                        TrafficCounts& counts) const;
  int read_home(int home, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts, int hit_latency);

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
  ZeroedArray<std::byte> l1_slots_; ///< before l1_: destroyed after the caches zero what they used
  std::vector<SectorCache> l1_;
  std::vector<int> near_partition_; ///< by simulated SM
  std::vector<SectorCache> l2_;
};

// The per-access paths, inline: the runners call them once per line touched.

inline int MemorySystem::home_partition(std::uint64_t line) const {
  if (partitions_ == 1) return 0;
  const std::uint64_t hash = mix_bits(line / static_cast<std::uint64_t>(interleave_lines_));
  return static_cast<int>((static_cast<Uint128>(hash) * static_cast<std::uint64_t>(partitions_)) >> 64);
}

inline int MemorySystem::load(int sm, const LineRequest& request, TrafficCounts& counts) {
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

inline int MemorySystem::store(int sm, const LineRequest& request, TrafficCounts& counts) {
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
    counts.l2_write_hits += sectors;
    return partition.write(target, request.sectors, request.bytes.data());
  }
  const std::int64_t target = probed_home.slot;
  const std::uint32_t present = request.sectors & partition.valid_mask(target);
  counts.l2_write_hits += sector_count(present);
  int newly_dirty = 0;
  if (present != 0) {
    partition.touch(target);
    newly_dirty = partition.write(target, present, request.bytes.data());
  }
  const int past = sector_count(request.sectors & ~present);
  counts.dram_write_bytes += static_cast<double>(past) * sector_bytes_;
  return newly_dirty + past;
}

inline void MemorySystem::account(const Writeback& evicted, TrafficCounts& counts) const {
  counts.dram_write_bytes += static_cast<double>(evicted.dirty_sectors) * sector_bytes_;
  // A partly written sector that was never filled is merged by a DRAM read first.
  counts.dram_read_bytes += static_cast<double>(evicted.partial_sectors) * sector_bytes_;
}

inline int MemorySystem::l2_read(int sm, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts) {
  const int home = home_partition(line);
  const int near = near_partition(sm);
  if (home == near) return read_home(home, line, sectors, counts, near_latency_);
  // Far-home data: looked up in the near partition first, which keeps a copy.
  SectorCache& near_partition = l2_[static_cast<std::size_t>(near)];
  const Lookup near_lookup = read_lookup(near_partition, line, sectors, counts);
  if (near_lookup.misses == 0) return near_latency_;
  const int latency = read_home(home, line, near_lookup.misses, counts, far_latency_);
  near_partition.set_valid(allocate(near_partition, near_lookup.probed, line, counts), near_lookup.misses);
  return latency;
}

inline MemorySystem::Lookup MemorySystem::read_lookup(SectorCache& partition, std::uint64_t line, std::uint32_t sectors,
                                                      TrafficCounts& counts) const {
  counts.l2_read_lookups += sector_count(sectors);
  const SectorCache::Probe probed = partition.probe(line);
  const std::uint32_t hits = sectors & partition.valid_mask(probed.slot);
  counts.l2_read_hits += sector_count(hits);
  if (hits == sectors) partition.touch(probed.slot);
  return {probed, sectors & ~hits};
}

inline std::int64_t MemorySystem::allocate(SectorCache& partition, const SectorCache::Probe& probed, std::uint64_t line,
                                           TrafficCounts& counts) const {
  Writeback evicted;
  const std::int64_t slot = partition.allocate(probed, line, evicted);
  account(evicted, counts);
  return slot;
}

inline int MemorySystem::read_home(int home, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts,
                                   int hit_latency) {
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

/// L1 left over next to the shared memory the resident blocks take (they share one array).
std::int64_t l1_capacity_bytes(std::int64_t shared_bytes_per_block, const DeviceProfile& profile, int resident_blocks);

/// Throws InputError for a profile whose geometry the model cannot simulate.
void check_profile_supported(const DeviceProfile& profile);

} // namespace cachewise::detail
