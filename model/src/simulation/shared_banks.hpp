// Shared-memory wavefronts of one warp instruction, counted the way
// l1tex__data_pipe_lsu_wavefronts_mem_shared_* and ..._bank_conflicts_* count them.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace cachewise::detail {

struct SharedCost {
  int wavefronts = 0;
  int ideal_wavefronts = 0; ///< conflicts = wavefronts - ideal
};

/// `offsets[lane]` is the byte offset a lane accesses (only lanes with `active` bit set),
/// `access_bytes` the bytes each lane moves (2, 4, 8 or 16). The warp is served in groups:
/// 32 lanes for accesses up to one bank word, 16 lanes for 8-byte, 8 lanes for 16-byte
/// accesses; within a group, lanes reading the same bank word share it (broadcast) and each
/// bank serves one distinct word per wavefront. A group with active lanes needs at least
/// one wavefront, which is the ideal. `banks` must be at most 64.
/// Fast path: when no bank sees two different words, the group is one wavefront. Returns
/// false (leaving `cost` alone) when some bank holds two words and the full count is needed.
inline bool try_conflict_free_group(const std::int64_t* offsets, std::uint32_t active, int access_bytes, int banks,
                                    int bank_width_bytes, int group, int group_lanes, SharedCost& cost) {
  std::array<std::int64_t, 64> word_in_bank;
  word_in_bank.fill(-1);
  bool any = false;
  for (int lane = group; lane < group + group_lanes; ++lane) {
    if ((active >> lane & 1u) == 0) continue;
    any = true;
    const std::int64_t first_word = offsets[lane] / bank_width_bytes;
    const std::int64_t last_word = (offsets[lane] + access_bytes - 1) / bank_width_bytes;
    for (std::int64_t word = first_word; word <= last_word; ++word) {
      if (word < 0) return false;
      std::int64_t& held = word_in_bank[static_cast<std::size_t>(word % banks)];
      if (held == -1) {
        held = word;
      } else if (held != word) {
        return false;
      }
    }
  }
  if (any) {
    cost.wavefronts += 1;
    cost.ideal_wavefronts += 1;
  }
  return true;
}

/// With `atomic`, lanes on the same word do not share it: an atomic's read-modify-write of a
/// word serialises, one lane per wavefront, so a bank serves as many wavefronts as lanes hit
/// it (32 lanes on one counter: 32 wavefronts, 31 of them conflicts).
inline SharedCost shared_wavefronts(const std::int64_t* offsets, std::uint32_t active, int access_bytes, int banks,
                                    int bank_width_bytes, bool atomic = false) {
  constexpr int kWarp = 32;
  SharedCost cost;
  const int words_per_lane = std::clamp(access_bytes / bank_width_bytes, 1, 4);
  const int group_lanes = kWarp / words_per_lane;
  for (int group = 0; group < kWarp; group += group_lanes) {
    if (!atomic &&
        try_conflict_free_group(offsets, active, access_bytes, banks, bank_width_bytes, group, group_lanes, cost)) {
      continue;
    }
    std::array<std::int64_t, 4 * kWarp> words{};
    int word_count = 0;
    for (int lane = group; lane < group + group_lanes; ++lane) {
      if ((active >> lane & 1u) == 0) continue;
      const std::int64_t first_word = offsets[lane] / bank_width_bytes;
      const std::int64_t last_word = (offsets[lane] + access_bytes - 1) / bank_width_bytes;
      for (std::int64_t word = first_word; word <= last_word && word_count < 4 * kWarp; ++word) {
        words[static_cast<std::size_t>(word_count++)] = word;
      }
    }
    if (word_count == 0) continue;
    std::sort(words.begin(), words.begin() + word_count);
    std::array<int, 64> per_bank{};
    int worst = 0;
    for (int i = 0; i < word_count; ++i) {
      if (!atomic && i > 0 && words[static_cast<std::size_t>(i)] == words[static_cast<std::size_t>(i - 1)])
        continue; // broadcast
      const auto bank = static_cast<std::size_t>((words[static_cast<std::size_t>(i)] % banks + banks) % banks);
      worst = std::max(worst, ++per_bank[bank]);
    }
    cost.wavefronts += worst;
    cost.ideal_wavefronts += 1;
  }
  return cost;
}

} // namespace cachewise::detail
