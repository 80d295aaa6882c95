// stencil3d (docs/pattern-families.md): the 7-point stencil on an n x m x k volume.
#include <algorithm>
#include <string>
#include <vector>

#include "cachewise/model/families/family_kernels.hpp"
#include "families/family_support.hpp"

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
  const auto x0_at = [&](std::int64_t dx) {
    return affine(dx, {{V::block_x, block_x * vector}, {V::thread_x, vector}});
  };
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
  /// L2 merges with a DRAM read (H200: about +10% time at 256^3, +3-8% at 512^3). In the
  /// streaming kernels a border point loads its taps as the others do (x-1 of x = 0 is the row
  /// before's last point); in the blocked one it loads its centre alone (append_blocked_phase).
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
  if (s.mode == 1 && s.block_z != 1)
    rule_broken(family, "block_z must be 1 when mode=1, got " + std::to_string(s.block_z));
  s.z_chunk = s.mode == 1 ? at_least(family, config, "z_chunk", 1) : config.get_or("z_chunk", 1);
  if (s.mode == 0 && s.z_chunk != 1) rule_broken(family, "z_chunk applies only to mode=1 (omit it or set 1)");
  checked_product(family, {s.block_x, s.block_y, s.block_z});
  s.vector = read_x_vector(family, config, sizes);
  if (s.mode == 0 && s.vector != 1)
    rule_broken(family, "vector must be 1 when mode=0, got " + std::to_string(s.vector));
  s.n = sizes.n;
  s.m = sizes.m;
  s.k = sizes.k;
  s.bytes = sizes.element_bytes;
  return s;
}

/// mode 0: each thread one point of a 3D block. nvcc turns the kernel's select of the centre on
/// the border columns into a branch (measurements/frontend-crosscheck.md): in f32 and f64 the interior
/// lanes (1 <= x < m-1) load the 7 taps in the PTX's order (x+1, x-1, y-1, y+1, z-1, z+1,
/// centre); in f16 every lane loads the six neighbours first (x-1, x+1, y-1, y+1, z-1, z+1, each
/// converted by inline asm ahead of the branch; x-1 of x = 0 is the row before's last point),
/// then the interior lanes their centre. Then the border lanes (x = 0, m-1) load their centre
/// in an instruction of its own (the front end runs the taken path first), and all store.
void append_blocked_phase(KernelPattern& pattern, const Stencil3dLayout& s) {
  const auto z_at = [&](std::int64_t dz) { return affine(dz, {{V::block_z, s.block_z}, {V::thread_z, 1}}); };
  std::vector<Guard> written = s.written_column();
  written.push_back(interior_guard(z_at(0), 1, s.k));
  std::vector<Guard> interior = written;
  interior.push_back(interior_guard(s.x_at(0), 1, s.m));
  // x mod (m-1) == 0 holds for x = 0 and x = m-1 alone (x < m): both borders in one guard.
  AffineIndex border_x;
  border_x.quotient_terms.push_back(quotient(1, 1, s.m - 1, {{V::block_x, s.block_x}, {V::thread_x, 1}}, {}));
  std::vector<Guard> border = written;
  border.push_back({border_x, 0, 1});
  const auto tap = [&](std::int64_t dz, std::int64_t dy, std::int64_t dx, const std::vector<Guard>& guards) {
    return load("in", {z_at(dz), s.y_at(dy), s.x_at(dx)}, guards);
  };
  std::vector<Access> accesses;
  if (s.bytes == 2) {
    accesses = {unpredicated(tap(0, 0, -1, written)),
                unpredicated(tap(0, 0, 1, written)),
                tap(0, -1, 0, written),
                tap(0, 1, 0, written),
                tap(-1, 0, 0, written),
                tap(1, 0, 0, written),
                tap(0, 0, 0, interior)};
  } else {
    accesses = {tap(0, 0, 1, interior),  tap(0, 0, -1, interior), tap(0, -1, 0, interior), tap(0, 1, 0, interior),
                tap(-1, 0, 0, interior), tap(1, 0, 0, interior),  tap(0, 0, 0, interior)};
  }
  accesses.push_back(tap(0, 0, 0, border));
  accesses.push_back(store("out", {z_at(0), s.y_at(0), s.x_at(0)}, written));
  pattern.phases.push_back({{}, std::move(accesses)});
}

/// One plane's accesses in the scalar streaming kernel at plane z (z = blockIdx.z*z_chunk + a
/// loop term): in[z+1], the plane ahead (for every plane z of the volume), and on the interior
/// planes the four in-plane neighbours x-1, x+1, y-1, y+1 and the store.
struct StreamingPlane {
  Access ahead;
  Access x_minus, x_plus, y_minus, y_plus;
  Access output;
};

StreamingPlane streaming_plane(const Stencil3dLayout& s, const AffineIndex& z) {
  const std::vector<Guard> written_column = s.written_column();
  std::vector<Guard> written = written_column;
  written.push_back(interior_guard(z, 1, s.k));
  std::vector<Guard> next_plane = written_column;
  next_plane.push_back({z, 0, s.k});
  AffineIndex above = z;
  above.constant += 1;
  return {load("in", {above, s.y_at(0), s.x_at(0)}, next_plane),
          unpredicated(load("in", {z, s.y_at(0), s.x_at(-1)}, written)),
          unpredicated(load("in", {z, s.y_at(0), s.x_at(1)}, written)),
          load("in", {z, s.y_at(-1), s.x_at(0)}, written),
          load("in", {z, s.y_at(1), s.x_at(0)}, written),
          store("out", {z, s.y_at(0), s.x_at(0)}, written)};
}

/// A batch of kStreamingPlaneBatch planes (z = blockIdx.z*z_chunk + batch*kStreamingPlaneBatch
/// + u): every plane's loads, then the planes' stores, in the PTX's order. In f32 and f64 nvcc
/// loads plane 0's in-plane taps (x+1, x-1, y-1, y+1), then per further plane u its in[z+1]
/// and taps, and plane 0's in[z+1] last; in f16 each plane's in[z+1], x-1, x+1, y-1, y+1.
std::vector<Access> streaming_batch(const Stencil3dLayout& s) {
  std::vector<StreamingPlane> planes;
  for (std::int64_t u = 0; u < kStreamingPlaneBatch; ++u) {
    planes.push_back(streaming_plane(s, affine(u, {{V::block_z, s.z_chunk}}, {{"batch", kStreamingPlaneBatch}})));
  }
  const bool half = s.bytes == 2;
  std::vector<Access> accesses;
  for (std::size_t u = 0; u < planes.size(); ++u) {
    const StreamingPlane& plane = planes[u];
    if (half) {
      accesses.insert(accesses.end(), {plane.ahead, plane.x_minus, plane.x_plus, plane.y_minus, plane.y_plus});
    } else {
      if (u > 0) accesses.push_back(plane.ahead);
      accesses.insert(accesses.end(), {plane.x_plus, plane.x_minus, plane.y_minus, plane.y_plus});
    }
  }
  if (!half) accesses.push_back(planes.front().ahead);
  for (const StreamingPlane& plane : planes) accesses.push_back(plane.output);
  return accesses;
}

/// mode 1: z = blockIdx.z*z_chunk + p. Before the first plane the thread loads in[z0-1] and
/// in[z0] (a phase of its own here); then its planes in batches when z_chunk is a multiple of
/// kStreamingPlaneBatch (as the kernel's launcher picks), else plane by plane: in[z+1] and the
/// four in-plane neighbours, then the store. (The vector kernel's odd chunks walk down:
/// append_streaming_vector_phases.)
void append_streaming_phases(KernelPattern& pattern, const Stencil3dLayout& s) {
  const std::int64_t z_chunk = s.z_chunk;
  if (s.vector > 1) {
    append_streaming_vector_phases(
        pattern, [&](std::int64_t dy) { return s.y_at(dy); }, z_chunk, s.vector, s.block_x, s.n, s.m, s.k);
    return;
  }
  const std::vector<Guard> written_column = s.written_column();
  pattern.phases.push_back({{},
                            {load("in", {affine(-1, {{V::block_z, z_chunk}}), s.y_at(0), s.x_at(0)}, written_column),
                             load("in", {affine(0, {{V::block_z, z_chunk}}), s.y_at(0), s.x_at(0)}, written_column)}});
  if (z_chunk % kStreamingPlaneBatch == 0) {
    pattern.phases.push_back({{loop("batch", z_chunk / kStreamingPlaneBatch)}, streaming_batch(s)});
    return;
  }
  const StreamingPlane plane = streaming_plane(s, affine(0, {{V::block_z, z_chunk}}, {{"p", 1}}));
  pattern.phases.push_back(
      {{loop("p", z_chunk)}, {plane.ahead, plane.x_minus, plane.x_plus, plane.y_minus, plane.y_plus, plane.output}});
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
  const auto rounds =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(calibration.stencil3d_streaming_batch_rounds.value));
  set_kernel_facts(pattern, facts, z_chunk,
                   plane_batches ? std::max<std::int64_t>(1, facts.loads_per_round / rounds) : facts.loads_per_round);
}

} // namespace cachewise::family_detail
