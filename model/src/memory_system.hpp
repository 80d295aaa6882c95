// The memory hierarchy a warp's global accesses go through: one L1 per simulated SM, the
// partitioned L2 and DRAM, with the profile's geometry and policies (docs/model.md, "Memory system").
#pragma once

#include <cstdint>
#include <vector>

#include "cachewise/model.hpp"
#include "coalescer.hpp"
#include "sector_cache.hpp"
#include "simulation.hpp"

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
  /// A global store: write-through L1, then the home L2 partition.
  void store(int sm, const LineRequest& request, TrafficCounts& counts);
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
  std::int64_t allocate(SectorCache& partition, const SectorCache::Probe& probed, std::uint64_t line, TrafficCounts& counts) const;
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
  std::vector<SectorCache> l1_;
  std::vector<int> near_partition_; ///< by simulated SM
  std::vector<SectorCache> l2_;
};

/// L1 left over next to the shared memory the resident blocks take (they share one array).
std::int64_t l1_capacity_bytes(std::int64_t shared_bytes_per_block, const DeviceProfile& profile, int resident_blocks);

/// Throws InputError for a profile whose geometry the model cannot simulate.
void check_profile_supported(const DeviceProfile& profile);

} // namespace cachewise::detail
