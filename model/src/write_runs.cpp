// How a wave's global stores lie in DRAM: runs of consecutive lines per warp, spread or compact
// (docs/model.md, "DRAM factors").
#include <algorithm>
#include <cstdlib>

#include "simulation.hpp"

namespace cachewise::detail {

void tally_write_runs(std::vector<StoredLine> stored, WriteRuns& runs) {
  // By warp, then line: each warp's runs. By line: who else wrote a line.
  std::sort(stored.begin(), stored.end(), [](const StoredLine& a, const StoredLine& b) {
    if (a.block_slot != b.block_slot) return a.block_slot < b.block_slot;
    return a.warp != b.warp ? a.warp < b.warp : a.line < b.line;
  });
  stored.erase(std::unique(stored.begin(), stored.end()), stored.end());
  std::vector<StoredLine> by_line = stored;
  std::sort(by_line.begin(), by_line.end(), [](const StoredLine& a, const StoredLine& b) {
    return a.line != b.line ? a.line < b.line : a.block_slot < b.block_slot;
  });
  // Whether a block within kRunNeighbourBlocks of `slot` in dispatch order wrote `line` (with
  // `others_only`, a block other than slot's own).
  auto written_near = [&](std::uint64_t line, std::uint32_t slot, bool others_only = false) {
    const auto first = std::lower_bound(by_line.begin(), by_line.end(), line,
                                        [](const StoredLine& entry, std::uint64_t value) { return entry.line < value; });
    for (auto it = first; it != by_line.end() && it->line == line; ++it) {
      const std::int64_t distance = static_cast<std::int64_t>(it->block_slot) - static_cast<std::int64_t>(slot);
      if (std::abs(distance) <= kRunNeighbourBlocks && !(others_only && distance == 0)) return true;
    }
    return false;
  };
  for (std::size_t begin = 0; begin < stored.size();) {
    std::size_t end = begin + 1;
    while (end < stored.size() && stored[end].block_slot == stored[begin].block_slot &&
           stored[end].warp == stored[begin].warp && stored[end].line == stored[end - 1].line + 1) {
      ++end;
    }
    const std::uint32_t slot = stored[begin].block_slot;
    const auto length = static_cast<std::int64_t>(end - begin);
    const std::int64_t wanted = kCompactRunFactor * length;
    std::int64_t merged = length;
    for (std::uint64_t line = stored[begin].line; merged < wanted && line > 0 && written_near(line - 1, slot); --line) ++merged;
    for (std::uint64_t line = stored[end - 1].line; merged < wanted && written_near(line + 1, slot); ++line) ++merged;
    // A line that another block near in dispatch order writes too is shared: the blocks fill
    // it together as the grid advances (a 1-D output, one element per block), one stream in
    // block order, not a row the blocks around it leave (the transposes the slowdown was
    // measured on write each line of a row from one warp).
    const bool shared = std::any_of(stored.begin() + static_cast<std::ptrdiff_t>(begin),
                                    stored.begin() + static_cast<std::ptrdiff_t>(end),
                                    [&](const StoredLine& entry) { return written_near(entry.line, slot, true); });
    if (merged < wanted && !shared) runs.spread_lines_by_run_lines[length] += static_cast<double>(length);
    runs.lines += static_cast<double>(length);
    begin = end;
  }
}

} // namespace cachewise::detail
