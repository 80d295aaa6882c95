// Helpers of the extraction tests: load the PTX nvcc compiled from tests/frontend/kernels, place
// buffers as fe-spec does (1 GiB + i * size rounded up to 1 MiB), and read coalescing and bank
// facts off a trace step the way the hardware counts them (128 B lines, 32 B sectors, 32 banks
// of 4 bytes, one word per bank per wavefront, same word broadcast).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cachewise/frontend/extract.hpp"
#include "cachewise/frontend/ptx.hpp"

namespace cachewise::frontend::testing {

inline PtxModule load_test_ptx(const std::string& name) {
  std::ifstream file(std::string(CACHEWISE_TEST_PTX_DIR) + "/" + name + ".ptx");
  std::stringstream text;
  text << file.rdbuf();
  return parse_ptx(text.str());
}

/// The entry whose mangled name contains `fragment` ("transpose_tiled").
inline std::string entry_containing(const PtxModule& module, const std::string& fragment) {
  for (const std::string& name : entry_names(module))
    if (name.find(fragment) != std::string::npos) return name;
  ADD_FAILURE() << "no entry containing " << fragment;
  return {};
}

/// Buffer i at 1 GiB + the sizes before it, each rounded up to 1 MiB.
inline std::vector<TraceBuffer> place_buffers(const std::vector<std::pair<std::string, std::int64_t>>& sizes) {
  std::vector<TraceBuffer> buffers;
  std::uint64_t base = std::uint64_t{1} << 30;
  for (const auto& [name, bytes] : sizes) {
    buffers.push_back({name, base, bytes});
    base += (static_cast<std::uint64_t>(bytes) + (1u << 20) - 1) / (1u << 20) * (1u << 20);
  }
  return buffers;
}

inline std::vector<TraceStep> accesses(const WarpTrace& warp, TraceSpace space, TraceOp op) {
  std::vector<TraceStep> out;
  for (const TraceStep& step : warp.steps)
    if (step.kind == TraceStep::Kind::access && step.space == space && step.op == op) out.push_back(step);
  return out;
}

inline int count_kind(const WarpTrace& warp, TraceStep::Kind kind) {
  return static_cast<int>(
      std::count_if(warp.steps.begin(), warp.steps.end(), [&](const TraceStep& s) { return s.kind == kind; }));
}

/// The active lanes' byte ranges, as sets of `granule`-byte blocks.
inline int distinct_granules(const TraceStep& step, std::uint64_t granule) {
  std::set<std::uint64_t> granules;
  for (int lane = 0; lane < 32; ++lane)
    if ((step.active_mask >> lane) & 1)
      for (std::uint64_t a = step.address[lane]; a < step.address[lane] + step.bytes_per_lane; a += 4)
        granules.insert(a / granule);
  return static_cast<int>(granules.size());
}
inline int lines(const TraceStep& step) { return distinct_granules(step, 128); }
inline int sectors(const TraceStep& step) { return distinct_granules(step, 32); }

/// The most distinct 4-byte words any one bank must serve (1 = conflict free), for 4-byte lanes.
inline int bank_ways(const TraceStep& step) {
  std::map<int, std::set<std::uint64_t>> words;
  for (int lane = 0; lane < 32; ++lane)
    if ((step.active_mask >> lane) & 1)
      words[static_cast<int>(step.address[lane] / 4 % 32)].insert(step.address[lane] / 4);
  std::size_t ways = 0;
  for (const auto& [bank, set] : words) ways = std::max(ways, set.size());
  return static_cast<int>(ways);
}

/// The active lanes' addresses, lane by lane (inactive lanes left out).
inline std::map<int, std::uint64_t> lane_addresses(const TraceStep& step) {
  std::map<int, std::uint64_t> out;
  for (int lane = 0; lane < 32; ++lane)
    if ((step.active_mask >> lane) & 1) out[lane] = step.address[lane];
  return out;
}

inline std::set<std::map<int, std::uint64_t>> address_sets(const std::vector<TraceStep>& steps) {
  std::set<std::map<int, std::uint64_t>> out;
  for (const TraceStep& step : steps) out.insert(lane_addresses(step));
  return out;
}

} // namespace cachewise::frontend::testing
