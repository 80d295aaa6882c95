// The lane-dependent part of an access whose index has lane quotients (gemm's tile sweeps:
// (t + i*threads) / bk). Such a quotient's value for a lane depends only on its inner scalar
// (i*threads), not on the block or the k step, so the lanes' parts are worked out once per
// distinct set of quotient scalars and then reused: every lane value is the guard's or
// dimension's lane-independent scalar plus its part. Exact, like lane_addresses, without its
// per-lane divisions.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "simulation/coalescer.hpp"
#include "simulation/lowered_pattern.hpp"
#include "simulation/shared_banks.hpp"

namespace cachewise::detail {

/// What a warp instruction with fixed lane offsets gives (its lines relative to its base's
/// line, or its bank wavefronts), by its issuing lanes and its base's offset within a line or
/// the bank period: the last few of them (a warp at the grid's edge alternates with inner ones).
template <typename Value>
class MaskMemo {
public:
  /// The entry for (`offset`, `active`); a new one, for the caller to fill, when `known` is false.
  Value& find(std::int64_t offset, std::uint32_t active, bool& known) {
    for (Entry& entry : entries_) {
      if (entry.used && entry.offset == offset && entry.active == active) {
        known = true;
        return entry.value;
      }
    }
    Entry& entry = entries_[next_];
    next_ = (next_ + 1) % kEntries;
    entry.used = true;
    entry.offset = offset;
    entry.active = active;
    known = false;
    return entry.value;
  }
  void clear() {
    for (Entry& entry : entries_) entry.used = false;
  }

private:
  static constexpr std::size_t kEntries = 8; // a gemm thread tile's 8 columns: 8 base offsets
  struct Entry {
    bool used = false;
    std::int64_t offset = 0;
    std::uint32_t active = 0;
    Value value{};
  };
  std::array<Entry, kEntries> entries_;
  std::size_t next_ = 0;
};

using LineMemo = MaskMemo<std::vector<LineRequest>>;
using WavefrontMemo = MaskMemo<SharedCost>;

/// Per (access, warp): recent quotient scalars and what each gives the lanes.
class LanePartMemo {
public:
  /// One set of quotient scalars and the lanes' parts under it, with the memos of a warp whose
  /// lanes all issue (they depend only on the parts and the base's offset in a line / the banks).
  struct Part {
    std::vector<std::int64_t> key;                             ///< the quotient scalars
    std::vector<std::int64_t> values;                          ///< per (guard then dim, lane)
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges; ///< per guard then dim: [min, max] over real lanes
    std::array<std::int64_t, kWarpLanes> flat_offsets{};       ///< sum of the dims' parts x strides (elements)
    LineMemo lines;
    WavefrontMemo wavefronts;
  };

  /// The part for the quotient scalars in `scalars` (access_scalars' layout), computed on a miss.
  Part& find(const LoweredPattern& lowered, const LoweredAccess& access, int warp, const std::int64_t* scalars) {
    key_.clear();
    for_each_expr(access, [&](const LoweredExpr& expr, std::size_t position, std::size_t) {
      key_.insert(key_.end(), scalars + position + 1, scalars + position + 1 + expr.quotients.size());
    });
    if (!parts_.empty()) {
      for (std::size_t tried = 0, i = last_; tried < parts_.size(); ++tried, i = (i + 1) % parts_.size()) {
        if (parts_[i].key == key_) return parts_[last_ = i];
      }
    }
    if (parts_.size() < kMaxParts) {
      parts_.emplace_back();
      last_ = parts_.size() - 1;
    } else {
      last_ = victim_;
      victim_ = (victim_ + 1) % kMaxParts;
    }
    Part& part = parts_[last_];
    fill(lowered, access, warp, scalars, part);
    return part;
  }

  /// Calls visit(expr, position of its scalars, guard-then-dim index) for every guard, then dim.
  template <typename Visit>
  static void for_each_expr(const LoweredAccess& access, Visit visit) {
    std::size_t position = 0;
    std::size_t index = 0;
    for (const LoweredGuard& guard : access.guards) {
      visit(guard.value, position, index++);
      position += 1 + guard.value.quotients.size();
    }
    for (const LoweredExpr& dim : access.dims) {
      visit(dim, position, index++);
      position += 1 + dim.quotients.size();
    }
  }

private:
  static constexpr std::size_t kMaxParts = 16;

  void fill(const LoweredPattern& lowered, const LoweredAccess& access, int warp, const std::int64_t* scalars,
            Part& part) {
    part.key = key_;
    part.lines.clear();
    part.wavefronts.clear();
    const std::uint32_t present = lowered.lanes_present[static_cast<std::size_t>(warp)];
    const std::size_t exprs = access.guards.size() + access.dims.size();
    part.values.assign(exprs * kWarpLanes, 0);
    part.ranges.assign(exprs, {INT64_MAX, INT64_MIN});
    part.flat_offsets.fill(0);
    zeroed_.assign(scalars, scalars + position_count(access));
    for_each_expr(access, [&](const LoweredExpr& expr, std::size_t position, std::size_t index) {
      zeroed_[position] = 0; // the lane-independent scalar: the part is what remains
      for (int lane = 0; lane < kWarpLanes; ++lane) {
        if ((present >> lane & 1u) == 0) continue;
        const std::int64_t value = lane_value(expr, zeroed_.data() + position, lowered.lane_values.data(),
                                              static_cast<std::size_t>(warp * kWarpLanes + lane));
        part.values[index * kWarpLanes + static_cast<std::size_t>(lane)] = value;
        part.ranges[index] = {std::min(part.ranges[index].first, value), std::max(part.ranges[index].second, value)};
        if (index >= access.guards.size()) {
          part.flat_offsets[static_cast<std::size_t>(lane)] += value * access.strides[index - access.guards.size()];
        }
      }
    });
  }

  static std::size_t position_count(const LoweredAccess& access) {
    std::size_t count = 0;
    for_each_expr(access,
                  [&](const LoweredExpr& expr, std::size_t, std::size_t) { count += 1 + expr.quotients.size(); });
    return count;
  }

  std::vector<Part> parts_;
  std::size_t last_ = 0;
  std::size_t victim_ = 0;
  std::vector<std::int64_t> key_;
  std::vector<std::int64_t> zeroed_;
};

} // namespace cachewise::detail
