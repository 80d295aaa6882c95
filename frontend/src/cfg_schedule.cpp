// Load scheduling within basic blocks. The PTX nvcc emits puts each load next to its first use;
// ptxas then schedules the loads of a block early (with the integer work that computes their
// addresses), so a warp has several loads in flight when it first waits. Interpreting the PTX
// order would count one load per wait; the scheduled order is the one the hardware runs.
// A list schedule over the block's dependence graph: registers (read after write, write after
// read, write after write), memory order (a store after every earlier access it may alias, a
// load after every earlier store it may alias; ld.global.nc aliases no store), and barriers,
// fences, atomics and branches ordered against everything. Ready loads and the instructions
// that feed their addresses go first, everything else keeps its order.
#include <algorithm>
#include <queue>
#include <unordered_map>

#include "extract_program.hpp"

namespace cachewise::frontend {
namespace {

bool is_memory(const Instr& instr) { return instr.op == Op::load || instr.op == Op::store; }

bool serializes(const Instr& instr) {
  return instr.op == Op::barrier || instr.op == Op::atomic || instr.op == Op::nop || instr.op == Op::branch ||
         instr.op == Op::exit || instr.op == Op::async_copy || instr.op == Op::async_wait;
}

template <typename F>
void for_each_read(const Instr& instr, F&& f) {
  if (instr.guard >= 0) f(instr.guard);
  if (instr.address.reg >= 0) f(instr.address.reg);
  if (instr.source_address.reg >= 0) f(instr.source_address.reg);
  for (int i = 0; i < instr.src_count; ++i)
    if (instr.src[static_cast<std::size_t>(i)].kind == Source::Kind::reg) f(instr.src[static_cast<std::size_t>(i)].reg);
}

template <typename F>
void for_each_write(const Instr& instr, F&& f) {
  for (int i = 0; i < instr.dst_count; ++i)
    if (instr.dst[static_cast<std::size_t>(i)] >= 0) f(instr.dst[static_cast<std::size_t>(i)]);
  if (instr.dst2 >= 0) f(instr.dst2);
}

/// Whether two memory instructions may touch the same bytes (one of them a store).
bool may_alias(const Instr& a, const Instr& b) {
  if (a.generic || b.generic) return true;
  if (a.space != b.space) return false;
  return !(a.read_only || b.read_only);
}

struct BlockGraph {
  std::vector<std::vector<std::int32_t>> successors;
  std::vector<std::int32_t> predecessor_count;
  std::vector<bool> feeds_load; ///< a load, or a register input of one (transitively)
};

BlockGraph build_graph(const std::vector<Instr>& block) {
  const auto n = static_cast<std::int32_t>(block.size());
  BlockGraph graph{std::vector<std::vector<std::int32_t>>(block.size()), std::vector<std::int32_t>(block.size(), 0),
                   std::vector<bool>(block.size(), false)};
  std::vector<std::vector<std::int32_t>> register_inputs(block.size()); // read-after-write predecessors
  const auto edge = [&](std::int32_t from, std::int32_t to) {
    graph.successors[static_cast<std::size_t>(from)].push_back(to);
    ++graph.predecessor_count[static_cast<std::size_t>(to)];
  };
  std::unordered_map<std::int32_t, std::int32_t> last_writer;
  std::unordered_map<std::int32_t, std::vector<std::int32_t>> readers;
  std::int32_t last_serializing = -1;
  for (std::int32_t i = 0; i < n; ++i) {
    const Instr& instr = block[static_cast<std::size_t>(i)];
    if (serializes(instr)) {
      for (std::int32_t j = 0; j < i; ++j) edge(j, i);
    } else if (last_serializing >= 0) {
      edge(last_serializing, i);
    }
    for_each_read(instr, [&](std::int32_t reg) {
      const auto w = last_writer.find(reg);
      if (w != last_writer.end()) {
        edge(w->second, i);
        register_inputs[static_cast<std::size_t>(i)].push_back(w->second);
      }
      readers[reg].push_back(i);
    });
    for_each_write(instr, [&](std::int32_t reg) {
      const auto w = last_writer.find(reg);
      if (w != last_writer.end() && w->second != i) edge(w->second, i);
      for (std::int32_t reader : readers[reg])
        if (reader != i) edge(reader, i);
      readers[reg].clear();
      last_writer[reg] = i;
    });
    if (is_memory(instr)) {
      for (std::int32_t j = 0; j < i; ++j) {
        const Instr& earlier = block[static_cast<std::size_t>(j)];
        if (is_memory(earlier) && (instr.op == Op::store || earlier.op == Op::store) && may_alias(earlier, instr))
          edge(j, i);
      }
    }
    if (serializes(instr)) last_serializing = i;
  }
  for (std::int32_t i = n - 1; i >= 0; --i) {
    const Instr& instr = block[static_cast<std::size_t>(i)];
    if (instr.op == Op::load && instr.pending) graph.feeds_load[static_cast<std::size_t>(i)] = true;
    if (graph.feeds_load[static_cast<std::size_t>(i)])
      for (std::int32_t input : register_inputs[static_cast<std::size_t>(i)])
        graph.feeds_load[static_cast<std::size_t>(input)] = true;
  }
  return graph;
}

std::vector<Instr> schedule_block(const std::vector<Instr>& block) {
  BlockGraph graph = build_graph(block);
  using Key = std::pair<int, std::int32_t>; // (0 = feeds a load, 1 = other), original position
  std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
  const auto push = [&](std::int32_t i) { ready.push({graph.feeds_load[static_cast<std::size_t>(i)] ? 0 : 1, i}); };
  for (std::size_t i = 0; i < block.size(); ++i)
    if (graph.predecessor_count[i] == 0) push(static_cast<std::int32_t>(i));
  std::vector<Instr> scheduled;
  scheduled.reserve(block.size());
  while (!ready.empty()) {
    const std::int32_t i = ready.top().second;
    ready.pop();
    scheduled.push_back(block[static_cast<std::size_t>(i)]);
    for (std::int32_t next : graph.successors[static_cast<std::size_t>(i)])
      if (--graph.predecessor_count[static_cast<std::size_t>(next)] == 0) push(next);
  }
  return scheduled;
}

} // namespace

void hoist_loads(std::vector<Instr>& code) {
  const Blocks blocks = split_blocks(code);
  for (std::size_t b = 0; b < blocks.start.size(); ++b) {
    const auto begin = static_cast<std::ptrdiff_t>(blocks.start[b]);
    const auto end = b + 1 < blocks.start.size() ? static_cast<std::ptrdiff_t>(blocks.start[b + 1])
                                                 : static_cast<std::ptrdiff_t>(code.size());
    const std::vector<Instr> block(code.begin() + begin, code.begin() + end);
    bool has_load = false;
    for (const Instr& instr : block) has_load = has_load || (instr.op == Op::load && instr.pending);
    if (!has_load) continue;
    const std::vector<Instr> scheduled = schedule_block(block);
    std::copy(scheduled.begin(), scheduled.end(), code.begin() + begin);
  }
}

} // namespace cachewise::frontend
