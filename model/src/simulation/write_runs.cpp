// How a wave's global stores lie in DRAM: runs of consecutive lines per warp, spread or compact
// (docs/model.md, "DRAM factors").
#include <algorithm>
#include <cstdlib>

#include "simulation/simulation_run.hpp"

namespace cachewise::detail {

WriteRunRule write_run_rule(const Calibration& calibration) {
  return {static_cast<std::int64_t>(calibration.write_run_neighbour_blocks.value),
          static_cast<std::int64_t>(calibration.write_run_compact_factor.value)};
}

namespace {

/// `stored` grouped by block slot, then warp (a counting sort: both are small), each group's
/// lines ascending and distinct: each warp's runs lie together.
std::vector<StoredLine> by_warp_then_line(const std::vector<StoredLine>& stored) {
  std::uint32_t warps = 0;
  std::uint32_t slots = 0;
  for (const StoredLine& entry : stored) {
    warps = std::max(warps, entry.warp + 1);
    slots = std::max(slots, entry.block_slot + 1);
  }
  std::vector<std::size_t> group_start(std::size_t{slots} * warps + 1, 0);
  const auto group = [&](const StoredLine& entry) { return std::size_t{entry.block_slot} * warps + entry.warp; };
  for (const StoredLine& entry : stored) ++group_start[group(entry) + 1];
  for (std::size_t g = 1; g < group_start.size(); ++g) group_start[g] += group_start[g - 1];
  std::vector<StoredLine> grouped(stored.size());
  std::vector<std::size_t> next(group_start.begin(), group_start.end() - 1);
  for (const StoredLine& entry : stored) grouped[next[group(entry)]++] = entry;
  std::size_t kept = 0;
  for (std::size_t g = 0; g + 1 < group_start.size(); ++g) {
    const auto first = grouped.begin() + static_cast<std::ptrdiff_t>(group_start[g]);
    const auto last = grouped.begin() + static_cast<std::ptrdiff_t>(group_start[g + 1]);
    const auto by_line = [](const StoredLine& a, const StoredLine& b) { return a.line < b.line; };
    if (!std::is_sorted(first, last, by_line)) std::sort(first, last, by_line);
    for (auto entry = first; entry != last; ++entry) {
      if (entry == first || entry->line != std::prev(entry)->line) grouped[kept++] = *entry;
    }
  }
  grouped.resize(kept);
  return grouped;
}

} // namespace

void tally_write_runs(const std::vector<StoredLine>& wave_stores, const WriteRunRule& rule, WriteRuns& runs) {
  // By warp, then line: each warp's runs. By line: who else wrote a line.
  const std::vector<StoredLine> stored = by_warp_then_line(wave_stores);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> line_slots;
  line_slots.reserve(stored.size());
  for (const StoredLine& entry : stored) line_slots.emplace_back(entry.line, entry.block_slot);
  std::sort(line_slots.begin(), line_slots.end());
  std::vector<StoredLine> by_line;
  by_line.reserve(stored.size());
  for (const auto& [line, slot] : line_slots) by_line.push_back({line, slot, 0});
  // Whether a block within rule.neighbour_blocks of `slot` in dispatch order wrote the line
  // of the entries [first, last) of by_line (with `others_only`, a block other than slot's own).
  using Entry = std::vector<StoredLine>::const_iterator;
  auto written_near = [&](Entry first, Entry last, std::uint32_t slot, bool others_only = false) {
    return std::any_of(first, last, [&](const StoredLine& entry) {
      const std::int64_t distance = static_cast<std::int64_t>(entry.block_slot) - static_cast<std::int64_t>(slot);
      return std::abs(distance) <= rule.neighbour_blocks && !(others_only && distance == 0);
    });
  };
  // The entries of one line lie together in by_line, those of the next line right after them:
  // a run and the lines around it are walked from one binary search.
  auto line_end = [&](Entry from) {
    Entry to = from;
    while (to != by_line.cend() && to->line == from->line) ++to;
    return to;
  };
  for (std::size_t begin = 0; begin < stored.size();) {
    std::size_t end = begin + 1;
    while (end < stored.size() && stored[end].block_slot == stored[begin].block_slot &&
           stored[end].warp == stored[begin].warp && stored[end].line == stored[end - 1].line + 1) {
      ++end;
    }
    const std::uint32_t slot = stored[begin].block_slot;
    const auto length = static_cast<std::int64_t>(end - begin);
    const std::int64_t wanted = rule.compact_factor * length;
    std::int64_t merged = length;
    const std::uint64_t first_line = stored[begin].line;
    const std::uint64_t last_line = stored[end - 1].line;
    const Entry run_first =
        std::lower_bound(by_line.cbegin(), by_line.cend(), first_line,
                         [](const StoredLine& entry, std::uint64_t value) { return entry.line < value; });
    // Lines below the run, while blocks near it wrote them.
    for (Entry below_end = run_first; merged < wanted && below_end != by_line.cbegin();) {
      const std::uint64_t line = std::prev(below_end)->line;
      if (line + 1 + static_cast<std::uint64_t>(merged - length) != first_line) break;
      Entry below_first = below_end;
      while (below_first != by_line.cbegin() && std::prev(below_first)->line == line) --below_first;
      if (!written_near(below_first, below_end, slot)) break;
      ++merged;
      below_end = below_first;
    }
    // The run's own lines (each with this warp's entry), and whether another block near it
    // wrote one of them too: a line the blocks around fill together (a 1-D output, one
    // element per block), one stream in block order, not a row the blocks around it leave
    // (the transposes the slowdown was measured on write each line of a row from one warp).
    bool shared = false;
    Entry above_first = run_first;
    while (above_first != by_line.cend() && above_first->line <= last_line) {
      const Entry next = line_end(above_first);
      shared = shared || written_near(above_first, next, slot, true);
      above_first = next;
    }
    // Lines above the run, while blocks near it wrote them.
    for (std::uint64_t line = last_line + 1;
         merged < wanted && above_first != by_line.cend() && above_first->line == line; ++line) {
      const Entry next = line_end(above_first);
      if (!written_near(above_first, next, slot)) break;
      ++merged;
      above_first = next;
    }
    if (merged < wanted && !shared) runs.spread_lines_by_run_lines[length] += static_cast<double>(length);
    runs.lines += static_cast<double>(length);
    begin = end;
  }
}

} // namespace cachewise::detail
