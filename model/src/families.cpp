// The built-in pattern families (docs/pattern-families.md): ProblemSpec + Config -> KernelPattern.
// Every family emits exactly the per-thread address order the contract states, so the CUDA
// kernels and the model count the same sectors.
#include <algorithm>
#include <array>
#include <bit>
#include <limits>

#include "cachewise/device_pattern.hpp"
#include "pattern_builders.hpp"

namespace cachewise {
namespace {

using pattern_builders::affine;
using pattern_builders::interior_guard;
using pattern_builders::loop;
using pattern_builders::quotient;
using V = IndexVar;

// ----- config reading and rule checks ------------------------------------------------

[[noreturn]] void rule_broken(const std::string& family, const std::string& what) {
  throw InputError(family + ": " + what);
}

/// Rejects keys the family does not read, naming the valid ones.
void check_known_keys(const FamilyInfo& info, const Config& config) {
  for (const auto& [key, value] : config.values()) {
    if (std::find(info.config_keys.begin(), info.config_keys.end(), key) != info.config_keys.end()) continue;
    std::string valid;
    for (const std::string& name : info.config_keys) valid += (valid.empty() ? "" : ", ") + name;
    throw InputError("config: unknown key '" + key + "' for " + info.name + " (valid: " + valid + ")");
  }
}

std::int64_t at_least(const std::string& family, const Config& config, std::string_view key, std::int64_t min,
                      std::int64_t fallback_if_absent = -1) {
  const std::int64_t value = fallback_if_absent >= 0 ? config.get_or(key, fallback_if_absent) : config.get(key);
  if (value < min) {
    rule_broken(family, std::string(key) + " must be >= " + std::to_string(min) + ", got " + std::to_string(value));
  }
  return value;
}

void require_multiple(const std::string& family, std::string_view what, std::int64_t value, std::string_view of,
                      std::int64_t divisor) {
  if (value % divisor != 0) {
    rule_broken(family, std::string(what) + " (" + std::to_string(value) + ") must be a multiple of " + std::string(of) +
                            " (" + std::to_string(divisor) + ")");
  }
}

/// a * b, or InputError when the product leaves int64 (sizes from the command line can be anything).
std::int64_t checked_product(const std::string& family, std::initializer_list<std::int64_t> factors) {
  std::int64_t product = 1;
  for (std::int64_t factor : factors) {
    if (__builtin_mul_overflow(product, factor, &product)) {
      rule_broken(family, "sizes too large: byte counts overflow 64-bit integers");
    }
  }
  return product;
}

struct Sizes {
  std::int64_t n = 0;
  std::int64_t m = 0;
  std::int64_t k = 0;
  int element_bytes = 4;
};

std::int64_t positive_size(const std::string& family, std::string_view name, std::int64_t value) {
  if (value <= 0) rule_broken(family, std::string(name) + " must be > 0, got " + std::to_string(value));
  return value;
}

/// Reads n (and m, k defaulting to n when 0; 1 when the family does not read them).
Sizes read_sizes(const ProblemSpec& problem, bool uses_m, bool uses_k) {
  Sizes sizes;
  sizes.n = positive_size(problem.family, "n", problem.n);
  sizes.m = uses_m ? (problem.m == 0 ? sizes.n : positive_size(problem.family, "m", problem.m)) : 1;
  sizes.k = uses_k ? (problem.k == 0 ? sizes.n : positive_size(problem.family, "k", problem.k)) : 1;
  sizes.element_bytes = element_bytes(problem.dtype);
  // No array of a family holds more than n*m*k elements; 64x headroom covers several arrays
  // and the simulator's 1 MiB alignment, so no byte count or address can overflow later.
  checked_product(problem.family, {sizes.n, sizes.m, sizes.k, sizes.element_bytes, 64});
  return sizes;
}

/// `vector` elements moved as one access: 1, 2, 4 or 8 of them, at most 16 bytes.
void check_vector_width(const std::string& family, std::int64_t vector, int element_bytes) {
  if (vector != 1 && vector != 2 && vector != 4 && vector != 8) {
    rule_broken(family, "vector must be 1, 2, 4 or 8, got " + std::to_string(vector));
  }
  if (vector * element_bytes > 16) {
    rule_broken(family, "vector*sizeof(T) must be <= 16 bytes, got " + std::to_string(vector * element_bytes));
  }
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

ArrayDecl global_array(std::string name, int element_bytes, std::vector<std::int64_t> extents) {
  return {std::move(name), MemorySpace::global, element_bytes, std::move(extents)};
}

ArrayDecl shared_array(std::string name, int element_bytes, std::vector<std::int64_t> extents) {
  return {std::move(name), MemorySpace::shared, element_bytes, std::move(extents)};
}

Access load(std::string array, std::vector<AffineIndex> index, std::vector<Guard> guards = {}, int vector = 1) {
  return {std::move(array), false, std::move(index), vector, true, std::move(guards)};
}

Access store(std::string array, std::vector<AffineIndex> index, std::vector<Guard> guards = {}, int vector = 1) {
  return {std::move(array), true, std::move(index), vector, true, std::move(guards)};
}

/// Elements a thread of the batched kernels moves at a time: kMoveBatch loads, then their
/// stores (kernels/src/batched_moves.cuh), so that many loads are in flight.
constexpr std::int64_t kMoveBatch = 4;

/// Planes whose taps stencil3d's streaming kernels load at once when z_chunk is a multiple of
/// it (kernels/src/stencil.cu): 8 for scalars, 2 for vectors (wider taps, fewer registers).
constexpr std::int64_t kStreamingPlaneBatch = 8;
constexpr std::int64_t kVectorPlaneBatch = 2;

double flops_scale(DataType type) { return type == DataType::f64 ? 2.0 : 1.0; }

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

// ----- transpose -----------------------------------------------------------------------

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
  // The kernels move a batch of elements (loads, then stores) at a time: a full tile of a
  // compiled shape (power-of-two rows and at most 8 columns per thread) up to 16 per batch,
  // otherwise the bounds-checked walk's 8 (kernels/src/transpose.cu).
  const std::int64_t per_thread = (tile / block_x) * (tile / block_y);
  const bool power_of_two_shape = std::has_single_bit(static_cast<std::uint64_t>(tile / block_x)) &&
                                  std::has_single_bit(static_cast<std::uint64_t>(tile / block_y)) && tile / block_x <= 8;
  pattern.loads_in_flight = std::min<std::int64_t>(per_thread, power_of_two_shape ? 16 : 8);
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

// ----- copy ----------------------------------------------------------------------------

KernelPattern build_copy(const ProblemSpec& problem, const Config& config, const Calibration& /*calibration*/) {
  const std::string& family = problem.family;
  const Sizes sizes = read_sizes(problem, false, false);
  const std::int64_t block = at_least(family, config, "block", 32);
  const std::int64_t vector = config.get("vector");
  const std::int64_t ept = at_least(family, config, "ept", 1);
  const std::int64_t stride = at_least(family, config, "stride", 1, 1);
  const int bytes = sizes.element_bytes;
  check_vector_width(family, vector, bytes);
  require_multiple(family, "block", block, "the warp size", 32);
  if (stride > 1 && vector != 1) rule_broken(family, "vector must be 1 when stride > 1");
  require_multiple(family, "n", sizes.n, "vector", vector);

  const std::int64_t n = sizes.n;
  KernelPattern pattern;
  pattern.name = "copy";
  pattern.grid = {ceil_div(n, checked_product(family, {block, ept, vector})), 1, 1};
  pattern.block = {block, 1, 1};
  pattern.arrays = {global_array("in", bytes, {checked_product(family, {n, stride, bytes}) / bytes}),
                    global_array("out", bytes, {n})};
  pattern.useful_bytes = checked_product(family, {n, bytes, 2});
  // Vector index v = (blockIdx.x*ept + e)*block + threadIdx.x; element i = v*vector.
  const auto element = [&](std::int64_t scale) {
    return affine(0, {{V::block_x, scale * vector * ept * block}, {V::thread_x, scale * vector}},
                  {{"e", scale * vector * block}});
  };
  pattern.phases.push_back({{loop("e", ept)},
                            {load("in", {element(stride)}, {}, static_cast<int>(vector)),
                             store("out", {element(1)}, {}, static_cast<int>(vector))}});
  pattern.loads_in_flight = std::min<std::int64_t>(ept, kMoveBatch); // batched_moves
  pattern.store_burst = pattern.loads_in_flight;
  // ptxas (nvcc 13.0, sm_90, rounded up to 8): 28 with 16-byte words, 58-63 with 2- to 8-byte
  // ones: the narrow copies hold half the threads per SM the default 32 would allow.
  pattern.registers_per_thread = vector * bytes == 16 ? 32 : 64;
  return pattern;
}

// ----- stencil2d -----------------------------------------------------------------------

/// The stencils' `vector` key (points per thread along x, moved as one access): 1, 2, 4 or 8,
/// at most 16 bytes, and dividing m so that every vector is aligned and inside a row.
std::int64_t read_x_vector(const std::string& family, const Config& config, const Sizes& sizes) {
  const std::int64_t vector = config.get_or("vector", 1);
  check_vector_width(family, vector, sizes.element_bytes);
  require_multiple(family, "m", sizes.m, "vector", vector);
  return vector;
}

/// A vector thread's output: one vector store when all its points are interior columns
/// [radius, m - radius), otherwise (the row's first and last vectors) one scalar store per
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

KernelPattern build_stencil2d(const ProblemSpec& problem, const Config& config, const Calibration& /*calibration*/) {
  const std::string& family = problem.family;
  const Sizes sizes = read_sizes(problem, true, false);
  const std::int64_t radius = at_least(family, config, "radius", 1, 1);
  if (radius > 8) rule_broken(family, "radius must be in [1, 8], got " + std::to_string(radius));
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

// ----- stencil3d -----------------------------------------------------------------------

/// 2.5D streaming with `vector` points per thread along x (x0 = (bx*block_x + tx)*vector): the
/// scalar mode's loads with the centre column, in[z+1] and the y neighbours as vectors, x-1 and
/// x0+vector as scalars inside the row; one vector store per plane, the border points carrying
/// their centre, so every row is written whole (build_stencil3d says why). Odd chunks walk
/// down (the kernel says why): there the loop runs backwards, the window starts at in[z0 +
/// z_chunk] and in[z0 + z_chunk - 1], and the plane ahead is z-1.
template <typename YAt>
void append_streaming_vector_phases(KernelPattern& pattern, const YAt& y_at, std::int64_t z_chunk, std::int64_t vector,
                                    std::int64_t block_x, std::int64_t n, std::int64_t m, std::int64_t k) {
  const auto x0_at = [&](std::int64_t dx) { return affine(dx, {{V::block_x, block_x * vector}, {V::thread_x, vector}}); };
  // The window's first planes: in[z0 + dz] in even chunks, in[z0 + dz + z_chunk - 1 + down] in
  // odd ones (behind: dz = -1, down = 2, so in[z0 + z_chunk]; centre: dz = down = 0).
  const auto chunk_end = [&](std::int64_t dz, std::int64_t down) {
    AffineIndex z = affine(dz, {{V::block_z, z_chunk}});
    z.quotient_terms.push_back(quotient(z_chunk - 1 + down, 1, 2, {{V::block_z, 1}}, {}));
    return z;
  };
  const AffineIndex z = affine(0, {{V::block_z, z_chunk}}, {{"p", 1}});
  AffineIndex ahead = affine(1, {{V::block_z, z_chunk}}, {{"p", 1}}); // z+1, z-1 in odd chunks
  ahead.quotient_terms.push_back(quotient(-2, 1, 2, {{V::block_z, 1}}, {}));
  const int width = static_cast<int>(vector);
  const Guard interior_rows = interior_guard(y_at(0), 1, n);
  pattern.phases.push_back({{},
                            {load("in", {chunk_end(-1, 2), y_at(0), x0_at(0)}, {interior_rows}, width),
                             load("in", {chunk_end(0, 0), y_at(0), x0_at(0)}, {interior_rows}, width)}});
  const Guard interior_plane = interior_guard(z, 1, k);
  std::vector<Access> accesses{
      load("in", {ahead, y_at(0), x0_at(0)}, {interior_rows, {z, 0, k}}, width),
      load("in", {z, y_at(0), x0_at(-1)}, {interior_rows, interior_plane, {x0_at(-1), 0, m - 1}}),
      load("in", {z, y_at(0), x0_at(vector)}, {interior_rows, interior_plane, {x0_at(vector), 0, m}}),
      load("in", {z, y_at(-1), x0_at(0)}, {interior_rows, interior_plane}, width),
      load("in", {z, y_at(1), x0_at(0)}, {interior_rows, interior_plane}, width)};
  accesses.push_back(store("out", {z, y_at(0), x0_at(0)}, {interior_rows, interior_plane, {x0_at(0), 0, m}}, width));
  Loop planes = loop("p", z_chunk);
  planes.reversed_where_odd = V::block_z;
  pattern.phases.push_back({{planes}, std::move(accesses)});
  // Two planes' taps (3 vectors + 2 scalars each) per batch. Registers as ptxas allots them
  // (nvcc 13.0, sm_90, rounded up to the 8 per thread a warp is allotted in): f32 and f16
  // vector 2/4/8: 32/40/56 (ptxas 32, 36-40, 55), f64 vector 2: 56. An estimate above that
  // cost 8-plane chunks of 256 threads a quarter of their blocks per SM (6 instead of 8). The
  // kernel holds ptxas to these (vector_walk_registers in kernels/src/stencil.cu).
  const bool wide_lanes = pattern.arrays[0].element_bytes > 4;
  pattern.registers_per_thread = wide_lanes ? 56 : vector == 2 ? 32 : vector == 4 ? 40 : 56;
  pattern.loads_in_flight = z_chunk % kVectorPlaneBatch == 0 ? 5 * kVectorPlaneBatch : 5;
  pattern.store_burst = z_chunk % kVectorPlaneBatch == 0 ? kVectorPlaneBatch : 1;
}

KernelPattern build_stencil3d(const ProblemSpec& problem, const Config& config, const Calibration& /*calibration*/) {
  const std::string& family = problem.family;
  const Sizes sizes = read_sizes(problem, true, true);
  const std::int64_t mode = config.get("mode");
  if (mode != 0 && mode != 1) rule_broken(family, "mode must be 0 (3D blocking) or 1 (2.5D streaming), got " + std::to_string(mode));
  const std::int64_t block_x = at_least(family, config, "block_x", 1);
  const std::int64_t block_y = at_least(family, config, "block_y", 1);
  const std::int64_t block_z = mode == 0 ? at_least(family, config, "block_z", 1) : config.get_or("block_z", 1);
  if (mode == 1 && block_z != 1) rule_broken(family, "block_z must be 1 when mode=1, got " + std::to_string(block_z));
  const std::int64_t z_chunk = mode == 1 ? at_least(family, config, "z_chunk", 1) : config.get_or("z_chunk", 1);
  if (mode == 0 && z_chunk != 1) rule_broken(family, "z_chunk applies only to mode=1 (omit it or set 1)");
  checked_product(family, {block_x, block_y, block_z});
  const std::int64_t vector = read_x_vector(family, config, sizes);
  if (mode == 0 && vector != 1) rule_broken(family, "vector must be 1 when mode=0, got " + std::to_string(vector));

  const std::int64_t n = sizes.n;
  const std::int64_t m = sizes.m;
  const std::int64_t k = sizes.k;
  const int bytes = sizes.element_bytes;
  KernelPattern pattern;
  pattern.name = "stencil3d";
  pattern.block = {block_x, block_y, block_z};
  pattern.grid = {ceil_div(m, checked_product(family, {block_x, vector})), ceil_div(n, block_y),
                  ceil_div(k, mode == 0 ? block_z : z_chunk)};
  pattern.arrays = {global_array("in", bytes, {k, n, m}), global_array("out", bytes, {k, n, m})};
  const double interior_points = static_cast<double>(std::max<std::int64_t>(0, k - 2)) *
                          static_cast<double>(std::max<std::int64_t>(0, n - 2)) *
                          static_cast<double>(std::max<std::int64_t>(0, m - 2));
  const std::int64_t written_points = std::max<std::int64_t>(0, k - 2) * std::max<std::int64_t>(0, n - 2) * m;
  pattern.useful_bytes = checked_product(family, {n, m, k, bytes}) + checked_product(family, {written_points, bytes});
  pattern.flops = interior_points * 2.0 * 7.0 * flops_scale(problem.dtype);

  const auto x_at = [&](std::int64_t dx) { return affine(dx, {{V::block_x, block_x}, {V::thread_x, 1}}); };
  const auto y_at = [&](std::int64_t dy) { return affine(dy, {{V::block_y, block_y}, {V::thread_y, 1}}); };
  // Every interior row is written whole, its border points x = 0 and x = m-1 carrying in[]
  // through: left unwritten they leave the row's first and last sectors written in part, which
  // L2 merges with a DRAM read (H200, session 8: about +10% time at 256^3, +3-8% at 512^3). A border
  // point loads its taps as the others do (x-1 of x = 0 is the row before's last point).
  const std::vector<Guard> written_column = {interior_guard(y_at(0), 1, n), {x_at(0), 0, m}};

  // 3D blocking: a point's 7 taps are independent loads. Streaming: per plane 5 loads; chunks
  // of a multiple of kStreamingPlaneBatch planes load that many planes' taps together, which
  // ptxas (32 registers) issues as two rounds: 18 of the 40 before it consumes the first (H200
  // SASS, f32, session 7), the rest as those arrive. Session 8's SASS of the kernels that write
  // whole rows shows smaller groups (at most 16 of the 40, and 5-7 of a vector batch's 10); the
  // model kept the session-7 numbers, which rank run 15's configs better (Spearman 0.82 / 0.84
  // against 0.79 / 0.79; docs/model.md, "Session 8").
  constexpr std::int64_t kStreamingBatchRounds = 2;
  pattern.loads_in_flight =
      mode == 0 ? 7 : (z_chunk % kStreamingPlaneBatch == 0 ? 5 * kStreamingPlaneBatch / kStreamingBatchRounds : 5);
  pattern.store_burst = mode == 1 && z_chunk % kStreamingPlaneBatch == 0 ? kStreamingPlaneBatch : 1;
  // ptxas (nvcc 13.0, sm_90, rounded up to 8): streaming 32 (40 for f32 in batches: 34),
  // blocking 24.
  pattern.registers_per_thread = mode == 0 ? 24 : (bytes == 4 && z_chunk % kStreamingPlaneBatch == 0 ? 40 : 32);
  if (mode == 0) {
    const auto z_at = [&](std::int64_t dz) { return affine(dz, {{V::block_z, block_z}, {V::thread_z, 1}}); };
    std::vector<Guard> written = written_column;
    written.push_back(interior_guard(z_at(0), 1, k));
    pattern.phases.push_back({{},
                              {load("in", {z_at(0), y_at(0), x_at(0)}, written),
                               load("in", {z_at(0), y_at(0), x_at(-1)}, written),
                               load("in", {z_at(0), y_at(0), x_at(1)}, written),
                               load("in", {z_at(0), y_at(-1), x_at(0)}, written),
                               load("in", {z_at(0), y_at(1), x_at(0)}, written),
                               load("in", {z_at(-1), y_at(0), x_at(0)}, written),
                               load("in", {z_at(1), y_at(0), x_at(0)}, written),
                               store("out", {z_at(0), y_at(0), x_at(0)}, written)}});
    return pattern;
  }

  // mode 1: z = blockIdx.z*z_chunk + p. Before the first plane the thread loads in[z0-1] and
  // in[z0] (a phase of its own here); per plane in[z+1] and the four in-plane neighbours. (The
  // vector kernel's odd chunks walk down: append_streaming_vector_phases.)
  const auto z_at = [&](std::int64_t dz, bool in_loop) {
    return in_loop ? affine(dz, {{V::block_z, z_chunk}}, {{"p", 1}}) : affine(dz, {{V::block_z, z_chunk}});
  };
  if (vector > 1) {
    append_streaming_vector_phases(pattern, y_at, z_chunk, vector, block_x, n, m, k);
    return pattern;
  }
  pattern.phases.push_back({{},
                            {load("in", {z_at(-1, false), y_at(0), x_at(0)}, written_column),
                             load("in", {z_at(0, false), y_at(0), x_at(0)}, written_column)}});
  std::vector<Guard> written = written_column;
  written.push_back(interior_guard(z_at(0, true), 1, k));
  std::vector<Guard> next_plane = written_column;
  next_plane.push_back({z_at(0, true), 0, k});
  pattern.phases.push_back({{loop("p", z_chunk)},
                            {load("in", {z_at(1, true), y_at(0), x_at(0)}, next_plane),
                             load("in", {z_at(0, true), y_at(0), x_at(-1)}, written),
                             load("in", {z_at(0, true), y_at(0), x_at(1)}, written),
                             load("in", {z_at(0, true), y_at(-1), x_at(0)}, written),
                             load("in", {z_at(0, true), y_at(1), x_at(0)}, written),
                             store("out", {z_at(0, true), y_at(0), x_at(0)}, written)}});
  return pattern;
}

// ----- gemm ----------------------------------------------------------------------------

KernelPattern build_gemm(const ProblemSpec& problem, const Config& config, const Calibration& calibration) {
  const std::string& family = problem.family;
  const Sizes sizes = read_sizes(problem, true, true);
  const std::int64_t bm = at_least(family, config, "bm", 1);
  const std::int64_t bn = at_least(family, config, "bn", 1);
  const std::int64_t bk = at_least(family, config, "bk", 1);
  const std::int64_t tm = at_least(family, config, "tm", 1);
  const std::int64_t tn = at_least(family, config, "tn", 1);
  const std::int64_t pad = config.get("pad");
  if (pad < 0 || pad > 32) rule_broken(family, "pad must be in [0, 32], got " + std::to_string(pad));
  require_multiple(family, "bm", bm, "tm", tm);
  require_multiple(family, "bn", bn, "tn", tn);
  const std::int64_t M = sizes.n;
  const std::int64_t N = sizes.m;
  const std::int64_t K = sizes.k;
  require_multiple(family, "M (n)", M, "bm", bm);
  require_multiple(family, "N (m)", N, "bn", bn);
  require_multiple(family, "K (k)", K, "bk", bk);
  const std::int64_t threads_x = bn / tn;
  const std::int64_t threads_y = bm / tm;
  const std::int64_t threads = checked_product(family, {threads_x, threads_y});
  require_multiple(family, "threads per block (bm/tm)*(bn/tn)", threads, "the warp size", 32);

  const int bytes = sizes.element_bytes;
  KernelPattern pattern;
  pattern.name = "gemm";
  pattern.grid = {N / bn, M / bm, 1};
  pattern.block = {threads_x, threads_y, 1};
  pattern.arrays = {global_array("A", bytes, {M, K}), global_array("B", bytes, {K, N}), global_array("C", bytes, {M, N}),
                    shared_array("As", bytes, {bm, bk + pad}), shared_array("Bs", bytes, {bk, bn + pad})};
  pattern.useful_bytes = checked_product(family, {M, K, bytes}) + checked_product(family, {K, N, bytes}) +
                         checked_product(family, {M, N, bytes});
  pattern.flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) * flops_scale(problem.dtype);
  // The kernel keeps kMoveBatch tile elements in flight per thread (kernels/src/batched_moves.cuh)
  // beside its accumulators and a/b fragments. Registers as ptxas allots them (nvcc 13.0,
  // sm_90; the occupancy rounds them up to the 8 per thread a warp is allotted in), by element
  // type, tm and tn; the estimate they replace (40 + batch + fragments) gave 8x2 f32 tiles 70
  // for 64, one 512-thread block per SM instead of two.
  static constexpr std::array<std::int64_t, 16> kF32{42, 48, 48, 48, 45, 48, 56, 64, 48, 52, 66, 74, 56, 64, 80, 115};
  static constexpr std::array<std::int64_t, 16> kF64{47, 52, 56, 64, 48, 56, 64, 80, 56, 66, 82, 125, 70, 106, 128, 193};
  static constexpr std::array<std::int64_t, 16> kF16{42, 48, 48, 48, 43, 48, 50, 56, 48, 48, 62, 75, 56, 56, 80, 115};
  const auto compiled = [](std::int64_t v) { return std::has_single_bit(static_cast<std::uint64_t>(v)) && v <= 8; };
  const bool compiled_tile = compiled(tm) && compiled(tn);
  const auto tile_index = compiled_tile ? static_cast<std::size_t>(4 * std::countr_zero(static_cast<std::uint64_t>(tm)) +
                                                                   std::countr_zero(static_cast<std::uint64_t>(tn)))
                                        : 0;
  if (compiled_tile) {
    pattern.registers_per_thread = (problem.dtype == DataType::f64   ? kF64
                                    : problem.dtype == DataType::f16 ? kF16
                                                                     : kF32)[tile_index];
  } else { // no compiled kernel: the estimate, accumulators and fragments beside the batch
    const std::int64_t element_words = (bytes + 3) / 4;
    const std::int64_t accumulator_words = problem.dtype == DataType::f64 ? 2 : 1;
    pattern.registers_per_thread =
        std::min<std::int64_t>(255, 40 + kMoveBatch * element_words + (tm * tn + tm + tn) * accumulator_words);
  }
  pattern.loads_in_flight = kMoveBatch;
  pattern.store_burst = tm * tn; // the thread tile of C, once at the end
  // Instructions beyond the accesses and FMAs, per warp: a cost per tile element a thread
  // loads, per k-step and per inner-product step by thread tile (the calibration's fit of
  // smsp__inst_executed.sum, docs/calibration.md). Other element types are assumed to cost as f32.
  const GemmOverheadFit& fit = calibration.gemm_overhead;
  const auto inner = fit.inner_step_instructions_by_thread_tile.find(std::to_string(tm) + "x" + std::to_string(tn));
  const double inner_step_overhead = inner != fit.inner_step_instructions_by_thread_tile.end() ? inner->second : 0.0;
  const double warps = static_cast<double>(pattern.grid.count()) * static_cast<double>(threads) / 32.0;
  const double tile_elements_per_thread = static_cast<double>(bm * bk + bk * bn) / static_cast<double>(threads);
  pattern.overhead_instructions =
      warps * static_cast<double>(K / bk) *
      (static_cast<double>(bk) * inner_step_overhead + tile_elements_per_thread * fit.per_tile_element_instructions.value +
       fit.per_k_step_instructions.value);

  // Tile loads: idx = t + i*threads; A: r = idx / bk, c = idx % bk; B: r = idx / bn, c = idx % bn.
  // The kernel issues a thread's loads in this order kMoveBatch at a time, then their stores.
  const std::map<IndexVar, std::int64_t> sweep_thread{{V::thread_linear, 1}};
  const std::map<std::string, std::int64_t, std::less<>> sweep_loop{{"i", threads}};
  const auto sweep_row = [&](std::int64_t width) {
    AffineIndex index;
    index.quotient_terms.push_back(quotient(1, width, 0, sweep_thread, sweep_loop));
    return index;
  };
  const auto sweep_col = [&](std::int64_t width) {
    AffineIndex index;
    index.quotient_terms.push_back(quotient(1, 1, width, sweep_thread, sweep_loop));
    return index;
  };
  AffineIndex a_row = sweep_row(bk);
  a_row.thread_terms[V::block_y] = bm;
  AffineIndex a_col = sweep_col(bk);
  a_col.loop_terms["kt"] = bk;
  AffineIndex b_row = sweep_row(bn);
  b_row.loop_terms["kt"] = bk;
  AffineIndex b_col = sweep_col(bn);
  b_col.thread_terms[V::block_x] = bn;
  const Guard a_part{affine(0, sweep_thread, sweep_loop), 0, bm * bk};
  const Guard b_part{affine(0, sweep_thread, sweep_loop), 0, bk * bn};
  const std::int64_t sweeps = ceil_div(std::max(bm * bk, bk * bn), threads);
  pattern.phases.push_back({{loop("i", sweeps)},
                            {load("A", {a_row, a_col}, {a_part}), store("As", {sweep_row(bk), sweep_col(bk)}, {a_part}),
                             load("B", {b_row, b_col}, {b_part}), store("Bs", {sweep_row(bn), sweep_col(bn)}, {b_part})}});

  // Inner product over the tile: a[i] = As[ty*tm + i][kk], b[j] = Bs[kk][tx*tn + j].
  std::vector<Access> products;
  for (std::int64_t i = 0; i < tm; ++i) {
    products.push_back(load("As", {affine(i, {{V::thread_y, tm}}), affine(0, {}, {{"kk", 1}})}));
  }
  for (std::int64_t j = 0; j < tn; ++j) {
    products.push_back(load("Bs", {affine(0, {}, {{"kk", 1}}), affine(j, {{V::thread_x, tn}})}));
  }
  pattern.phases.push_back({{loop("kk", bk)}, std::move(products)});
  pattern.phase_loops.push_back({loop("kt", K / bk), 0, 2});

  // Epilogue: C[by*bm + ty*tm + i][bx*bn + tx*tn + j] = acc[i][j].
  pattern.phases.push_back({{loop("ci", tm), loop("cj", tn)},
                            {store("C", {affine(0, {{V::block_y, bm}, {V::thread_y, tm}}, {{"ci", 1}}),
                                         affine(0, {{V::block_x, bn}, {V::thread_x, tn}}, {{"cj", 1}})})}});
  return pattern;
}

using Builder = KernelPattern (*)(const ProblemSpec&, const Config&, const Calibration&);

struct Family {
  FamilyInfo info;
  Builder build;
};

const std::vector<Family>& family_table() {
  static const std::vector<Family> table = {
      {{"copy", "out[i] = in[i*stride]: vector width, elements per thread, block size",
        {"block", "ept", "stride", "vector"}, {"n"}},
       build_copy},
      {{"gemm", "C = A*B with shared-memory block tiles and register thread tiles", {"bk", "bm", "bn", "pad", "tm", "tn"},
        {"n", "m", "k"}},
       build_gemm},
      {{"stencil2d", "star stencil of a radius on an n x m grid, optional shared-memory tile or x vectors",
        {"block_x", "block_y", "ept_y", "radius", "smem", "vector"}, {"n", "m"}},
       build_stencil2d},
      {{"stencil3d", "7-point stencil on an n x m x k volume: 3D blocking or 2.5D streaming (x vectors)",
        {"block_x", "block_y", "block_z", "mode", "vector", "z_chunk"}, {"n", "m", "k"}},
       build_stencil3d},
      {{"transpose", "out[j][i] = in[i][j], direct or through a shared-memory tile",
        {"block_x", "block_y", "pad", "smem", "tile"}, {"n", "m"}},
       build_transpose},
  };
  return table;
}

const Family& find_family(std::string_view name) {
  for (const Family& family : family_table()) {
    if (family.info.name == name) return family;
  }
  std::string valid;
  for (const Family& family : family_table()) valid += (valid.empty() ? "" : ", ") + family.info.name;
  throw InputError("unknown pattern '" + std::string(name) + "' (valid: " + valid + ")");
}

} // namespace

const std::vector<FamilyInfo>& families() {
  static const std::vector<FamilyInfo> infos = [] {
    std::vector<FamilyInfo> out;
    for (const Family& family : family_table()) out.push_back(family.info);
    return out;
  }();
  return infos;
}

const FamilyInfo& family_info(std::string_view name) { return find_family(name).info; }

void check_problem(const ProblemSpec& problem) {
  const FamilyInfo& info = family_info(problem.family);
  const auto reads = [&info](std::string_view key) { return std::ranges::find(info.size_keys, key) != info.size_keys.end(); };
  read_sizes(problem, reads("m"), reads("k"));
}

KernelPattern build_pattern(const ProblemSpec& problem, const Config& config, const Calibration& calibration) {
  const Family& family = find_family(problem.family);
  check_known_keys(family.info, config);
  KernelPattern pattern = family.build(problem, config, calibration);
  validate_pattern(pattern);
  return pattern;
}

KernelPattern build_pattern(const ProblemSpec& problem, const Config& config) {
  return build_pattern(problem, config, default_calibration());
}

} // namespace cachewise
