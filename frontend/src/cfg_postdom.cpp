// The control-flow graph of a lowered entry and its immediate post-dominators: the dominator tree
// (Boost.Graph, Lengauer-Tarjan) of the reversed graph rooted at a virtual exit that every
// ret / exit block flows into. A divergent branch's paths reconverge at the first instruction of
// its block's immediate post-dominator.
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dominator_tree.hpp>

#include "extract_program.hpp"

namespace cachewise::frontend {
namespace {

bool ends_block(const Instr& instr) { return instr.op == Op::branch || instr.op == Op::exit; }

} // namespace

Blocks split_blocks(const std::vector<Instr>& code) {
  const auto n = static_cast<std::int32_t>(code.size());
  std::vector<bool> leader(code.size() + 1, false);
  leader[0] = true;
  for (std::int32_t pc = 0; pc < n; ++pc) {
    if (code[pc].op == Op::branch) leader[static_cast<std::size_t>(code[pc].target)] = true;
    if (ends_block(code[pc])) leader[static_cast<std::size_t>(pc + 1)] = true;
  }
  Blocks blocks;
  blocks.of.resize(code.size());
  for (std::int32_t pc = 0; pc < n; ++pc) {
    if (leader[static_cast<std::size_t>(pc)]) blocks.start.push_back(pc);
    blocks.of[static_cast<std::size_t>(pc)] = static_cast<std::int32_t>(blocks.start.size()) - 1;
  }
  return blocks;
}

std::vector<std::int32_t> reconvergence_points(const std::vector<Instr>& code) {
  std::vector<std::int32_t> points(code.size(), kReconvergeAtExit);
  if (code.empty()) return points;
  const Blocks blocks = split_blocks(code);
  const std::size_t block_count = blocks.start.size();
  const std::size_t exit_node = block_count;
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  Graph reversed(block_count + 1);
  const auto n = static_cast<std::int32_t>(code.size());
  for (std::size_t b = 0; b < block_count; ++b) {
    const std::int32_t last = b + 1 < block_count ? blocks.start[b + 1] - 1 : n - 1;
    const Instr& end = code[static_cast<std::size_t>(last)];
    const bool falls_through = !ends_block(end) || end.guard >= 0;
    const auto successor_of = [&](std::int32_t pc) {
      return pc >= n ? exit_node : static_cast<std::size_t>(blocks.of[static_cast<std::size_t>(pc)]);
    };
    if (end.op == Op::branch) boost::add_edge(successor_of(end.target), b, reversed);
    if (end.op == Op::exit) boost::add_edge(exit_node, b, reversed);
    if (falls_through) boost::add_edge(successor_of(last + 1), b, reversed);
  }
  std::vector<std::size_t> idom(block_count + 1, boost::graph_traits<Graph>::null_vertex());
  boost::lengauer_tarjan_dominator_tree(
      reversed, boost::vertex(exit_node, reversed),
      boost::make_iterator_property_map(idom.begin(), boost::get(boost::vertex_index, reversed)));
  for (std::int32_t pc = 0; pc < n; ++pc) {
    const std::size_t post_dominator = idom[static_cast<std::size_t>(blocks.of[static_cast<std::size_t>(pc)])];
    if (post_dominator < block_count) points[static_cast<std::size_t>(pc)] = blocks.start[post_dominator];
  }
  return points;
}

} // namespace cachewise::frontend
