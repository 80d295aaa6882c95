// A sectored, set-associative cache: one slot per line (tag, recency stamp) with per-sector
// valid and dirty bits and, for stores that cover part of a sector, per-sector byte masks.
// Flat arrays, no allocation after construction: this is the simulator's inner loop.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <sys/mman.h>
#include <utility>
#include <vector>

#include "cachewise/model/profile/device_profile.hpp"

namespace cachewise::detail {

__extension__ using Uint128 = unsigned __int128; // GCC/Clang builtin; the extension marker keeps -Wpedantic quiet

/// splitmix64 finaliser: spreads line addresses over sets and partitions like a hardware hash.
inline std::uint64_t mix_bits(std::uint64_t value) {
  value ^= value >> 30;
  value *= 0xbf58476d1ce4e5b9ULL;
  value ^= value >> 27;
  value *= 0x94d049bb133111ebULL;
  value ^= value >> 31;
  return value;
}

/// Zero-filled buffers kept per thread: a simulation hands its caches' buffers back zeroed
/// (clearing only the sets it used), and the next one on the thread takes them without the
/// page faults of fresh memory (an H200 L2 is 20 MB of state; the advisor runs hundreds).
class ZeroedBufferPool {
public:
  static void* acquire(std::size_t bytes) {
    std::vector<Buffer>& free = buffers();
    for (std::size_t i = 0; i < free.size(); ++i) {
      if (free[i].bytes != bytes) continue;
      void* pointer = free[i].pointer;
      free[i] = free.back();
      free.pop_back();
      return pointer;
    }
    if (bytes >= kHugePageBytes) return map_huge_pages(bytes);
    void* pointer = std::calloc(bytes == 0 ? 1 : bytes, 1);
    if (!pointer) throw std::bad_alloc();
    return pointer;
  }
  /// `pointer` must be all zero again.
  static void release(void* pointer, std::size_t bytes) {
    std::vector<Buffer>& free = buffers();
    if (free.size() >= kMaxBuffers) {
      deallocate(pointer, bytes);
      return;
    }
    free.push_back({pointer, bytes});
  }

private:
  // A large buffer (an L2 partition's slots) is mapped on 2 MiB boundaries and asks for
  // transparent huge pages: its first touches then fault a few dozen times, not thousands (a
  // fault costs microseconds in a virtual machine: 4 KiB pages were half of a one-candidate run).
  static constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
  static std::size_t huge_mapping_bytes(std::size_t bytes) {
    return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  }
  static void* map_huge_pages(std::size_t bytes) {
    const std::size_t length = huge_mapping_bytes(bytes);
    // Mapped one huge page longer, then trimmed to an aligned start: fresh anonymous pages are zero.
    void* mapped = mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<std::uintptr_t>(mapped);
    const std::uintptr_t aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    if (aligned > start) munmap(mapped, aligned - start);
    const std::uintptr_t tail = start + length + kHugePageBytes - (aligned + length);
    if (tail > 0) munmap(reinterpret_cast<void*>(aligned + length), tail);
#ifdef MADV_HUGEPAGE
    madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE); // advice only: 4 KiB pages also work
#endif
    return reinterpret_cast<void*>(aligned);
  }
  static void deallocate(void* pointer, std::size_t bytes) {
    if (bytes >= kHugePageBytes) {
      munmap(pointer, huge_mapping_bytes(bytes));
    } else {
      std::free(pointer);
    }
  }

  static constexpr std::size_t kMaxBuffers = 1024; // enough for every SM's L1 and the L2 partitions
  struct Buffer {
    void* pointer;
    std::size_t bytes;
  };
  struct Buffers {
    std::vector<Buffer> list;
    ~Buffers() {
      for (const Buffer& buffer : list) deallocate(buffer.pointer, buffer.bytes);
    }
  };
  static std::vector<Buffer>& buffers() {
    thread_local Buffers pool;
    return pool.list;
  }
};

/// A zero-filled array from the pool, starting on a host cache line (a 4-way L1 set of
/// 16-byte slots is then one host line, not two); its owner zeroes what it wrote before it goes.
template <typename T>
class ZeroedArray {
public:
  static constexpr std::size_t kAlignmentBytes = 64;

  ZeroedArray() = default;
  explicit ZeroedArray(std::size_t count)
      : buffer_(ZeroedBufferPool::acquire(count * sizeof(T) + kAlignmentBytes),
                Release{count * sizeof(T) + kAlignmentBytes}) {
    const auto address = reinterpret_cast<std::uintptr_t>(buffer_.get());
    data_ = reinterpret_cast<T*>((address + kAlignmentBytes - 1) / kAlignmentBytes * kAlignmentBytes);
  }
  /// A part of a larger zeroed array that its owner keeps (and gets back zeroed).
  static ZeroedArray view(T* data) {
    ZeroedArray array;
    array.data_ = data;
    return array;
  }
  ZeroedArray(ZeroedArray&& other) noexcept
      : buffer_(std::move(other.buffer_)), data_(std::exchange(other.data_, nullptr)) {}
  ZeroedArray& operator=(ZeroedArray&& other) noexcept {
    buffer_ = std::move(other.buffer_);
    data_ = std::exchange(other.data_, nullptr);
    return *this;
  }

  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* data() const { return data_; }
  explicit operator bool() const { return data_ != nullptr; }

private:
  struct Release {
    std::size_t bytes = 0;
    void operator()(void* pointer) const { ZeroedBufferPool::release(pointer, bytes); }
  };
  std::unique_ptr<void, Release> buffer_;
  T* data_ = nullptr;
};

/// Number of set bits in a sector mask (at most 8 sectors per line): a table lookup, since
/// std::popcount is a library call on builds without the popcnt instruction.
inline int sector_count(std::uint32_t mask) {
  static constexpr auto kTable = [] {
    std::array<std::uint8_t, 256> table{};
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<std::uint8_t>(std::popcount(i));
    return table;
  }();
  return kTable[mask & 0xffu];
}

struct CacheGeometry {
  std::int64_t capacity_bytes = 0;
  int line_bytes = 128;
  int sector_bytes = 32;
  int ways = 4;
  ReplacementPolicy policy = ReplacementPolicy::lru;
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
  static constexpr std::uint64_t kHashChunkLines = 32;

  /// Bytes of slot storage a cache of `geometry` needs (SectorCache(geometry, storage)).
  static std::size_t storage_bytes(const CacheGeometry& geometry) {
    const std::int64_t sets = std::max<std::int64_t>(1, geometry.capacity_bytes / geometry.line_bytes / geometry.ways);
    return static_cast<std::size_t>(sets * geometry.ways) * sizeof(Slot);
  }

  /// A cache of `geometry` whose slots live in `storage`: zeroed, 64-byte aligned, at least
  /// storage_bytes(geometry), kept by the caller until this cache is gone (it leaves them zeroed).
  SectorCache(const CacheGeometry& geometry, void* storage) : SectorCache(geometry, false) {
    slots_ = ZeroedArray<Slot>::view(static_cast<Slot*>(storage));
  }

  explicit SectorCache(const CacheGeometry& geometry) : SectorCache(geometry, true) {}

private:
  SectorCache(const CacheGeometry& geometry, bool own_slots)
      : ways_(geometry.ways),
        sectors_per_line_(geometry.line_bytes / geometry.sector_bytes),
        full_sector_mask_(geometry.sector_bytes >= 32 ? 0xffffffffu : (1u << geometry.sector_bytes) - 1u),
        policy_(geometry.policy),
        tracks_writes_(geometry.tracks_writes) {
    const std::int64_t lines = geometry.capacity_bytes / geometry.line_bytes;
    sets_ = std::max<std::int64_t>(1, lines / ways_);
    const std::size_t slots = static_cast<std::size_t>(sets_ * ways_);
    if (own_slots) slots_ = ZeroedArray<Slot>(slots);
    if (geometry.tracks_writes) {
      written_bytes_ = ZeroedArray<std::uint32_t>(slots * static_cast<std::size_t>(sectors_per_line_));
    }
  }

public:
  int sectors_per_line() const { return sectors_per_line_; }

  SectorCache(SectorCache&&) = default;
  SectorCache& operator=(SectorCache&&) = delete;
  ~SectorCache() { invalidate(); }

  /// Empties the cache, dirty data included (nothing is written back), touching only what
  /// was used: the sets that hold lines, in each its filled ways (a prefix, see probe), and
  /// the write masks of dirty slots only (write_back clears a slot's masks with its dirt).
  void invalidate() {
    if (!slots_) return; // moved from
    for (const std::int64_t set : touched_sets_) {
      const auto first = static_cast<std::size_t>(set * ways_);
      for (std::size_t slot = first; slot < first + static_cast<std::size_t>(ways_) && slots_[slot].tag != 0; ++slot) {
        const bool dirty = slots_[slot].dirty != 0;
        slots_[slot] = Slot{};
        if (!tracks_writes_ || !dirty) continue;
        for (std::size_t s = 0; s < static_cast<std::size_t>(sectors_per_line_); ++s) {
          written_bytes_[slot * static_cast<std::size_t>(sectors_per_line_) + s] = 0;
        }
      }
    }
    touched_sets_.clear();
    dirty_slots_.clear();
  }

  /// Where `line` lives: its set's first slot and its slot, or -1 when absent.
  struct Probe {
    std::int64_t first = 0;
    std::int64_t slot = -1;
    std::int64_t empty = -1; ///< when absent: the set's first empty way (-1: the set is full)
  };

  /// Looks `line` up without touching recency. A set fills its ways in order and empties
  /// only as a whole (invalidate), so its lines are a prefix of its ways: the first empty
  /// way ends the search (a partly filled L2's misses read one host cache line, not four).
  Probe probe(std::uint64_t line) const {
    Probe result{set_of(line) * ways_, -1};
    const std::uint64_t tag = line + 1; // 0 marks an empty slot
    for (std::int64_t slot = result.first; slot < result.first + ways_; ++slot) {
      const std::uint64_t held = slots_[static_cast<std::size_t>(slot)].tag;
      if (held == tag) {
        result.slot = slot;
        break;
      }
      if (held == 0) {
        result.empty = slot;
        break;
      }
    }
    return result;
  }

  std::uint32_t valid_mask(std::int64_t slot) const {
    return slot < 0 ? 0u : slots_[static_cast<std::size_t>(slot)].valid;
  }

  void touch(std::int64_t slot) {
    if (policy_ != ReplacementPolicy::fifo) slots_[static_cast<std::size_t>(slot)].stamp = ++clock_;
  }

  /// The probed slot (touched), or a fresh one for `line` (evicting); `evicted` reports a dirty victim.
  std::int64_t allocate(const Probe& probed, std::uint64_t line, Writeback& evicted) {
    if (probed.slot >= 0) {
      touch(probed.slot);
      return probed.slot;
    }
    const std::int64_t slot = victim(probed);
    const auto index = static_cast<std::size_t>(slot);
    Slot& fresh = slots_[index];
    // An empty set fills its first way first: that fill is the set's first use.
    if (slot == probed.first && fresh.tag == 0) touched_sets_.push_back(probed.first / ways_);
    if (fresh.tag != 0 && tracks_writes_) evicted = write_back(slot);
    fresh.tag = line + 1;
    fresh.valid = 0;
    fresh.stamp = ++clock_;
    return slot;
  }

  void set_valid(std::int64_t slot, std::uint32_t sectors) {
    slots_[static_cast<std::size_t>(slot)].valid |= static_cast<std::uint8_t>(sectors);
  }

  /// Records written bytes (one mask per sector, bit i = byte i); a sector fully written
  /// becomes valid without a fill. Returns the sectors that were clean before.
  int write(std::int64_t slot, std::uint32_t sectors, const std::uint32_t* byte_masks) {
    const auto index = static_cast<std::size_t>(slot);
    Slot& target = slots_[index];
    const int newly_dirty = sector_count(sectors & ~static_cast<std::uint32_t>(target.dirty));
    if (target.dirty == 0) dirty_slots_.push_back(slot);
    target.dirty |= static_cast<std::uint8_t>(sectors);
    for (std::uint32_t rest = sectors; rest != 0; rest &= rest - 1) {
      const int s = std::countr_zero(rest);
      std::uint32_t& bytes =
          written_bytes_[index * static_cast<std::size_t>(sectors_per_line_) + static_cast<std::size_t>(s)];
      bytes |= byte_masks[s];
      if ((bytes & full_sector_mask_) == full_sector_mask_) target.valid |= static_cast<std::uint8_t>(1u << s);
    }
    return newly_dirty;
  }

  /// Writes back every dirty line (end of kernel) and reports the totals.
  Writeback flush() {
    Writeback total;
    for (std::int64_t slot : dirty_slots_) {
      const Writeback one = write_back(slot);
      total.dirty_sectors += one.dirty_sectors;
      total.partial_sectors += one.partial_sectors;
    }
    dirty_slots_.clear();
    return total;
  }

private:
  std::int64_t set_of(std::uint64_t line) const {
    // Chunks of kHashChunkLines consecutive lines land on consecutive sets (so streaming stays
    // cheap for the host's caches); chunks are spread by a hash, like the hardware's set hash,
    // so power-of-two strides (matrix rows and columns) do not pile onto a few sets.
    // Multiply-shift maps the hash onto [0, sets) without a division.
    const std::uint64_t chunk_hash = mix_bits(line / kHashChunkLines);
    const auto start =
        static_cast<std::int64_t>((static_cast<Uint128>(chunk_hash) * static_cast<std::uint64_t>(sets_)) >> 64);
    const std::int64_t set = start + static_cast<std::int64_t>(line % kHashChunkLines);
    return set >= sets_ ? set % sets_ : set;
  }

  /// The probe's first empty way when still empty, else the first empty way, else by policy.
  std::int64_t victim(const Probe& probed) {
    const auto empty = static_cast<std::size_t>(probed.empty);
    if (probed.empty >= 0 && slots_[empty].tag == 0 && (probed.empty == probed.first || slots_[empty - 1].tag != 0))
      return probed.empty;
    const std::int64_t first = probed.first;
    for (std::int64_t slot = first; slot < first + ways_; ++slot) {
      if (slots_[static_cast<std::size_t>(slot)].tag == 0) return slot;
    }
    if (policy_ == ReplacementPolicy::random) {
      random_state_ = mix_bits(random_state_ + 1);
      return first + static_cast<std::int64_t>(random_state_ % static_cast<std::uint64_t>(ways_));
    }
    // LRU (and FIFO, whose stamps are insertion times); PLRU/adaptive/unknown are modelled as LRU.
    std::int64_t oldest = first;
    for (std::int64_t slot = first + 1; slot < first + ways_; ++slot) {
      if (slots_[static_cast<std::size_t>(slot)].stamp < slots_[static_cast<std::size_t>(oldest)].stamp) oldest = slot;
    }
    return oldest;
  }

  Writeback write_back(std::int64_t slot) {
    const auto index = static_cast<std::size_t>(slot);
    Writeback result;
    Slot& victim = slots_[index];
    const std::uint32_t dirty = victim.dirty;
    result.dirty_sectors = sector_count(dirty);
    result.partial_sectors = sector_count(dirty & ~static_cast<std::uint32_t>(victim.valid));
    if (dirty == 0) return result;
    for (int s = 0; s < sectors_per_line_; ++s) {
      written_bytes_[index * static_cast<std::size_t>(sectors_per_line_) + static_cast<std::size_t>(s)] = 0;
    }
    victim.dirty = 0;
    return result;
  }

  std::int64_t sets_ = 1;
  std::int64_t ways_ = 1;
  int sectors_per_line_ = 4;
  std::uint32_t full_sector_mask_ = 0xffffffffu;
  ReplacementPolicy policy_ = ReplacementPolicy::lru;
  std::uint32_t clock_ = 0;
  std::uint64_t random_state_ = 0;
  bool tracks_writes_ = true;
  /// One line's state, 16 bytes, a set's ways side by side: a lookup touches few host cache lines.
  struct Slot {
    std::uint64_t tag;   ///< line + 1; 0 = empty
    std::uint32_t stamp; ///< recency (LRU) or insertion (FIFO) order; wraps after 2^32 touches
    std::uint8_t valid;  ///< sectors holding data
    std::uint8_t dirty;  ///< sectors written since the fill
  };
  ZeroedArray<Slot> slots_;
  ZeroedArray<std::uint32_t> written_bytes_;
  std::vector<std::int64_t> touched_sets_; ///< sets that hold or held a line: what invalidate() clears
  std::vector<std::int64_t> dirty_slots_;  ///< slots that became dirty (may repeat; flush skips clean ones)
};

} // namespace cachewise::detail
