// cachewise::tuner kernel buffers: how many buffer sets a measured kernel rotates through (so
// a timed launch does not find its data in L2), their deterministic contents, and the
// comparison of an output against the reference variant's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cachewise::tuner {

/// Buffer sets rotated so that sets * set_bytes exceeds the L2 (l2 / set + 1), at most
/// kMaxBufferSets and at most half the device memory (at least 1).
inline constexpr int kMaxBufferSets = 64;
int buffer_sets_for(std::int64_t set_bytes, std::int64_t l2_bytes, std::int64_t memory_bytes);

/// The deterministic contents of buffer `buffer` of set `set`: little-endian float32 words in
/// [0, 1) from a multiplicative hash of (set, buffer, index), so any dtype reads finite values.
std::vector<std::byte> buffer_contents(std::int64_t bytes, int set, int buffer);

/// The first element where `candidate` and `reference` differ by more than `tolerance`
/// relative (to the larger magnitude; 0 = exactly), as "index 17: 0.5 vs 0.25"; nullopt when
/// they agree. Throws InputError for an unknown type or a size mismatch.
std::optional<std::string> first_difference(std::span<const std::byte> candidate, std::span<const std::byte> reference,
                                            const std::string& type, double tolerance);

} // namespace cachewise::tuner
