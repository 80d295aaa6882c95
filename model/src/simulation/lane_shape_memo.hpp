// Lane shapes: a warp instruction's active lanes by their offsets from the first active lane.
// Instructions of one shape coalesce into the same lines relative to the first lane's line
// (given its offset within the line) and hit the same banks (given its offset within the bank
// period): a trace's loops repeat a few shapes at many bases, so the simulator interns each
// shape once (LaneShapes) and works out its lines or wavefronts once per offset (ShapeMemo).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace cachewise::detail {

using LaneOffsets = std::array<std::uint64_t, 32>;

/// Interned lane shapes: the mask, the bytes per lane and every active lane's offset from the
/// first (wrapping: lanes below it have offsets past 2^63).
class LaneShapes {
public:
  /// The shape of `addresses` under `mask` (not 0). `instruction` (the step's static
  /// instruction, or negative) is a hint: an instruction mostly repeats its last shape, which
  /// is then found by one comparison instead of a hash lookup.
  std::uint32_t intern(const LaneOffsets& addresses, std::uint32_t mask, std::uint32_t bytes,
                       std::int32_t instruction) {
    const std::uint64_t base = addresses[static_cast<std::size_t>(std::countr_zero(mask))];
    const auto relative = [&](std::size_t lane) { return (mask >> lane & 1u) != 0 ? addresses[lane] - base : 0; };
    std::uint32_t* last = nullptr;
    if (instruction >= 0 && instruction < kHintedInstructions) {
      const auto at = static_cast<std::size_t>(instruction);
      if (at >= last_of_instruction_.size()) last_of_instruction_.resize(at + 1, kNone);
      last = &last_of_instruction_[at];
      if (*last != kNone && shapes_[*last].mask == mask && shapes_[*last].bytes == bytes) {
        const LaneOffsets& known = shapes_[*last].relative;
        bool same = true;
        for (std::size_t lane = 0; lane < 32; ++lane) same &= relative(lane) == known[lane];
        if (same) return *last;
      }
    }
    Shape shape;
    shape.mask = mask;
    shape.bytes = bytes;
    for (std::size_t lane = 0; lane < 32; ++lane) shape.relative[lane] = relative(lane);
    const auto [found, inserted] = ids_.try_emplace(shape, static_cast<std::uint32_t>(shapes_.size()));
    if (inserted) shapes_.push_back(shape);
    if (last != nullptr) *last = found->second;
    return found->second;
  }
  std::size_t size() const { return shapes_.size(); }
  void clear() {
    ids_.clear();
    shapes_.clear();
    last_of_instruction_.clear();
  }

  /// The lanes' addresses of an instruction of `shape` whose first active lane is at `base`;
  /// returns the shape's mask.
  std::uint32_t addresses(std::uint32_t shape, std::uint64_t base, std::int64_t* out) const {
    const LaneOffsets& relative = shapes_[shape].relative;
    for (std::size_t lane = 0; lane < 32; ++lane) out[lane] = static_cast<std::int64_t>(base + relative[lane]);
    return shapes_[shape].mask;
  }

private:
  struct Shape {
    std::uint32_t mask = 0;
    std::uint32_t bytes = 0;
    LaneOffsets relative{};
    friend bool operator==(const Shape&, const Shape&) = default;
  };
  struct ShapeHash {
    /// Four independent multiply chains over the lanes (one chain of 32 multiplies was most
    /// of a trace's compaction time).
    std::size_t operator()(const Shape& shape) const {
      constexpr std::uint64_t kMultiplier = 0xBF58476D1CE4E5B9ULL;
      std::array<std::uint64_t, 4> chains = {
          (shape.mask ^ static_cast<std::uint64_t>(shape.bytes) << 32) * 0x9E3779B97F4A7C15ULL, 1, 2, 3};
      for (std::size_t lane = 0; lane < 32; lane += 4) {
        for (std::size_t c = 0; c < 4; ++c) chains[c] = (chains[c] ^ shape.relative[lane + c]) * kMultiplier;
      }
      const std::uint64_t hash =
          chains[0] ^ std::rotl(chains[1], 16) ^ std::rotl(chains[2], 32) ^ std::rotl(chains[3], 48);
      return static_cast<std::size_t>(hash ^ (hash >> 31));
    }
  };
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  static constexpr std::int32_t kHintedInstructions = 1 << 16; // a trace's indices are the caller's: bounded table
  std::unordered_map<Shape, std::uint32_t, ShapeHash> ids_;
  std::vector<Shape> shapes_;
  std::vector<std::uint32_t> last_of_instruction_; ///< by static instruction: its last shape, or kNone
};

/// What an instruction of a shape costs, by the first lane's offset within `period` (a power
/// of two) and whether it stores: a direct-mapped table, the caller fills an unknown entry.
template <typename Value>
class ShapeMemo {
public:
  explicit ShapeMemo(std::uint64_t period) : period_(period), entries_(kEntries) {}

  void clear() {
    for (Entry& entry : entries_) entry.valid = false;
  }

  Value& find(std::uint32_t shape, std::uint64_t base, bool store, bool& known) {
    const Key key{shape, base & (period_ - 1), store};
    const std::uint64_t hash =
        ((static_cast<std::uint64_t>(shape) << 20 ^ key.phase << 1 ^ (store ? 1u : 0u)) * 0x9E3779B97F4A7C15ULL) >>
        (64 - kIndexBits);
    Entry& entry = entries_[static_cast<std::size_t>(hash)];
    known = entry.valid && entry.key == key;
    if (!known) {
      entry.key = key;
      entry.valid = true;
    }
    return entry.value;
  }

private:
  static constexpr int kIndexBits = 12;
  static constexpr std::size_t kEntries = std::size_t{1} << kIndexBits;
  struct Key {
    std::uint32_t shape = 0;
    std::uint64_t phase = 0;
    bool store = false;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct Entry {
    bool valid = false;
    Key key;
    Value value{};
  };
  std::uint64_t period_;
  std::vector<Entry> entries_;
};

} // namespace cachewise::detail
