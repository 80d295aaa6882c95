// gemm (docs/pattern-families.md): C = A*B with shared-memory block tiles and register thread tiles.
#include <algorithm>
#include <array>
#include <bit>

#include "cachewise/family_kernels.hpp"
#include "family_support.hpp"

namespace cachewise::family_detail {

KernelPattern build_gemm(const ProblemSpec& problem, const Config& config) {
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
  // Instructions beyond the accesses and FMAs (smsp__inst_executed.sum on the H200, f32, 140
  // configs of every compiled thread tile at n=512 and 1024, fitted within 1.7% on average,
  // scripts/eval/fit_gemm_overhead.py, docs/model.md "Session 6"; the two slightly negative
  // inner-step fits set to 0): each tile element a thread loads costs 55 (the sweep cursor,
  // the A-or-B choice, 64-bit addresses), a k-step 79, an inner-product step a few by thread
  // tile. The other element types are assumed to cost as f32.
  static constexpr std::array<double, 16> kInnerStepOverhead{1.4, 1.0, 0.8, 1.3, 0.5, 0.6, 0.0, 2.2,
                                                             0.3, 0.0, 2.4, 8.7, 4.3, 4.4, 8.5, 15.8};
  constexpr double kPerTileElementOverhead = 55.1;
  constexpr double kPerKStepOverhead = 78.9;
  const double inner_step_overhead = compiled_tile ? kInnerStepOverhead[tile_index] : 0.0;
  const double warps = static_cast<double>(pattern.grid.count()) * static_cast<double>(threads) / 32.0;
  const double tile_elements_per_thread = static_cast<double>(bm * bk + bk * bn) / static_cast<double>(threads);
  pattern.overhead_instructions =
      warps * static_cast<double>(K / bk) *
      (static_cast<double>(bk) * inner_step_overhead + tile_elements_per_thread * kPerTileElementOverhead + kPerKStepOverhead);

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

} // namespace cachewise::family_detail
