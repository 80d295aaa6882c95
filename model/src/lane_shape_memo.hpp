// A memo of what a warp instruction's lanes cost, by their shape: the active lanes' offsets
// from the first active lane, that lane's offset within a period (a line for the coalescer,
// banks x bank width for shared memory), the bytes per lane and whether it stores. Instructions
// of one shape coalesce into the same lines relative to the first lane's line, and hit the same
// banks: a trace's loops repeat a few shapes at many bases, so each is worked out once.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace cachewise::detail {

template <typename Value>
class LaneShapeMemo {
public:
  struct Key {
    std::uint32_t mask = 0;
    std::uint32_t bytes = 0;
    bool store = false;
    std::uint64_t phase = 0;
    std::array<std::uint64_t, 32> relative{}; ///< inactive lanes 0
    friend bool operator==(const Key&, const Key&) = default;
  };

  /// `period` a power of two.
  explicit LaneShapeMemo(std::uint64_t period) : period_(period), entries_(kEntries) {}

  /// The value for the shape of `addresses` under `mask` (not 0), and whether it was known;
  /// an unknown one is to be filled by the caller. The address of the first active lane is
  /// the reference the value is relative to.
  Value& find(const std::array<std::uint64_t, 32>& addresses, std::uint32_t mask, int bytes, bool store, bool& known) {
    const std::uint64_t base = addresses[static_cast<std::size_t>(std::countr_zero(mask))];
    key_.mask = mask;
    key_.bytes = static_cast<std::uint32_t>(bytes);
    key_.store = store;
    key_.phase = base & (period_ - 1);
    std::uint64_t hash = (mask * 0x9E3779B97F4A7C15ULL) ^ (key_.phase << 8) ^ (static_cast<std::uint64_t>(bytes) << 1) ^
                         (store ? 1u : 0u);
    for (std::size_t lane = 0; lane < 32; ++lane) {
      key_.relative[lane] = (mask >> lane & 1u) != 0 ? addresses[lane] - base : 0;
      hash = (hash ^ key_.relative[lane]) * 0xBF58476D1CE4E5B9ULL;
    }
    Entry& entry = entries_[static_cast<std::size_t>(hash >> 54)];
    known = entry.valid && entry.key == key_;
    if (!known) {
      entry.key = key_;
      entry.valid = true;
    }
    return entry.value;
  }

private:
  static constexpr std::size_t kEntries = 1024; // hash >> 54: 10 bits
  struct Entry {
    bool valid = false;
    Key key;
    Value value{};
  };
  std::uint64_t period_;
  Key key_;
  std::vector<Entry> entries_;
};

} // namespace cachewise::detail
