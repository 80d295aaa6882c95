// Constants and formatting helpers shared by the probe's stages (probe/src/*_stages.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "cachewise/model.hpp"

namespace cachewise::probe::detail {

using Offsets = std::vector<std::uint64_t>;

inline constexpr std::uint64_t kKiB = 1024;
inline constexpr std::uint64_t kMiB = 1024 * kKiB;
inline constexpr std::uint64_t kGiB = 1024 * kMiB;
/// Node spacing of the capacity chases: one node per 128 B keeps one node per line for any line
/// size up to 128 B (the line-size stage checks that choice).
inline constexpr std::uint64_t kNode = 128;
inline constexpr std::uint64_t kSector = 32;
inline constexpr int kSeed = 20261129; // fixed: two probes build the same chains
/// The probe's one device buffer: sweeps and the TLB test use [0, 8 GiB); single-purpose regions
/// sit at fixed offsets above 2 GiB (named where used); the L2 flush streams [7 GiB, 7.5 GiB).
inline constexpr std::uint64_t kBufferBytes = 9 * kGiB;
inline constexpr std::uint64_t kFlushRegion = 7 * kGiB;
inline constexpr std::uint64_t kScriptCalibrationRegion = 6 * kGiB + 256 * kMiB;
/// Eviction-set candidates: L1 in the first 64 MiB, L2 in the 768 MiB after.
inline constexpr std::uint64_t kEvictionSetRegion = 3 * kGiB;
/// The full-cycle L2 chase: up to 256 MiB from here (above the eviction-set region).
inline constexpr std::uint64_t kFullChaseRegion = 4 * kGiB;
/// The first-touch per-address test: random lines of 2 MiB (one page) from here.
inline constexpr std::uint64_t kFirstTouchRegion = 5 * kGiB + 64 * kMiB;

std::string format_bytes(double bytes);
std::string format_number(double value, int precision = 1);
std::string utc_now();

inline Measured measured(double value, const Provenance& provenance) { return {value, provenance}; }

/// A value that could not be measured well: written with low confidence, never as fact.
inline Provenance low(std::string method, std::int64_t samples = 0, double spread = 0.0) {
  return {std::move(method), samples, spread, Confidence::low};
}

inline double median(std::vector<double> values) { return summarize(std::move(values)).median; }

inline double gb_per_s(std::uint64_t bytes, double seconds) { return static_cast<double>(bytes) / seconds / 1e9; }

/// Confidence of a value measured by two methods: high when they agree within 5%, medium within
/// 15%, else low (relative to the first).
Confidence agreement_confidence(double value, double other);

} // namespace cachewise::probe::detail
