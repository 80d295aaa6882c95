// stencil2d (docs/pattern-families.md): a star stencil of a radius on an n x m grid.
#include <algorithm>
#include <array>
#include <bit>

#include "cachewise/family_kernels.hpp"
#include "family_support.hpp"

namespace cachewise::family_detail {
namespace {

/// Loads in flight of stencil2d's compiled rows (radius 1; ept_y 1, 2, 4, 8 load every row's
/// taps as one batch), by element bytes, vector and rows: ptxas issues a batch in groups, each
/// ended by an instruction that waits on one of them, and the model keeps the largest group in
/// flight (H200 SASS, nvcc 13.0, sm_90: docs/h200-runs/session8/sass, read with
/// scripts/eval/loads_ahead_of_use.py). 4 and 8 rows of f32 vectors have 5-14 of their 20-40
/// out at once, not all of them.
std::int64_t stencil2d_loads_in_flight(int element_bytes, std::int64_t vector, std::int64_t rows) {
  using Loads = std::array<std::int64_t, 4>; // 1, 2, 4, 8 rows
  static constexpr Loads f32_v1{5, 10, 20, 20}, f32_v2{5, 10, 5, 12}, f32_v4{5, 10, 7, 14}, f16_v1{5, 10, 20, 16},
      f16_v2{4, 10, 8, 18}, f16_v4{5, 10, 16, 20}, f16_v8{5, 10, 13, 19}, f64_v1{5, 10, 8, 9}, f64_v2{5, 8, 8, 12};
  const auto column = static_cast<std::size_t>(std::countr_zero(static_cast<std::uint64_t>(rows)));
  if (element_bytes == 8) return (vector == 1 ? f64_v1 : f64_v2)[column];
  if (element_bytes == 2) return (vector == 1 ? f16_v1 : vector == 2 ? f16_v2 : vector == 4 ? f16_v4 : f16_v8)[column];
  return (vector == 1 ? f32_v1 : vector == 2 ? f32_v2 : f32_v4)[column];
}

/// interior point, left edge then right edge (what the kernels do).
template <typename XAt>
void append_vector_stores(std::vector<Access>& accesses, const std::string& array, std::vector<AffineIndex> outer_index,
                          const XAt& x0_at, const std::vector<Guard>& outer_interior, std::int64_t vector,
                          std::int64_t radius, std::int64_t m) {
  const auto with = [&](std::vector<Guard> guards, std::vector<Guard> more) {
    guards.insert(guards.end(), more.begin(), more.end());
    return guards;
  };
  const auto at = [&](const AffineIndex& x) {
    std::vector<AffineIndex> index = outer_index;
    index.push_back(x);
    return index;
  };
  const std::int64_t full_end = m - radius - vector + 1; // x0 < full_end: last point interior
  accesses.push_back(store(array, at(x0_at(0)), with(outer_interior, {{x0_at(0), radius, full_end}}), static_cast<int>(vector)));
  const std::vector<Guard> edges = {{x0_at(0), 0, radius}, {x0_at(0), std::max(radius, full_end), m}};
  for (const Guard& edge : edges) {
    for (std::int64_t i = 0; i < vector; ++i) {
      accesses.push_back(store(array, at(x0_at(i)), with(outer_interior, {edge, interior_guard(x0_at(i), radius, m)})));
    }
  }
}

/// The contract's tap order: centre, then for d = 1..radius: left, right, up, down.
template <typename RowAt, typename ColAt>
std::vector<Access> star_taps(const std::string& array, const RowAt& row_at, const ColAt& col_at, std::int64_t radius,
                              const std::vector<Guard>& guards) {
  std::vector<Access> taps{load(array, {row_at(0), col_at(0)}, guards)};
  for (std::int64_t d = 1; d <= radius; ++d) {
    taps.push_back(load(array, {row_at(0), col_at(-d)}, guards));
    taps.push_back(load(array, {row_at(0), col_at(d)}, guards));
    taps.push_back(load(array, {row_at(-d), col_at(0)}, guards));
    taps.push_back(load(array, {row_at(d), col_at(0)}, guards));
  }
  return taps;
}

/// Registers of the vector stencil2d kernels as ptxas allots them (nvcc 13.0, sm_90, rounded up
/// to the 8 per thread a warp is allotted in), by element bytes, vector and compiled rows
/// (`rows` 0: a run-time radius); rows that are not compiled roll two at a time.
std::int64_t stencil2d_vector_registers(int element_bytes, std::int64_t vector, std::int64_t rows, bool compiled_rows) {
  const bool half = element_bytes == 2;
  const bool wide = element_bytes == 8;
  if (rows == 0) return wide ? 136 : half ? (vector == 8 ? 128 : vector == 4 ? 72 : 64) : (vector == 4 ? 112 : 72);
  if (!compiled_rows) return half && vector == 8 ? 40 : 32;
  // Columns: 1, 2, 4, 8 rows.
  static constexpr std::array<std::int64_t, 4> f32_v2{40, 40, 40, 48}, f32_v4{40, 48, 48, 64}, f16_v2{32, 40, 40, 48},
      f16_v4{40, 48, 48, 72}, f16_v8{48, 48, 72, 104}, f64_v2{40, 48, 64, 72};
  const auto column = static_cast<std::size_t>(std::countr_zero(static_cast<std::uint64_t>(rows)));
  if (wide) return f64_v2[column];
  if (half) return (vector == 8 ? f16_v8 : vector == 4 ? f16_v4 : f16_v2)[column];
  return (vector == 4 ? f32_v4 : f32_v2)[column];
}

} // namespace

KernelPattern build_stencil2d(const ProblemSpec& problem, const Config& config) {
  const std::string& family = problem.family;
  const Sizes sizes = read_sizes(problem, true, false);
  const std::int64_t radius = at_least(family, config, "radius", 1, 1);
  if (radius > kMaxStencilRadius) {
    rule_broken(family, "radius must be in [1, " + std::to_string(kMaxStencilRadius) + "], got " + std::to_string(radius));
  }
  const std::int64_t block_x = at_least(family, config, "block_x", 1);
  const std::int64_t block_y = at_least(family, config, "block_y", 1);
  const std::int64_t ept_y = at_least(family, config, "ept_y", 1);
  const std::int64_t smem = config.get("smem");
  if (smem != 0 && smem != 1) rule_broken(family, "smem must be 0 or 1, got " + std::to_string(smem));
  checked_product(family, {block_x, block_y, ept_y});
  const std::int64_t vector = read_x_vector(family, config, sizes);
  if (smem == 1 && vector != 1) rule_broken(family, "vector must be 1 when smem=1, got " + std::to_string(vector));

  const std::int64_t n = sizes.n;
  const std::int64_t m = sizes.m;
  const int bytes = sizes.element_bytes;
  KernelPattern pattern;
  pattern.name = "stencil2d";
  pattern.grid = {ceil_div(m, checked_product(family, {block_x, vector})), ceil_div(n, block_y * ept_y), 1};
  pattern.block = {block_x, block_y, 1};
  pattern.arrays = {global_array("in", bytes, {n, m}), global_array("out", bytes, {n, m})};
  const std::int64_t interior_rows = std::max<std::int64_t>(0, n - 2 * radius);
  const std::int64_t interior_cols = std::max<std::int64_t>(0, m - 2 * radius);
  pattern.useful_bytes = checked_product(family, {n, m, bytes}) + checked_product(family, {interior_rows, interior_cols, bytes});
  pattern.flops = static_cast<double>(interior_rows) * static_cast<double>(interior_cols) * 2.0 *
                  static_cast<double>(4 * radius + 1) * flops_scale(problem.dtype);

  // Output point: x = bx*block_x + tx, y = by*block_y*ept_y + e*block_y + ty.
  const auto x_at = [&](std::int64_t dx) { return affine(dx, {{V::block_x, block_x}, {V::thread_x, 1}}); };
  const auto y_at = [&](std::int64_t dy) {
    return affine(dy, {{V::block_y, block_y * ept_y}, {V::thread_y, 1}}, {{"e", block_y}});
  };
  const std::vector<Guard> interior = {interior_guard(y_at(0), radius, n), interior_guard(x_at(0), radius, m)};
  const Loop rows = loop("e", ept_y);

  // Taps per output row; the kernels compile radius 1 with ept_y 1, 2, 4, 8 and then load every
  // row's taps as one batch, stencil2d_loads_in_flight of them at a time; otherwise they roll the
  // rows two at a time, of which ptxas issues at most 14 taps before it consumes the first.
  const std::int64_t taps_per_row = 4 * radius + 1;
  const bool compiled_rows = radius == 1 && std::has_single_bit(static_cast<std::uint64_t>(ept_y)) && ept_y <= 8;
  constexpr std::int64_t kStencil2dLoadsAheadOfUse = 14;
  pattern.loads_in_flight =
      smem == 1       ? kMoveBatch
      : compiled_rows ? stencil2d_loads_in_flight(bytes, vector, ept_y)
                      : std::min(kStencil2dLoadsAheadOfUse, taps_per_row * std::min<std::int64_t>(ept_y, 2));
  // The rows whose taps are loaded together are stored together; staged, a thread stores all
  // its rows from the tile after the barrier.
  pattern.store_burst = smem == 1 || compiled_rows ? ept_y : std::min<std::int64_t>(ept_y, 2);
  if (smem == 0 && vector == 1) {
    // ptxas: 32-38 registers with radius 1, 54-56 with a run-time radius.
    pattern.registers_per_thread = radius == 1 ? (bytes > 4 ? 40 : 32) : 56;
    std::vector<Access> accesses = star_taps("in", y_at, x_at, radius, interior);
    accesses.push_back(store("out", {y_at(0), x_at(0)}, interior));
    pattern.phases.push_back({{rows}, std::move(accesses)});
    return pattern;
  }
  if (smem == 0) {
    // The thread's points are x0 .. x0+vector-1, x0 = (bx*block_x + tx)*vector.
    const auto x0_at = [&](std::int64_t dx) {
      return affine(dx, {{V::block_x, block_x * vector}, {V::thread_x, vector}});
    };
    const Guard row_interior = interior_guard(y_at(0), radius, n);
    const int width = static_cast<int>(vector);
    std::vector<Access> accesses{load("in", {y_at(0), x0_at(0)}, {row_interior}, width)};
    for (std::int64_t d = 1; d <= radius; ++d) {
      accesses.push_back(load("in", {y_at(0), x0_at(-d)}, {row_interior, {x0_at(-d), 0, m - d}}));
      accesses.push_back(load("in", {y_at(0), x0_at(vector - 1 + d)}, {row_interior, {x0_at(vector - 1 + d), 0, m}}));
      accesses.push_back(load("in", {y_at(-d), x0_at(0)}, {row_interior}, width));
      accesses.push_back(load("in", {y_at(d), x0_at(0)}, {row_interior}, width));
    }
    append_vector_stores(accesses, "out", {y_at(0)}, x0_at, {row_interior}, vector, radius, m);
    pattern.phases.push_back({{rows}, std::move(accesses)});
    pattern.registers_per_thread = stencil2d_vector_registers(bytes, vector, radius == 1 ? ept_y : 0, compiled_rows);
    return pattern;
  }

  const std::int64_t tile_h = block_y * ept_y + 2 * radius;
  const std::int64_t tile_w = block_x + 2 * radius;
  const std::int64_t threads = block_x * block_y;
  const std::int64_t tile_elems = checked_product(family, {tile_h, tile_w});
  pattern.arrays.push_back(shared_array("tile", bytes, {tile_h, tile_w}));
  // idx = linear_tid + i*threads; row = idx / tile_w; col = idx % tile_w.
  const std::map<IndexVar, std::int64_t> sweep_thread{{V::thread_linear, 1}};
  const std::map<std::string, std::int64_t, std::less<>> sweep_loop{{"i", threads}};
  AffineIndex tile_row;
  tile_row.quotient_terms.push_back(quotient(1, tile_w, 0, sweep_thread, sweep_loop));
  AffineIndex tile_col;
  tile_col.quotient_terms.push_back(quotient(1, 1, tile_w, sweep_thread, sweep_loop));
  AffineIndex global_row = tile_row;
  global_row.constant = -radius;
  global_row.thread_terms[V::block_y] = block_y * ept_y;
  AffineIndex global_col = tile_col;
  global_col.constant = -radius;
  global_col.thread_terms[V::block_x] = block_x;
  const Guard inside_tile{affine(0, sweep_thread, sweep_loop), 0, tile_elems};
  const std::vector<Guard> halo_guards = {inside_tile, {global_row, 0, n}, {global_col, 0, m}};
  pattern.phases.push_back({{loop("i", ceil_div(tile_elems, threads))},
                            {load("in", {global_row, global_col}, {inside_tile}),
                             store("tile", {tile_row, tile_col}, halo_guards)}});

  // Taps from the tile: local point (e*block_y + ty + r, tx + r).
  const auto ty_at = [&](std::int64_t dy) { return affine(radius + dy, {{V::thread_y, 1}}, {{"e", block_y}}); };
  const auto tx_at = [&](std::int64_t dx) { return affine(radius + dx, {{V::thread_x, 1}}); };
  std::vector<Access> taps = star_taps("tile", ty_at, tx_at, radius, interior);
  taps.push_back(store("out", {y_at(0), x_at(0)}, interior));
  pattern.phases.push_back({{rows}, std::move(taps)});
  return pattern;
}

} // namespace cachewise::family_detail
