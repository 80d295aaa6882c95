// stencil2d (docs/pattern-families.md): a star stencil of a radius on an n x m grid.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cachewise/model/families/family_kernels.hpp"
#include "families/family_support.hpp"

namespace cachewise::family_detail {
namespace {

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
  accesses.push_back(
      store(array, at(x0_at(0)), with(outer_interior, {{x0_at(0), radius, full_end}}), static_cast<int>(vector)));
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

/// A config's stencil2d layout, checked against the family's rules.
struct Stencil2dLayout {
  std::int64_t radius = 1, block_x = 0, block_y = 0, ept_y = 0, smem = 0, vector = 1;
  std::int64_t n = 0, m = 0;
  int bytes = 4;

  /// Output point: x = bx*block_x + tx, y = by*block_y*ept_y + e*block_y + ty.
  AffineIndex x_at(std::int64_t dx) const { return affine(dx, {{V::block_x, block_x}, {V::thread_x, 1}}); }
  AffineIndex y_at(std::int64_t dy) const {
    return affine(dy, {{V::block_y, block_y * ept_y}, {V::thread_y, 1}}, {{"e", block_y}});
  }
  std::vector<Guard> interior() const {
    return {interior_guard(y_at(0), radius, n), interior_guard(x_at(0), radius, m)};
  }
};

Stencil2dLayout read_stencil2d_layout(const std::string& family, const Config& config, const Sizes& sizes) {
  Stencil2dLayout s;
  s.radius = at_least(family, config, "radius", 1, 1);
  if (s.radius > kMaxStencilRadius) {
    rule_broken(family,
                "radius must be in [1, " + std::to_string(kMaxStencilRadius) + "], got " + std::to_string(s.radius));
  }
  s.block_x = at_least(family, config, "block_x", 1);
  s.block_y = at_least(family, config, "block_y", 1);
  s.ept_y = at_least(family, config, "ept_y", 1);
  s.smem = config.get("smem");
  if (s.smem != 0 && s.smem != 1) rule_broken(family, "smem must be 0 or 1, got " + std::to_string(s.smem));
  checked_product(family, {s.block_x, s.block_y, s.ept_y});
  s.vector = read_x_vector(family, config, sizes);
  if (s.smem == 1 && s.vector != 1)
    rule_broken(family, "vector must be 1 when smem=1, got " + std::to_string(s.vector));
  s.n = sizes.n;
  s.m = sizes.m;
  s.bytes = sizes.element_bytes;
  return s;
}

/// smem=0, vector=1: every tap straight from global memory.
void append_direct_phase(KernelPattern& pattern, const Stencil2dLayout& s) {
  const auto x_at = [&](std::int64_t dx) { return s.x_at(dx); };
  const auto y_at = [&](std::int64_t dy) { return s.y_at(dy); };
  std::vector<Access> accesses = star_taps("in", y_at, x_at, s.radius, s.interior());
  accesses.push_back(store("out", {s.y_at(0), s.x_at(0)}, s.interior()));
  pattern.phases.push_back({{loop("e", s.ept_y)}, std::move(accesses)});
}

/// smem=0, vector>1: the thread's points are x0 .. x0+vector-1, x0 = (bx*block_x + tx)*vector.
void append_vector_phase(KernelPattern& pattern, const Stencil2dLayout& s) {
  const std::int64_t vector = s.vector;
  const std::int64_t m = s.m;
  const auto x0_at = [&](std::int64_t dx) {
    return affine(dx, {{V::block_x, s.block_x * vector}, {V::thread_x, vector}});
  };
  const Guard row_interior = interior_guard(s.y_at(0), s.radius, s.n);
  const int width = static_cast<int>(vector);
  std::vector<Access> accesses{load("in", {s.y_at(0), x0_at(0)}, {row_interior}, width)};
  for (std::int64_t d = 1; d <= s.radius; ++d) {
    accesses.push_back(load("in", {s.y_at(0), x0_at(-d)}, {row_interior, {x0_at(-d), 0, m - d}}));
    accesses.push_back(load("in", {s.y_at(0), x0_at(vector - 1 + d)}, {row_interior, {x0_at(vector - 1 + d), 0, m}}));
    accesses.push_back(load("in", {s.y_at(-d), x0_at(0)}, {row_interior}, width));
    accesses.push_back(load("in", {s.y_at(d), x0_at(0)}, {row_interior}, width));
  }
  append_vector_stores(accesses, "out", {s.y_at(0)}, x0_at, {row_interior}, vector, s.radius, m);
  pattern.phases.push_back({{loop("e", s.ept_y)}, std::move(accesses)});
}

/// smem=1: the block stages its rows and their halo in a shared tile, then every thread reads
/// its taps from the tile.
void append_shared_tile_phases(KernelPattern& pattern, const Stencil2dLayout& s, const std::string& family) {
  const std::int64_t radius = s.radius;
  const std::int64_t tile_h = s.block_y * s.ept_y + 2 * radius;
  const std::int64_t tile_w = s.block_x + 2 * radius;
  const std::int64_t threads = s.block_x * s.block_y;
  const std::int64_t tile_elems = checked_product(family, {tile_h, tile_w});
  pattern.arrays.push_back(shared_array("tile", s.bytes, {tile_h, tile_w}));
  // idx = linear_tid + i*threads; row = idx / tile_w; col = idx % tile_w.
  const std::map<IndexVar, std::int64_t> sweep_thread{{V::thread_linear, 1}};
  const std::map<std::string, std::int64_t, std::less<>> sweep_loop{{"i", threads}};
  AffineIndex tile_row;
  tile_row.quotient_terms.push_back(quotient(1, tile_w, 0, sweep_thread, sweep_loop));
  AffineIndex tile_col;
  tile_col.quotient_terms.push_back(quotient(1, 1, tile_w, sweep_thread, sweep_loop));
  AffineIndex global_row = tile_row;
  global_row.constant = -radius;
  global_row.thread_terms[V::block_y] = s.block_y * s.ept_y;
  AffineIndex global_col = tile_col;
  global_col.constant = -radius;
  global_col.thread_terms[V::block_x] = s.block_x;
  const Guard inside_tile{affine(0, sweep_thread, sweep_loop), 0, tile_elems};
  const std::vector<Guard> halo_guards = {inside_tile, {global_row, 0, s.n}, {global_col, 0, s.m}};
  pattern.phases.push_back(
      {{loop("i", ceil_div(tile_elems, threads))},
       {load("in", {global_row, global_col}, {inside_tile}), store("tile", {tile_row, tile_col}, halo_guards)}});

  // Taps from the tile: local point (e*block_y + ty + r, tx + r).
  const auto ty_at = [&](std::int64_t dy) { return affine(radius + dy, {{V::thread_y, 1}}, {{"e", s.block_y}}); };
  const auto tx_at = [&](std::int64_t dx) { return affine(radius + dx, {{V::thread_x, 1}}); };
  std::vector<Access> taps = star_taps("tile", ty_at, tx_at, radius, s.interior());
  taps.push_back(store("out", {s.y_at(0), s.x_at(0)}, s.interior()));
  pattern.phases.push_back({{loop("e", s.ept_y)}, std::move(taps)});
}

} // namespace

KernelPattern build_stencil2d(const ProblemSpec& problem, const Config& config, const Calibration& /*calibration*/) {
  const std::string& family = problem.family;
  const Sizes sizes = read_sizes(problem, true, false);
  const Stencil2dLayout s = read_stencil2d_layout(family, config, sizes);
  const std::int64_t n = s.n;
  const std::int64_t m = s.m;
  const int bytes = s.bytes;
  KernelPattern pattern;
  pattern.name = "stencil2d";
  pattern.grid = {ceil_div(m, checked_product(family, {s.block_x, s.vector})), ceil_div(n, s.block_y * s.ept_y), 1};
  pattern.block = {s.block_x, s.block_y, 1};
  pattern.arrays = {global_array("in", bytes, {n, m}), global_array("out", bytes, {n, m})};
  const std::int64_t interior_rows = std::max<std::int64_t>(0, n - 2 * s.radius);
  const std::int64_t interior_cols = std::max<std::int64_t>(0, m - 2 * s.radius);
  pattern.useful_bytes =
      checked_product(family, {n, m, bytes}) + checked_product(family, {interior_rows, interior_cols, bytes});
  pattern.flops = static_cast<double>(interior_rows) * static_cast<double>(interior_cols) * 2.0 *
                  static_cast<double>(4 * s.radius + 1) * flops_scale(problem.dtype);
  if (s.smem == 1) {
    append_shared_tile_phases(pattern, s, family);
  } else if (s.vector == 1) {
    append_direct_phase(pattern, s);
  } else {
    append_vector_phase(pattern, s);
  }
  return pattern;
}

/// A thread stores the rows whose taps it loaded together, at most its ept_y rows; staged, it
/// stores all its rows from the tile after the barrier. Loads in flight: the largest round of the
/// kernel's SASS where it was measured (the compiled rows: ptxas hoists f16 and vector taps
/// above the conversions and sums the PTX has first, and splits 8 rows' 40 taps), else the
/// front end's rounds of the PTX.
void apply_stencil2d_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config,
                           const Calibration& /*calibration*/) {
  const CompiledKernelFacts& facts = builtin_kernel_facts(problem, config);
  set_kernel_facts(pattern, facts, config.get("ept_y"),
                   facts.sass_loads_per_round > 0 ? facts.sass_loads_per_round : facts.loads_per_round);
}

} // namespace cachewise::family_detail
