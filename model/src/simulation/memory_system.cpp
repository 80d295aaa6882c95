// The memory hierarchy: per-SM L1s, partitioned L2, DRAM.
#include "simulation/memory_system.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <string>

#include "cachewise/model/profile/sm_placement.hpp"

namespace cachewise::detail {

MemorySystem::MemorySystem(const DeviceProfile& profile, std::int64_t l1_capacity_bytes, std::int64_t sm_count,
                           double l2_fraction)
    : line_bytes_(static_cast<int>(profile.l1.line_bytes.value)),
      sector_bytes_(static_cast<int>(profile.l1.sector_bytes.value)),
      partitions_(profile.l2.partitions),
      l1_allocates_on_store_(profile.l1.allocates_on_store.value),
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
  // Every SM's L1 slots in one array, each at the stride of the largest L1: a buffer of a few
  // MB (huge pages: the L1 probes then miss the host's TLB less) whose size depends only on
  // the SM count, so the pool hands the next simulation the same one.
  CacheGeometry largest = l1;
  largest.capacity_bytes = std::max(l1_capacity_bytes, static_cast<std::int64_t>(profile.l1.capacity_bytes.value));
  const std::size_t stride = (SectorCache::storage_bytes(largest) + 63) / 64 * 64;
  l1_slots_ = ZeroedArray<std::byte>(stride * static_cast<std::size_t>(sm_count));
  l1_.reserve(static_cast<std::size_t>(sm_count));
  for (std::int64_t sm = 0; sm < sm_count; ++sm)
    l1_.emplace_back(l1, l1_slots_.data() + stride * static_cast<std::size_t>(sm));
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

void MemorySystem::invalidate_l1s() {
  for (SectorCache& l1 : l1_) l1.invalidate();
}

void MemorySystem::flush(TrafficCounts& counts) {
  for (SectorCache& partition : l2_) account(partition.flush(), counts);
}

/// L1 left over next to the shared memory the resident blocks take (they share one array).
std::int64_t l1_capacity_bytes(std::int64_t shared_bytes_per_block, const DeviceProfile& profile, int resident_blocks) {
  const auto configured = static_cast<std::int64_t>(profile.l1.capacity_bytes.value);
  if (!profile.l1.capacity_max_carveout_bytes) return configured;
  const std::int64_t unified = static_cast<std::int64_t>(profile.l1.capacity_max_carveout_bytes->value);
  const std::int64_t shared = shared_bytes_per_block * resident_blocks;
  const auto minimum = static_cast<std::int64_t>(profile.l1.line_bytes.value) *
                       (profile.l1.ways ? static_cast<std::int64_t>(profile.l1.ways->value) : 1);
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
  if (profile.shared_memory.banks.value > 64)
    throw InputError("profile: the model supports at most 64 shared-memory banks");
}

} // namespace cachewise::detail
