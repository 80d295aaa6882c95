// gemm (docs/pattern-families.md): C = A*B with shared-memory block tiles and register thread tiles.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "family_support.hpp"

namespace cachewise::family_detail {

namespace {

/// The block and thread tiles of a config, checked against the sizes.
struct GemmTiles {
  std::int64_t bm = 0, bn = 0, bk = 0, tm = 0, tn = 0, pad = 0;
  std::int64_t M = 0, N = 0, K = 0;
  std::int64_t threads_x = 0, threads_y = 0, threads = 0;
};

GemmTiles read_gemm_tiles(const std::string& family, const Config& config, const Sizes& sizes) {
  GemmTiles g;
  g.bm = at_least(family, config, "bm", 1);
  g.bn = at_least(family, config, "bn", 1);
  g.bk = at_least(family, config, "bk", 1);
  g.tm = at_least(family, config, "tm", 1);
  g.tn = at_least(family, config, "tn", 1);
  g.pad = config.get("pad");
  if (g.pad < 0 || g.pad > 32) rule_broken(family, "pad must be in [0, 32], got " + std::to_string(g.pad));
  require_multiple(family, "bm", g.bm, "tm", g.tm);
  require_multiple(family, "bn", g.bn, "tn", g.tn);
  g.M = sizes.n;
  g.N = sizes.m;
  g.K = sizes.k;
  require_multiple(family, "M (n)", g.M, "bm", g.bm);
  require_multiple(family, "N (m)", g.N, "bn", g.bn);
  require_multiple(family, "K (k)", g.K, "bk", g.bk);
  g.threads_x = g.bn / g.tn;
  g.threads_y = g.bm / g.tm;
  g.threads = checked_product(family, {g.threads_x, g.threads_y});
  require_multiple(family, "threads per block (bm/tm)*(bn/tn)", g.threads, "the warp size", 32);
  return g;
}

/// Instructions beyond the accesses and FMAs, per warp: a cost per tile element a thread
/// loads, per k-step and per inner-product step by thread tile (the calibration's fit of
/// smsp__inst_executed.sum, docs/calibration.md). Other element types are assumed to cost as f32.
double gemm_overhead_instructions(const GemmTiles& g, std::int64_t blocks, const Calibration& calibration) {
  const GemmOverheadFit& fit = calibration.gemm_overhead;
  const auto inner = fit.inner_step_instructions_by_thread_tile.find(std::to_string(g.tm) + "x" + std::to_string(g.tn));
  const double inner_step_overhead = inner != fit.inner_step_instructions_by_thread_tile.end() ? inner->second : 0.0;
  const double warps = static_cast<double>(blocks) * static_cast<double>(g.threads) / 32.0;
  const double tile_elements_per_thread = static_cast<double>(g.bm * g.bk + g.bk * g.bn) / static_cast<double>(g.threads);
  return warps * static_cast<double>(g.K / g.bk) *
         (static_cast<double>(g.bk) * inner_step_overhead + tile_elements_per_thread * fit.per_tile_element_instructions.value +
          fit.per_k_step_instructions.value);
}

/// Tile loads: idx = t + i*threads; A: r = idx / bk, c = idx % bk; B: r = idx / bn, c = idx % bn.
/// The kernel issues a thread's loads in this order kMoveBatch at a time, then their stores.
Phase tile_load_phase(const GemmTiles& g) {
  const std::map<IndexVar, std::int64_t> sweep_thread{{V::thread_linear, 1}};
  const std::map<std::string, std::int64_t, std::less<>> sweep_loop{{"i", g.threads}};
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
  AffineIndex a_row = sweep_row(g.bk);
  a_row.thread_terms[V::block_y] = g.bm;
  AffineIndex a_col = sweep_col(g.bk);
  a_col.loop_terms["kt"] = g.bk;
  AffineIndex b_row = sweep_row(g.bn);
  b_row.loop_terms["kt"] = g.bk;
  AffineIndex b_col = sweep_col(g.bn);
  b_col.thread_terms[V::block_x] = g.bn;
  const Guard a_part{affine(0, sweep_thread, sweep_loop), 0, g.bm * g.bk};
  const Guard b_part{affine(0, sweep_thread, sweep_loop), 0, g.bk * g.bn};
  const std::int64_t sweeps = ceil_div(std::max(g.bm * g.bk, g.bk * g.bn), g.threads);
  return {{loop("i", sweeps)},
          {load("A", {a_row, a_col}, {a_part}), store("As", {sweep_row(g.bk), sweep_col(g.bk)}, {a_part}),
           load("B", {b_row, b_col}, {b_part}), store("Bs", {sweep_row(g.bn), sweep_col(g.bn)}, {b_part})}};
}

/// Inner product over the tile: a[i] = As[ty*tm + i][kk], b[j] = Bs[kk][tx*tn + j].
Phase inner_product_phase(const GemmTiles& g) {
  std::vector<Access> products;
  for (std::int64_t i = 0; i < g.tm; ++i) {
    products.push_back(load("As", {affine(i, {{V::thread_y, g.tm}}), affine(0, {}, {{"kk", 1}})}));
  }
  for (std::int64_t j = 0; j < g.tn; ++j) {
    products.push_back(load("Bs", {affine(0, {}, {{"kk", 1}}), affine(j, {{V::thread_x, g.tn}})}));
  }
  return {{loop("kk", g.bk)}, std::move(products)};
}

} // namespace

KernelPattern build_gemm(const ProblemSpec& problem, const Config& config, const Calibration& calibration) {
  const std::string& family = problem.family;
  const Sizes sizes = read_sizes(problem, true, true);
  const GemmTiles g = read_gemm_tiles(family, config, sizes);
  const std::int64_t M = g.M, N = g.N, K = g.K;

  const int bytes = sizes.element_bytes;
  KernelPattern pattern;
  pattern.name = "gemm";
  pattern.grid = {N / g.bn, M / g.bm, 1};
  pattern.block = {g.threads_x, g.threads_y, 1};
  pattern.arrays = {global_array("A", bytes, {M, K}), global_array("B", bytes, {K, N}), global_array("C", bytes, {M, N}),
                    shared_array("As", bytes, {g.bm, g.bk + g.pad}), shared_array("Bs", bytes, {g.bk, g.bn + g.pad})};
  pattern.useful_bytes = checked_product(family, {M, K, bytes}) + checked_product(family, {K, N, bytes}) +
                         checked_product(family, {M, N, bytes});
  pattern.flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) * flops_scale(problem.dtype);
  pattern.overhead_instructions = gemm_overhead_instructions(g, pattern.grid.count(), calibration);

  pattern.phases.push_back(tile_load_phase(g));
  pattern.phases.push_back(inner_product_phase(g));
  pattern.phase_loops.push_back({loop("kt", K / g.bk), 0, 2});
  // Epilogue: C[by*bm + ty*tm + i][bx*bn + tx*tn + j] = acc[i][j].
  pattern.phases.push_back({{loop("ci", g.tm), loop("cj", g.tn)},
                            {store("C", {affine(0, {{V::block_y, g.bm}, {V::thread_y, g.tm}}, {{"ci", 1}}),
                                         affine(0, {{V::block_x, g.bn}, {V::thread_x, g.tn}}, {{"cj", 1}})})}});
  return pattern;
}

/// The thread tile of C is stored once, at the end.
void apply_gemm_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config, const Calibration& /*calibration*/) {
  set_kernel_facts(pattern, builtin_kernel_facts(problem, config), config.get("tm") * config.get("tn"));
}

} // namespace cachewise::family_detail
