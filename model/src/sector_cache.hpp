// A sectored, set-associative cache: one slot per line (tag, recency stamp) with per-sector
// valid and dirty bits and, for stores that cover part of a sector, per-sector byte masks.
// Flat arrays, no allocation after construction: this is the simulator's inner loop.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "cachewise/model.hpp"

namespace cachewise::detail {

/// splitmix64 finaliser: spreads line addresses over sets and partitions like a hardware hash.
inline std::uint64_t mix_bits(std::uint64_t value) {
  value ^= value >> 30;
  value *= 0xbf58476d1ce4e5b9ULL;
  value ^= value >> 27;
  value *= 0x94d049bb133111ebULL;
  value ^= value >> 31;
  return value;
}

struct CacheGeometry {
  std::int64_t capacity_bytes = 0;
  int line_bytes = 128;
  int sector_bytes = 32;
  int ways = 4;
  ReplacementPolicy policy = ReplacementPolicy::lru;
  bool hashed_sets = false;  ///< false: set = line % sets (predictable, what the L1 tests rely on)
  bool tracks_writes = true; ///< keep per-byte write masks (L2); a write-through L1 needs none
};

/// What an eviction wrote back: dirty sectors, and how many of them were only partly written
/// and never filled (DRAM must read those to merge: read-modify-write).
struct Writeback {
  int dirty_sectors = 0;
  int partial_sectors = 0;
};

class SectorCache {
public:
  explicit SectorCache(const CacheGeometry& geometry)
      : ways_(geometry.ways), sectors_per_line_(geometry.line_bytes / geometry.sector_bytes),
        full_sector_mask_(geometry.sector_bytes >= 32 ? 0xffffffffu : (1u << geometry.sector_bytes) - 1u),
        policy_(geometry.policy), hashed_sets_(geometry.hashed_sets) {
    const std::int64_t lines = geometry.capacity_bytes / geometry.line_bytes;
    sets_ = std::max<std::int64_t>(1, lines / ways_);
    const std::size_t slots = static_cast<std::size_t>(sets_ * ways_);
    tags_.assign(slots, 0);
    stamps_.assign(slots, 0);
    valid_.assign(slots, 0);
    dirty_.assign(slots, 0);
    if (geometry.tracks_writes) written_bytes_.assign(slots * static_cast<std::size_t>(sectors_per_line_), 0);
  }

  int sectors_per_line() const { return sectors_per_line_; }

  /// Slot holding `line`, or -1. Does not touch recency.
  std::int64_t find(std::uint64_t line) const {
    const std::int64_t first = set_of(line) * ways_;
    const std::uint64_t tag = line + 1; // 0 marks an empty slot
    for (std::int64_t slot = first; slot < first + ways_; ++slot) {
      if (tags_[static_cast<std::size_t>(slot)] == tag) return slot;
    }
    return -1;
  }

  std::uint32_t valid_mask(std::int64_t slot) const { return slot < 0 ? 0u : valid_[static_cast<std::size_t>(slot)]; }

  void touch(std::int64_t slot) {
    if (policy_ != ReplacementPolicy::fifo) stamps_[static_cast<std::size_t>(slot)] = ++clock_;
  }

  /// Slot for `line`, allocating (and evicting) when absent; `evicted` reports a dirty victim.
  std::int64_t find_or_allocate(std::uint64_t line, Writeback& evicted) {
    const std::int64_t found = find(line);
    if (found >= 0) {
      touch(found);
      return found;
    }
    const std::int64_t slot = victim(line);
    const auto index = static_cast<std::size_t>(slot);
    if (tags_[index] != 0) evicted = write_back(slot);
    tags_[index] = line + 1;
    valid_[index] = 0;
    dirty_[index] = 0;
    stamps_[index] = ++clock_;
    return slot;
  }

  void set_valid(std::int64_t slot, std::uint32_t sectors) { valid_[static_cast<std::size_t>(slot)] |= sectors; }

  void invalidate(std::uint64_t line, std::uint32_t sectors) {
    const std::int64_t slot = find(line);
    if (slot >= 0) valid_[static_cast<std::size_t>(slot)] &= ~sectors;
  }

  /// Records written bytes (one mask per sector, bit i = byte i); a sector fully written
  /// becomes valid without a fill.
  void write(std::int64_t slot, std::uint32_t sectors, const std::uint32_t* byte_masks) {
    const auto index = static_cast<std::size_t>(slot);
    dirty_[index] |= sectors;
    for (int s = 0; s < sectors_per_line_; ++s) {
      if ((sectors >> s & 1u) == 0) continue;
      std::uint32_t& bytes = written_bytes_[index * static_cast<std::size_t>(sectors_per_line_) + static_cast<std::size_t>(s)];
      bytes |= byte_masks[s];
      if ((bytes & full_sector_mask_) == full_sector_mask_) valid_[index] |= 1u << s;
    }
  }

  /// Writes back every dirty line (end of kernel) and reports the totals.
  Writeback flush() {
    Writeback total;
    for (std::int64_t slot = 0; slot < static_cast<std::int64_t>(tags_.size()); ++slot) {
      if (tags_[static_cast<std::size_t>(slot)] == 0) continue;
      const Writeback one = write_back(slot);
      total.dirty_sectors += one.dirty_sectors;
      total.partial_sectors += one.partial_sectors;
    }
    return total;
  }

private:
  std::int64_t set_of(std::uint64_t line) const {
    const std::uint64_t key = hashed_sets_ ? mix_bits(line) : line;
    return static_cast<std::int64_t>(key % static_cast<std::uint64_t>(sets_));
  }

  std::int64_t victim(std::uint64_t line) {
    const std::int64_t first = set_of(line) * ways_;
    for (std::int64_t slot = first; slot < first + ways_; ++slot) {
      if (tags_[static_cast<std::size_t>(slot)] == 0) return slot;
    }
    if (policy_ == ReplacementPolicy::random) {
      random_state_ = mix_bits(random_state_ + 1);
      return first + static_cast<std::int64_t>(random_state_ % static_cast<std::uint64_t>(ways_));
    }
    // LRU (and FIFO, whose stamps are insertion times); PLRU/adaptive/unknown are modelled as LRU.
    std::int64_t oldest = first;
    for (std::int64_t slot = first + 1; slot < first + ways_; ++slot) {
      if (stamps_[static_cast<std::size_t>(slot)] < stamps_[static_cast<std::size_t>(oldest)]) oldest = slot;
    }
    return oldest;
  }

  Writeback write_back(std::int64_t slot) {
    const auto index = static_cast<std::size_t>(slot);
    Writeback result;
    const std::uint32_t dirty = dirty_[index];
    result.dirty_sectors = std::popcount(dirty);
    result.partial_sectors = std::popcount(dirty & ~valid_[index]);
    if (dirty == 0) return result;
    for (int s = 0; s < sectors_per_line_; ++s) {
      written_bytes_[index * static_cast<std::size_t>(sectors_per_line_) + static_cast<std::size_t>(s)] = 0;
    }
    dirty_[index] = 0;
    return result;
  }

  std::int64_t sets_ = 1;
  std::int64_t ways_ = 1;
  int sectors_per_line_ = 4;
  std::uint32_t full_sector_mask_ = 0xffffffffu;
  ReplacementPolicy policy_ = ReplacementPolicy::lru;
  bool hashed_sets_ = false;
  std::uint64_t clock_ = 0;
  std::uint64_t random_state_ = 0;
  std::vector<std::uint64_t> tags_;
  std::vector<std::uint64_t> stamps_;
  std::vector<std::uint32_t> valid_;
  std::vector<std::uint32_t> dirty_;
  std::vector<std::uint32_t> written_bytes_;
};

} // namespace cachewise::detail
