// The built-in kernels through the kernel front end (tests/frontend/builtin/crosscheck.hpp):
// the counters simulate_traced() predicts from the compiled kernels/src/<family>.cu equal,
// within 1% each, those simulate() predicts from the hand-built pattern of the same problem and
// config, on the H200 profile with the default sampling (the same on both sides). The front
// end's side is also anchored to hand-derived counts, so an error both sides share is caught.
#include <algorithm>

#include <gtest/gtest.h>

#include "builtin/crosscheck.hpp"
#include "cachewise/model.hpp"

namespace cachewise::frontend::builtin {
namespace {

const DeviceProfile& h200() {
  static const DeviceProfile profile = load_profile(std::string(CACHEWISE_SOURCE_DIR) + "/profiles/h200.json");
  return profile;
}

// Every case within 1% on every counter, except the named known deviations: those must
// still deviate (a fixed pattern or front end then moves them out of the list).
void expect_agreement(const std::vector<CrossCase>& cases) {
  ASSERT_GE(cases.size(), 10u);
  for (const CrossCase& c : cases) {
    const std::string reason = deviation_reason(c);
    double largest_diff_pct = 0;
    for (const CounterRow& row : cross_check(c, h200(), CACHEWISE_TEST_PTX_DIR)) {
      largest_diff_pct = std::max(largest_diff_pct, row.diff_pct());
      if (reason.empty()) {
        EXPECT_LE(row.diff_pct(), 1.0) << c.problem.family << " " << c.label << " " << row.counter << ": pattern "
                                       << row.pattern << ", front end " << row.frontend;
      }
    }
    if (!reason.empty()) {
      EXPECT_GT(largest_diff_pct, 1.0) << c.problem.family << " " << c.label
                                       << " agrees now: take it off known_deviations() (" << reason << ")";
    }
  }
}

double frontend_counter(const CrossCase& c, const std::string& counter) {
  for (const CounterRow& row : cross_check(c, h200(), CACHEWISE_TEST_PTX_DIR))
    if (row.counter == counter) return row.frontend;
  ADD_FAILURE() << "no counter " << counter;
  return -1;
}

CrossCase find_case(const std::vector<CrossCase>& cases, const std::string& label) {
  for (const CrossCase& c : cases)
    if (c.label == label) return c;
  ADD_FAILURE() << "no case " << label;
  return cases.front();
}

TEST(BuiltinCrossCheck, CopyAgreesWithItsPatternOnEveryConfig) { expect_agreement(copy_cases()); }

TEST(BuiltinCrossCheck, TransposeAgreesWithItsPatternOnEveryConfig) { expect_agreement(transpose_cases()); }

TEST(BuiltinCrossCheck, Stencil2dAgreesWithItsPatternOnEveryConfig) { expect_agreement(stencil2d_cases()); }

// The blocked kernel (its border columns' centre loaded alone, as nvcc branches) and the
// streaming kernels (the batched ones' 8 planes' loads before their stores, in the PTX's order)
// agree on every config.
TEST(BuiltinCrossCheck, Stencil3dAgreesWithItsPatternOnEveryConfig) { expect_agreement(stencil3d_cases()); }

// The pattern's inner product issues the compiled kernel's shared loads (merged along kk
// where nvcc merged them: the kernel facts' fragment_loads).
TEST(BuiltinCrossCheck, GemmAgreesWithItsPatternOnEveryConfig) { expect_agreement(gemm_cases()); }

// gemm 4x2 f32, pad 0, bk 16, 256^3: 16 x 16 threads, a warp two thread rows (ty, ty+1) whose
// As rows lie 4 * 16 words apart, in one bank. Per group of 4 kk the compiled kernel loads row
// 0 as one .v4 and row 2 as two .v2 (8- and 16-lane phases, each one address: no conflict),
// rows 1 and 3 as 8 scalars of 2 wavefronts (8 conflicts); Bs's lanes 0-15 and 16-31 read the
// same 16 words (none). 256 warps x 16 k-steps x 4 groups x 8 = 131072 (262144 scalar).
TEST(BuiltinCrossCheck, GemmMergedLoadsBankConflictsDerivedByHand) {
  const CrossCase c = find_case(gemm_cases(), "bm=64,bn=32,bk=16,tm=4,tn=2,pad=0 f32 256^3");
  EXPECT_EQ(frontend_counter(c, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), 256.0 * 16 * 4 * 8);
}

// copy stride 2, f32: a warp's 32 loads span 256 B = 8 sectors; its stores 128 B = 4 sectors.
// Every byte is read from and written to DRAM once: 2^22 * 4 B * 2 read, 2^22 * 4 B written.
TEST(BuiltinCrossCheck, CopyStridedCountsDerivedByHand) {
  const CrossCase c = find_case(copy_cases(), "block=256,vector=1,ept=1,stride=2 f32");
  EXPECT_DOUBLE_EQ(frontend_counter(c, "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"), 8.0);
  EXPECT_DOUBLE_EQ(frontend_counter(c, "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio"), 4.0);
  EXPECT_NEAR(frontend_counter(c, "dram__bytes_read.sum"), (1 << 22) * 8.0, (1 << 22) * 8.0 * 0.01);
  EXPECT_NEAR(frontend_counter(c, "dram__bytes_write.sum"), (1 << 22) * 4.0, (1 << 22) * 4.0 * 0.01);
}

// transpose 2048^2 f32 through unpadded 32-float shared rows: every column read of a warp
// hits one bank with 32 distinct words, 31 wavefronts more than ideal, for each of the
// 2048^2 / 32 shared load instructions; padded rows (33 floats) have none.
TEST(BuiltinCrossCheck, TransposeBankConflictsDerivedByHand) {
  const std::string counter = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
  const double requests = 2048.0 * 2048.0 / 32.0;
  EXPECT_NEAR(frontend_counter(find_case(transpose_cases(), "smem=1,tile=32,block_x=32,block_y=8,pad=0 f32 2048x2048"),
                               counter),
              31.0 * requests, 31.0 * requests * 0.01);
  EXPECT_EQ(frontend_counter(find_case(transpose_cases(), "smem=1,tile=32,block_x=32,block_y=8,pad=1 f32 2048x2048"),
                             counter),
            0.0);
}

// stencil2d radius 1, f32, 1024^2, 32 x 8 threads, one row each: the 1022 interior rows are
// stored, and their stores cover whole sectors (the edge columns share sectors with interior
// points): 1022 * 4096 B written, within 1%. Every input row is read (the halo) at least once
// from DRAM, 4 MiB, and little more: halo rows that another SM's block misses on again.
TEST(BuiltinCrossCheck, Stencil2dDramBytesDerivedByHand) {
  const CrossCase c = find_case(stencil2d_cases(), "radius=1,smem=0,block_x=32,block_y=8,ept_y=1 f32 1024x1024");
  EXPECT_NEAR(frontend_counter(c, "dram__bytes_write.sum"), 1022.0 * 4096.0, 1022.0 * 4096.0 * 0.01);
  EXPECT_GE(frontend_counter(c, "dram__bytes_read.sum"), 1024.0 * 1024.0 * 4.0);
  EXPECT_LE(frontend_counter(c, "dram__bytes_read.sum"), 1024.0 * 1024.0 * 4.0 * 1.05);
}

// stencil3d blocking, 128^3, 32-lane rows (4 warps a row): the compiled kernel's interior lanes
// load 7 taps, the border lanes x = 0, 127 their centre alone. f32 (8 points a sector): warp 0's
// x+1 (x = 2..32) spans 5 sectors, the other 6 taps 4, the border centre 1 (8 requests, 30
// sectors), warp 3 likewise; warps 1 and 2 x-1 and x+1 5 each, 4 x 5 the rest (7, 30): 120
// sectors in 30 requests. f64 (4 a sector): 9 + 8 + 5 x 8 + 1 in warps 0 and 3, 9 + 9 + 5 x 8
// in 1 and 2: 232 sectors in 30 requests.
TEST(BuiltinCrossCheck, Stencil3dBlockedSectorsPerRequestDerivedByHand) {
  const std::string counter = "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio";
  EXPECT_NEAR(
      frontend_counter(find_case(stencil3d_cases(), "mode=0,block_x=32,block_y=4,block_z=2 f32 128^3"), counter),
      120.0 / 30, 1e-9);
  EXPECT_NEAR(
      frontend_counter(find_case(stencil3d_cases(), "mode=0,block_x=32,block_y=4,block_z=4 f64 128^3"), counter),
      232.0 / 30, 1e-9);
}

} // namespace
} // namespace cachewise::frontend::builtin
