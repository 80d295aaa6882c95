// stencil3d (docs/pattern-families.md): the 7-point stencil on an n x m x k volume.
#include <algorithm>
#include <string>
#include <vector>

#include "cachewise/family_kernels.hpp"
#include "family_support.hpp"

namespace cachewise::family_detail {
namespace {

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
}

/// A config's stencil3d layout, checked against the family's rules.
struct Stencil3dLayout {
  std::int64_t mode = 0, block_x = 0, block_y = 0, block_z = 1, z_chunk = 1, vector = 1;
  std::int64_t n = 0, m = 0, k = 0;
  int bytes = 4;

  AffineIndex x_at(std::int64_t dx) const { return affine(dx, {{V::block_x, block_x}, {V::thread_x, 1}}); }
  AffineIndex y_at(std::int64_t dy) const { return affine(dy, {{V::block_y, block_y}, {V::thread_y, 1}}); }
  /// Every interior row is written whole, its border points x = 0 and x = m-1 carrying in[]
  /// through: left unwritten they leave the row's first and last sectors written in part, which
  /// L2 merges with a DRAM read (H200: about +10% time at 256^3, +3-8% at 512^3). A
  /// border point loads its taps as the others do (x-1 of x = 0 is the row before's last point).
  std::vector<Guard> written_column() const { return {interior_guard(y_at(0), 1, n), {x_at(0), 0, m}}; }
};

Stencil3dLayout read_stencil3d_layout(const std::string& family, const Config& config, const Sizes& sizes) {
  Stencil3dLayout s;
  s.mode = config.get("mode");
  if (s.mode != 0 && s.mode != 1) {
    rule_broken(family, "mode must be 0 (3D blocking) or 1 (2.5D streaming), got " + std::to_string(s.mode));
  }
  s.block_x = at_least(family, config, "block_x", 1);
  s.block_y = at_least(family, config, "block_y", 1);
  s.block_z = s.mode == 0 ? at_least(family, config, "block_z", 1) : config.get_or("block_z", 1);
  if (s.mode == 1 && s.block_z != 1) rule_broken(family, "block_z must be 1 when mode=1, got " + std::to_string(s.block_z));
  s.z_chunk = s.mode == 1 ? at_least(family, config, "z_chunk", 1) : config.get_or("z_chunk", 1);
  if (s.mode == 0 && s.z_chunk != 1) rule_broken(family, "z_chunk applies only to mode=1 (omit it or set 1)");
  checked_product(family, {s.block_x, s.block_y, s.block_z});
  s.vector = read_x_vector(family, config, sizes);
  if (s.mode == 0 && s.vector != 1) rule_broken(family, "vector must be 1 when mode=0, got " + std::to_string(s.vector));
  s.n = sizes.n;
  s.m = sizes.m;
  s.k = sizes.k;
  s.bytes = sizes.element_bytes;
  return s;
}

/// mode 0: each thread one point of a 3D block.
void append_blocked_phase(KernelPattern& pattern, const Stencil3dLayout& s) {
  const auto x_at = [&](std::int64_t dx) { return s.x_at(dx); };
  const auto y_at = [&](std::int64_t dy) { return s.y_at(dy); };
  const auto z_at = [&](std::int64_t dz) { return affine(dz, {{V::block_z, s.block_z}, {V::thread_z, 1}}); };
  std::vector<Guard> written = s.written_column();
  written.push_back(interior_guard(z_at(0), 1, s.k));
  pattern.phases.push_back({{},
                            {load("in", {z_at(0), y_at(0), x_at(0)}, written),
                             load("in", {z_at(0), y_at(0), x_at(-1)}, written),
                             load("in", {z_at(0), y_at(0), x_at(1)}, written),
                             load("in", {z_at(0), y_at(-1), x_at(0)}, written),
                             load("in", {z_at(0), y_at(1), x_at(0)}, written),
                             load("in", {z_at(-1), y_at(0), x_at(0)}, written),
                             load("in", {z_at(1), y_at(0), x_at(0)}, written),
                             store("out", {z_at(0), y_at(0), x_at(0)}, written)}});
}

/// mode 1: z = blockIdx.z*z_chunk + p. Before the first plane the thread loads in[z0-1] and
/// in[z0] (a phase of its own here); per plane in[z+1] and the four in-plane neighbours. (The
/// vector kernel's odd chunks walk down: append_streaming_vector_phases.)
void append_streaming_phases(KernelPattern& pattern, const Stencil3dLayout& s) {
  const auto x_at = [&](std::int64_t dx) { return s.x_at(dx); };
  const auto y_at = [&](std::int64_t dy) { return s.y_at(dy); };
  const std::int64_t z_chunk = s.z_chunk;
  const auto z_at = [&](std::int64_t dz, bool in_loop) {
    return in_loop ? affine(dz, {{V::block_z, z_chunk}}, {{"p", 1}}) : affine(dz, {{V::block_z, z_chunk}});
  };
  if (s.vector > 1) {
    append_streaming_vector_phases(pattern, y_at, z_chunk, s.vector, s.block_x, s.n, s.m, s.k);
    return;
  }
  const std::vector<Guard> written_column = s.written_column();
  pattern.phases.push_back({{},
                            {load("in", {z_at(-1, false), y_at(0), x_at(0)}, written_column),
                             load("in", {z_at(0, false), y_at(0), x_at(0)}, written_column)}});
  std::vector<Guard> written = written_column;
  written.push_back(interior_guard(z_at(0, true), 1, s.k));
  std::vector<Guard> next_plane = written_column;
  next_plane.push_back({z_at(0, true), 0, s.k});
  pattern.phases.push_back({{loop("p", z_chunk)},
                            {load("in", {z_at(1, true), y_at(0), x_at(0)}, next_plane),
                             unpredicated(load("in", {z_at(0, true), y_at(0), x_at(-1)}, written)),
                             unpredicated(load("in", {z_at(0, true), y_at(0), x_at(1)}, written)),
                             load("in", {z_at(0, true), y_at(-1), x_at(0)}, written),
                             load("in", {z_at(0, true), y_at(1), x_at(0)}, written),
                             store("out", {z_at(0, true), y_at(0), x_at(0)}, written)}});
}

} // namespace

KernelPattern build_stencil3d(const ProblemSpec& problem, const Config& config, const Calibration& /*calibration*/) {
  const std::string& family = problem.family;
  const Sizes sizes = read_sizes(problem, true, true);
  const Stencil3dLayout s = read_stencil3d_layout(family, config, sizes);
  const std::int64_t n = s.n;
  const std::int64_t m = s.m;
  const std::int64_t k = s.k;
  const int bytes = s.bytes;
  KernelPattern pattern;
  pattern.name = "stencil3d";
  pattern.block = {s.block_x, s.block_y, s.block_z};
  pattern.grid = {ceil_div(m, checked_product(family, {s.block_x, s.vector})), ceil_div(n, s.block_y),
                  ceil_div(k, s.mode == 0 ? s.block_z : s.z_chunk)};
  pattern.arrays = {global_array("in", bytes, {k, n, m}), global_array("out", bytes, {k, n, m})};
  const double interior_points = static_cast<double>(std::max<std::int64_t>(0, k - 2)) *
                                 static_cast<double>(std::max<std::int64_t>(0, n - 2)) *
                                 static_cast<double>(std::max<std::int64_t>(0, m - 2));
  const std::int64_t written_points = std::max<std::int64_t>(0, k - 2) * std::max<std::int64_t>(0, n - 2) * m;
  pattern.useful_bytes = checked_product(family, {n, m, k, bytes}) + checked_product(family, {written_points, bytes});
  pattern.flops = interior_points * 2.0 * 7.0 * flops_scale(problem.dtype);
  if (s.mode == 0) {
    append_blocked_phase(pattern, s);
  } else {
    append_streaming_phases(pattern, s);
  }
  return pattern;
}

/// A thread stores the planes whose taps it loaded together, at most its chunk's. The plane
/// batches of the scalar streaming kernel (kStreamingPlaneBatch planes' taps loaded before their
/// stores) go out in the calibration's stencil3d_streaming_batch_rounds: ptxas issues 18 of the
/// 40 loads the PTX has in flight before it consumes the first (docs/calibration.md says why the
/// H200's is 2).
void apply_stencil3d_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config,
                           const Calibration& calibration) {
  const CompiledKernelFacts& facts = builtin_kernel_facts(problem, config);
  const bool mode_streaming = config.get("mode") == 1;
  const std::int64_t z_chunk = mode_streaming ? config.get("z_chunk") : 1;
  const bool plane_batches = mode_streaming && config.get_or("vector", 1) == 1 && z_chunk % kStreamingPlaneBatch == 0;
  const auto rounds = std::max<std::int64_t>(1, static_cast<std::int64_t>(calibration.stencil3d_streaming_batch_rounds.value));
  set_kernel_facts(pattern, facts, z_chunk,
                   plane_batches ? std::max<std::int64_t>(1, facts.loads_per_round / rounds) : facts.loads_per_round);
}

} // namespace cachewise::family_detail
