// transpose (docs/pattern-families.md): out[j][i] = in[i][j], direct or through a shared-memory tile.
#include "families/family_support.hpp"

namespace cachewise::family_detail {

KernelPattern build_transpose(const ProblemSpec& problem, const Config& config, const Calibration& /*calibration*/) {
  const std::string& family = problem.family;
  const Sizes sizes = read_sizes(problem, true, false);
  const std::int64_t smem = config.get("smem");
  if (smem != 0 && smem != 1) rule_broken(family, "smem must be 0 or 1, got " + std::to_string(smem));
  const std::int64_t tile = at_least(family, config, "tile", 1);
  const std::int64_t block_x = at_least(family, config, "block_x", 1);
  const std::int64_t block_y = at_least(family, config, "block_y", 1);
  const std::int64_t pad = smem == 1 ? config.get("pad") : config.get_or("pad", 0);
  if (smem == 0 && pad != 0) rule_broken(family, "pad must be 0 when smem=0, got " + std::to_string(pad));
  if (pad < 0 || pad > 32) rule_broken(family, "pad must be in [0, 32], got " + std::to_string(pad));
  require_multiple(family, "tile", tile, "block_x", block_x);
  require_multiple(family, "tile", tile, "block_y", block_y);
  checked_product(family, {block_x, block_y});

  const std::int64_t n = sizes.n;
  const std::int64_t m = sizes.m;
  const int bytes = sizes.element_bytes;
  KernelPattern pattern;
  pattern.name = "transpose";
  pattern.grid = {ceil_div(m, tile), ceil_div(n, tile), 1};
  pattern.block = {block_x, block_y, 1};
  pattern.arrays = {global_array("in", bytes, {n, m}), global_array("out", bytes, {m, n})};
  pattern.useful_bytes = checked_product(family, {n, m, bytes, 2});
  // Row of `in` read by this thread: y0 + r + ty; column: x0 + c + tx.
  const AffineIndex in_row = affine(0, {{V::block_y, tile}, {V::thread_y, 1}}, {{"r", 1}});
  const AffineIndex in_col = affine(0, {{V::block_x, tile}, {V::thread_x, 1}}, {{"c", 1}});
  const std::vector<Loop> tile_loops = {loop("r", tile, block_y), loop("c", tile, block_x)};
  if (smem == 0) {
    pattern.phases.push_back({tile_loops, {load("in", {in_row, in_col}), store("out", {in_col, in_row})}});
    return pattern;
  }
  pattern.arrays.push_back(shared_array("buf", bytes, {tile, tile + pad}));
  const AffineIndex tile_row = affine(0, {{V::thread_y, 1}}, {{"r", 1}});
  const AffineIndex tile_col = affine(0, {{V::thread_x, 1}}, {{"c", 1}});
  // Only lanes whose element exists move it: the shared store is guarded like the load.
  const std::vector<Guard> in_bounds = {{in_row, 0, n}, {in_col, 0, m}};
  pattern.phases.push_back({tile_loops, {load("in", {in_row, in_col}), store("buf", {tile_row, tile_col}, in_bounds)}});
  // Second phase: out[x0 + r + ty][y0 + c + tx] = buf[c + tx][r + ty].
  const AffineIndex out_row = affine(0, {{V::block_x, tile}, {V::thread_y, 1}}, {{"r", 1}});
  const AffineIndex out_col = affine(0, {{V::block_y, tile}, {V::thread_x, 1}}, {{"c", 1}});
  const std::vector<Guard> out_bounds = {{out_row, 0, m}, {out_col, 0, n}};
  pattern.phases.push_back(
      {tile_loops, {load("buf", {tile_col, tile_row}, out_bounds), store("out", {out_row, out_col})}});
  return pattern;
}

/// The kernels move a batch of a thread's elements (loads, then stores) at a time: a batch's
/// stores are at most the thread's tile elements.
void apply_transpose_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config,
                           const Calibration& /*calibration*/) {
  const std::int64_t tile = config.get("tile");
  const std::int64_t per_thread = (tile / config.get("block_x")) * (tile / config.get("block_y"));
  set_kernel_facts(pattern, builtin_kernel_facts(problem, config), per_thread);
}

} // namespace cachewise::family_detail
