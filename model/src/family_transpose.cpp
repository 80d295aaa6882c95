// transpose (docs/pattern-families.md): out[j][i] = in[i][j], direct or through a shared-memory tile.
#include <algorithm>
#include <array>
#include <bit>

#include "cachewise/family_kernels.hpp"
#include "family_support.hpp"

namespace cachewise::family_detail {
namespace {

/// Registers of the transpose kernels as ptxas allots them (nvcc 13.0, sm_90, rounded up to the
/// 8 per thread a warp is allotted in), by element bytes (f16 as f32), shared or direct, the
/// compiled columns per thread (0: the bounds-checked walk) and batch.
std::int64_t transpose_registers(int element_bytes, bool shared, std::int64_t cols, std::int64_t batch) {
  struct Shape {
    std::int64_t cols, batch, f32_shared, f32_direct, f64_shared, f64_direct;
  };
  static constexpr std::array<Shape, 15> kShapes{{{8, 16, 48, 32, 64, 40}, {8, 8, 48, 32, 64, 40}, {4, 16, 48, 40, 64, 64},
                                                  {4, 8, 48, 32, 64, 40},  {4, 4, 56, 32, 64, 48}, {2, 16, 48, 32, 64, 40},
                                                  {2, 8, 56, 32, 64, 40},  {2, 4, 48, 32, 64, 48}, {2, 2, 56, 40, 64, 48},
                                                  {1, 16, 40, 32, 48, 40}, {1, 8, 48, 32, 48, 40}, {1, 4, 48, 32, 48, 40},
                                                  {1, 2, 56, 32, 64, 40},  {1, 1, 48, 32, 64, 40}, {0, 1, 40, 32, 48, 48}}};
  const bool wide = element_bytes > 4;
  for (const Shape& shape : kShapes) {
    if (shape.cols == cols && shape.batch == batch) {
      return wide ? (shared ? shape.f64_shared : shape.f64_direct) : (shared ? shape.f32_shared : shape.f32_direct);
    }
  }
  return wide ? 64 : 56; // no compiled kernel has this shape: the most any of them takes
}

} // namespace

KernelPattern build_transpose(const ProblemSpec& problem, const Config& config) {
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
  // The kernels move a batch of elements (loads, then stores) at a time: a full tile of a
  // compiled shape (power-of-two rows and at most 8 columns per thread) up to kMaxFullTileBatch
  // per batch, otherwise the bounds-checked walk's kTransposeBatch (kernels/src/transpose.cu).
  const std::int64_t per_thread = (tile / block_x) * (tile / block_y);
  const bool power_of_two_shape = std::has_single_bit(static_cast<std::uint64_t>(tile / block_x)) &&
                                  std::has_single_bit(static_cast<std::uint64_t>(tile / block_y)) && tile / block_x <= 8;
  pattern.loads_in_flight = std::min<std::int64_t>(per_thread, power_of_two_shape ? kMaxFullTileBatch : kTransposeBatch);
  pattern.store_burst = pattern.loads_in_flight; // a batch's stores follow its loads
  pattern.registers_per_thread = power_of_two_shape
                                     ? transpose_registers(bytes, smem == 1, tile / block_x, pattern.loads_in_flight)
                                     : transpose_registers(bytes, smem == 1, 0, 1);

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

} // namespace cachewise::family_detail
