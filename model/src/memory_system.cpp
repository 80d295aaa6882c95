// The memory hierarchy: per-SM L1s, partitioned L2, DRAM.
#include "memory_system.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <string>

namespace cachewise::detail {

MemorySystem::MemorySystem(const DeviceProfile& profile, std::int64_t l1_capacity_bytes, std::int64_t sm_count, double l2_fraction)
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

int MemorySystem::home_partition(std::uint64_t line) const {
  if (partitions_ == 1) return 0;
  const std::uint64_t hash = mix_bits(line / static_cast<std::uint64_t>(interleave_lines_));
  return static_cast<int>((static_cast<Uint128>(hash) * static_cast<std::uint64_t>(partitions_)) >> 64);
}

int MemorySystem::load(int sm, const LineRequest& request, TrafficCounts& counts) {
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

void MemorySystem::store(int sm, const LineRequest& request, TrafficCounts& counts) {
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

void MemorySystem::invalidate_l1s() {
  for (SectorCache& l1 : l1_) l1.invalidate();
}

void MemorySystem::flush(TrafficCounts& counts) {
  for (SectorCache& partition : l2_) account(partition.flush(), counts);
}

void MemorySystem::account(const Writeback& evicted, TrafficCounts& counts) const {
  counts.dram_write_bytes += static_cast<double>(evicted.dirty_sectors) * sector_bytes_;
  // A partly written sector that was never filled is merged by a DRAM read first.
  counts.dram_read_bytes += static_cast<double>(evicted.partial_sectors) * sector_bytes_;
}

int MemorySystem::l2_read(int sm, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts) {
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

MemorySystem::Lookup MemorySystem::read_lookup(SectorCache& partition, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts) const {
  counts.l2_read_lookups += sector_count(sectors);
  const SectorCache::Probe probed = partition.probe(line);
  const std::uint32_t hits = sectors & partition.valid_mask(probed.slot);
  counts.l2_read_hits += sector_count(hits);
  if (hits == sectors) partition.touch(probed.slot);
  return {probed, sectors & ~hits};
}

std::int64_t MemorySystem::allocate(SectorCache& partition, const SectorCache::Probe& probed, std::uint64_t line, TrafficCounts& counts) const {
  Writeback evicted;
  const std::int64_t slot = partition.allocate(probed, line, evicted);
  account(evicted, counts);
  return slot;
}

int MemorySystem::read_home(int home, std::uint64_t line, std::uint32_t sectors, TrafficCounts& counts, int hit_latency) {
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
std::int64_t l1_capacity_bytes(std::int64_t shared_bytes_per_block, const DeviceProfile& profile, int resident_blocks) {
  const auto configured = static_cast<std::int64_t>(profile.l1.capacity_bytes.value);
  if (!profile.l1.capacity_max_carveout_bytes) return configured;
  const std::int64_t unified = static_cast<std::int64_t>(profile.l1.capacity_max_carveout_bytes->value);
  const std::int64_t shared = shared_bytes_per_block * resident_blocks;
  const auto minimum = static_cast<std::int64_t>(profile.l1.line_bytes.value) * (profile.l1.ways ? static_cast<std::int64_t>(profile.l1.ways->value) : 1);
  return std::clamp(unified - shared, minimum, configured);
}


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


} // namespace cachewise::detail
