// gemm (docs/pattern-families.md): C = A*B with shared-memory block tiles and register thread tiles.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "families/family_support.hpp"

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
  const double tile_elements_per_thread =
      static_cast<double>(g.bm * g.bk + g.bk * g.bn) / static_cast<double>(g.threads);
  return warps * static_cast<double>(g.K / g.bk) *
         (static_cast<double>(g.bk) * inner_step_overhead +
          tile_elements_per_thread * fit.per_tile_element_instructions.value + fit.per_k_step_instructions.value);
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

/// As[ty*tm + i][kk + kk_offset .. + elements) or Bs[kk + kk_offset][tx*tn + j].
Access fragment_load(const FragmentLoad& f, const GemmTiles& g, std::vector<Guard> guards) {
  if (f.fragment >= (f.from_b ? g.tn : g.tm)) {
    throw InputError("kernel facts: gemm fragment load " + fragment_load_text(f) + " outside the " +
                     std::to_string(g.tm) + "x" + std::to_string(g.tn) +
                     " thread tile (regenerate model/data/kernel_facts_sm90.json)");
  }
  if (f.from_b)
    return load("Bs", {affine(f.kk_offset, {}, {{"kk", 1}}), affine(f.fragment, {{V::thread_x, g.tn}})},
                std::move(guards));
  return load("As", {affine(f.fragment, {{V::thread_y, g.tm}}), affine(f.kk_offset, {}, {{"kk", 1}})},
              std::move(guards), f.elements);
}

/// The source's loads of one kk: a[i] = As[ty*tm + i][kk], then b[j] = Bs[kk][tx*tn + j].
std::vector<FragmentLoad> scalar_fragment_loads(const GemmTiles& g, int kk_offset) {
  std::vector<FragmentLoad> loads;
  for (std::int64_t i = 0; i < g.tm; ++i) loads.push_back({false, static_cast<int>(i), kk_offset, 1});
  for (std::int64_t j = 0; j < g.tn; ++j) loads.push_back({true, static_cast<int>(j), kk_offset, 1});
  return loads;
}

/// Inner product over the tile as compiled: groups of kk_per_group kk with the group's loads
/// (merged along kk where nvcc merged them), then the bk % kk_per_group rest one kk at a
/// time with the source's scalar loads, as the PTX's remainder loop issues them.
Phase inner_product_phase(const GemmTiles& g, std::int64_t kk_per_group, const std::vector<FragmentLoad>& group) {
  const std::int64_t whole_kk = g.bk / kk_per_group * kk_per_group;
  const auto kk_from = [](std::int64_t offset, std::int64_t begin, std::int64_t end) {
    return std::vector<Guard>{{affine(offset, {}, {{"kk", 1}}), begin, end}};
  };
  std::vector<Access> loads;
  const std::vector<Guard> in_whole_group = whole_kk < g.bk ? kk_from(0, 0, whole_kk) : std::vector<Guard>{};
  for (const FragmentLoad& f : group) loads.push_back(fragment_load(f, g, in_whole_group));
  for (std::int64_t rest = 0; whole_kk + rest < g.bk; ++rest) {
    for (const FragmentLoad& f : scalar_fragment_loads(g, static_cast<int>(rest))) {
      loads.push_back(fragment_load(f, g, kk_from(rest, whole_kk, g.bk)));
    }
  }
  return {{loop("kk", g.bk, kk_per_group)}, std::move(loads)};
}

/// The inner product as the source writes it, before the compiled kernel's facts are known.
Phase inner_product_phase(const GemmTiles& g) { return inner_product_phase(g, 1, scalar_fragment_loads(g, 0)); }

constexpr std::size_t kInnerProductPhase = 1;

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
  pattern.arrays = {global_array("A", bytes, {M, K}), global_array("B", bytes, {K, N}),
                    global_array("C", bytes, {M, N}), shared_array("As", bytes, {g.bm, g.bk + g.pad}),
                    shared_array("Bs", bytes, {g.bk, g.bn + g.pad})};
  pattern.useful_bytes = checked_product(family, {M, K, bytes}) + checked_product(family, {K, N, bytes}) +
                         checked_product(family, {M, N, bytes});
  pattern.flops =
      2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) * flops_scale(problem.dtype);
  pattern.overhead_instructions = gemm_overhead_instructions(g, pattern.grid.count(), calibration);

  pattern.phases.push_back(tile_load_phase(g));
  pattern.phases.push_back(inner_product_phase(g)); // kInnerProductPhase
  pattern.phase_loops.push_back({loop("kt", K / g.bk), 0, 2});
  // Epilogue: C[by*bm + ty*tm + i][bx*bn + tx*tn + j] = acc[i][j].
  pattern.phases.push_back({{loop("ci", g.tm), loop("cj", g.tn)},
                            {store("C", {affine(0, {{V::block_y, g.bm}, {V::thread_y, g.tm}}, {{"ci", 1}}),
                                         affine(0, {{V::block_x, g.bn}, {V::thread_x, g.tn}}, {{"cj", 1}})})}});
  return pattern;
}

/// The thread tile of C is stored once, at the end; the inner product's shared loads are the
/// compiled kernel's.
void apply_gemm_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config,
                      const Calibration& /*calibration*/) {
  const CompiledKernelFacts& facts = builtin_kernel_facts(problem, config);
  set_kernel_facts(pattern, facts, config.get("tm") * config.get("tn"));
  if (facts.fragment_loads.empty()) return;
  const GemmTiles g = read_gemm_tiles(problem.family, config, read_sizes(problem, true, true));
  pattern.phases.at(kInnerProductPhase) = inner_product_phase(g, facts.kk_per_group, facts.fragment_loads);
}

} // namespace cachewise::family_detail
