// The coalescer: the byte ranges the lanes of one global warp instruction touch, merged into
// the 128 B lines they fall in, with the 32 B sectors (and, for stores, the bytes) of each.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace cachewise::detail {

constexpr int kMaxSectorsPerLine = 8;

/// One line touched by a warp instruction: which sectors, and for stores which bytes.
struct LineRequest {
  std::uint64_t line = 0;
  std::uint32_t sectors = 0;
  std::array<std::uint32_t, kMaxSectorsPerLine> bytes{};
};

/// Bits first..last (inclusive) set.
inline std::uint32_t bit_range(int first, int last) {
  const std::uint32_t upper = last >= 31 ? 0xffffffffu : (1u << (last + 1)) - 1u;
  return upper & ~((1u << first) - 1u);
}

/// Merges byte ranges into distinct lines (a small open-addressed table: a scattered warp
/// touches up to 64 lines and a linear search would dominate). Spills split a lane's access
/// into one range per 4-byte word, so up to 4 x 32 ranges of up to 2 lines each can come in.
class Coalescer {
public:
  /// Line size 2^line_shift and sector size in bytes.
  Coalescer(int line_shift, int sector_bytes) : line_shift_(line_shift), sector_bytes_(sector_bytes) {}

  /// Clears the table; lines are then stored relative to `line_base`.
  void reset(std::uint64_t line_base) {
    for (int i = 0; i < count_; ++i) table_[used_[static_cast<std::size_t>(i)]] = 0;
    count_ = 0;
    last_ = -1;
    line_base_ = line_base;
  }

  /// Adds the `bytes` bytes from `first_byte` (marking the bytes written when `store`).
  void add(std::int64_t first_byte, std::int64_t bytes, bool store) {
    const std::int64_t line_bytes = std::int64_t{1} << line_shift_;
    const int sector_shift = std::countr_zero(static_cast<unsigned>(sector_bytes_));
    const std::int64_t last_byte = first_byte + bytes - 1;
    for (std::int64_t line = first_byte >> line_shift_; line <= last_byte >> line_shift_; ++line) {
      const std::int64_t low = std::max(first_byte, line << line_shift_) & (line_bytes - 1);
      const std::int64_t high = std::min(last_byte, ((line + 1) << line_shift_) - 1) & (line_bytes - 1);
      const auto first_sector = static_cast<int>(low >> sector_shift);
      const auto last_sector = static_cast<int>(high >> sector_shift);
      LineRequest& request = find(static_cast<std::uint64_t>(line) - line_base_);
      request.sectors |= bit_range(first_sector, last_sector);
      if (!store) continue;
      for (int s = first_sector; s <= last_sector; ++s) {
        const auto from = static_cast<int>(s == first_sector ? low & (sector_bytes_ - 1) : 0);
        const auto to = static_cast<int>(s == last_sector ? high & (sector_bytes_ - 1) : sector_bytes_ - 1);
        request.bytes[static_cast<std::size_t>(s)] |= bit_range(from, to);
      }
    }
  }

  /// The active lanes of one warp instruction, each moving `bytes` from `addresses[lane]`.
  void add_lanes(const std::int64_t* addresses, std::uint32_t active, std::int64_t bytes, bool store) {
    for (int lane = 0; lane < 32; ++lane) {
      if ((active >> lane & 1u) != 0) add(addresses[lane], bytes, store);
    }
  }

  /// The lines merged since reset, in the order first touched.
  void copy_lines(std::vector<LineRequest>& lines) const { lines.assign(lines_.begin(), lines_.begin() + count_); }

private:
  static constexpr std::size_t kTableSize = 512;
  static constexpr std::size_t kMaxLines = 256;

  LineRequest& find(std::uint64_t line) {
    if (last_ >= 0 && lines_[static_cast<std::size_t>(last_)].line == line)
      return lines_[static_cast<std::size_t>(last_)];
    std::size_t slot = static_cast<std::size_t>((line * 0x9E3779B97F4A7C15ULL) >> 55);
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

  int line_shift_;
  int sector_bytes_;
  std::uint64_t line_base_ = 0;
  std::array<std::int16_t, kTableSize> table_{};
  std::array<std::size_t, kMaxLines> used_{};
  std::array<LineRequest, kMaxLines> lines_{};
  int count_ = 0;
  int last_ = -1;
};

} // namespace cachewise::detail
