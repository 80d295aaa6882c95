// Built-in families: config validation (one clear message each) and the shapes they build.
#include <gtest/gtest.h>

#include "cachewise/model/families/builtin_kernels.hpp"
#include "cachewise/model.hpp"
#include "cachewise/model/families/device_pattern.hpp"

namespace cachewise {
namespace {

void expect_rejected(const ProblemSpec& problem, const std::string& config, const std::string& message) {
  try {
    build_pattern(problem, Config::parse(config));
    FAIL() << "accepted " << config << ", expected: " << message;
  } catch (const InputError& error) {
    EXPECT_EQ(error.what(), message);
  }
}

TEST(Families, ListsTheFiveContractFamilies) {
  std::vector<std::string> names;
  for (const FamilyInfo& info : families()) names.push_back(info.name);
  EXPECT_EQ(names, (std::vector<std::string>{"copy", "gemm", "stencil2d", "stencil3d", "transpose"}));
  EXPECT_EQ(family_info("transpose").config_keys,
            (std::vector<std::string>{"block_x", "block_y", "pad", "smem", "tile"}));
}

TEST(Families, UnknownFamilyListsTheValidOnes) {
  expect_rejected({"transpos", 64}, "",
                  "unknown pattern 'transpos' (valid: copy, gemm, stencil2d, stencil3d, transpose)");
}

TEST(Families, MissingAndUnknownKeys) {
  expect_rejected({"transpose", 64}, "smem=1,block_x=32,block_y=8,pad=1", "config: missing key 'tile'");
  expect_rejected({"transpose", 64}, "smem=1,tile=32,block_x=32,block_y=8,pad=1,ept=2",
                  "config: unknown key 'ept' for transpose (valid: block_x, block_y, pad, smem, tile)");
}

TEST(Families, RuleViolations) {
  expect_rejected({"transpose", 64}, "smem=1,tile=30,block_x=32,block_y=8,pad=0",
                  "transpose: tile (30) must be a multiple of block_x (32)");
  expect_rejected({"transpose", 64}, "smem=1,tile=32,block_x=32,block_y=6,pad=0",
                  "transpose: tile (32) must be a multiple of block_y (6)");
  expect_rejected({"transpose", 64}, "smem=0,tile=32,block_x=32,block_y=8,pad=1",
                  "transpose: pad must be 0 when smem=0, got 1");
  expect_rejected({"transpose", 64}, "smem=2,tile=32,block_x=32,block_y=8", "transpose: smem must be 0 or 1, got 2");
  expect_rejected({"copy", 100}, "block=256,vector=8,ept=1", "copy: vector*sizeof(T) must be <= 16 bytes, got 32");
  expect_rejected({"copy", 100}, "block=100,vector=1,ept=1",
                  "copy: block (100) must be a multiple of the warp size (32)");
  expect_rejected({"copy", 100}, "block=128,vector=2,ept=1,stride=2", "copy: vector must be 1 when stride > 1");
  expect_rejected({"copy", 102}, "block=128,vector=4,ept=1", "copy: n (102) must be a multiple of vector (4)");
  expect_rejected({"stencil2d", 64}, "radius=9,block_x=32,block_y=8,ept_y=1,smem=0",
                  "stencil2d: radius must be in [1, 8], got 9");
  expect_rejected({"stencil3d", 64}, "mode=1,block_x=32,block_y=4,block_z=2,z_chunk=4",
                  "stencil3d: block_z must be 1 when mode=1, got 2");
  expect_rejected({"stencil2d", 64}, "block_x=32,block_y=1,ept_y=1,smem=1,vector=4",
                  "stencil2d: vector must be 1 when smem=1, got 4");
  expect_rejected({"stencil2d", 64}, "block_x=32,block_y=1,ept_y=1,smem=0,vector=3",
                  "stencil2d: vector must be 1, 2, 4 or 8, got 3");
  expect_rejected({"stencil2d", 64, 0, 0, DataType::f64}, "block_x=32,block_y=1,ept_y=1,smem=0,vector=4",
                  "stencil2d: vector*sizeof(T) must be <= 16 bytes, got 32");
  expect_rejected({"stencil2d", 64, 66}, "block_x=32,block_y=1,ept_y=1,smem=0,vector=4",
                  "stencil2d: m (66) must be a multiple of vector (4)");
  expect_rejected({"stencil3d", 64}, "mode=0,block_x=32,block_y=4,block_z=2,vector=2",
                  "stencil3d: vector must be 1 when mode=0, got 2");
  expect_rejected({"gemm", 100}, "bm=64,bn=64,bk=8,tm=4,tn=4,pad=0", "gemm: M (n) (100) must be a multiple of bm (64)");
  expect_rejected({"gemm", 96}, "bm=24,bn=16,bk=8,tm=4,tn=2,pad=0",
                  "gemm: threads per block (bm/tm)*(bn/tn) (48) must be a multiple of the warp size (32)");
}

TEST(Families, BadSizes) {
  expect_rejected({"transpose", 0}, "smem=0,tile=32,block_x=32,block_y=8", "transpose: n must be > 0, got 0");
  expect_rejected({"transpose", -5}, "smem=0,tile=32,block_x=32,block_y=8", "transpose: n must be > 0, got -5");
  expect_rejected({"copy", std::int64_t{1} << 62}, "block=128,vector=1,ept=1",
                  "copy: sizes too large: byte counts overflow 64-bit integers");
}

TEST(Families, DocumentedDefaultsMayBeOmitted) {
  const KernelPattern copy = build_pattern({"copy", 1024}, Config::parse("block=128,vector=4,ept=1"));
  EXPECT_EQ(copy.arrays[0].extents[0], 1024); // stride 1
  const KernelPattern direct = build_pattern({"transpose", 64}, Config::parse("smem=0,tile=32,block_x=32,block_y=8"));
  EXPECT_EQ(shared_bytes_per_block(direct), 0);
  const KernelPattern stencil = build_pattern({"stencil2d", 64}, Config::parse("block_x=32,block_y=8,ept_y=1,smem=1"));
  EXPECT_EQ(shared_bytes_per_block(stencil), (8 + 2) * (32 + 2) * 4); // radius 1
}

TEST(Families, ShapesFollowTheContract) {
  const KernelPattern t = build_pattern({"transpose", 100, 70, 0, DataType::f64},
                                        Config::parse("smem=1,tile=32,block_x=32,block_y=8,pad=1"));
  EXPECT_EQ(t.grid, (Dim3{3, 4, 1})); // ceil(m/tile), ceil(n/tile)
  EXPECT_EQ(shared_bytes_per_block(t), 32 * 33 * 8);
  const KernelPattern g = build_pattern({"gemm", 256, 128, 64}, Config::parse("bm=64,bn=32,bk=16,tm=4,tn=2,pad=1"));
  EXPECT_EQ(g.grid, (Dim3{4, 4, 1})); // N/bn, M/bm
  EXPECT_EQ(g.block.count(), 16 * 16);
  EXPECT_EQ(shared_bytes_per_block(g), (64 * 17 + 16 * 33) * 4);
  const KernelPattern s =
      build_pattern({"stencil3d", 64, 32, 16}, Config::parse("mode=1,block_x=32,block_y=4,z_chunk=8"));
  EXPECT_EQ(s.grid, (Dim3{1, 16, 2}));
}

TEST(Families, BlocksPerSmFollowTheTightestLimit) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  // Direct transpose: 256 threads, 32 registers: 2048 threads per SM allow 8.
  EXPECT_EQ(
      blocks_per_sm(build_pattern({"transpose", 64}, Config::parse("smem=0,tile=32,block_x=32,block_y=8")), profile),
      8);
  // Through shared memory: 48 registers x 256 threads = 12288 per block: 65536 / 12288 = 5.
  EXPECT_EQ(blocks_per_sm(build_pattern({"transpose", 64}, Config::parse("smem=1,tile=32,block_x=32,block_y=8,pad=1")),
                          profile),
            5);
  // f64 tile 64, 32x8: shared 64x65 doubles = 33280 B (+1 KiB reserved) would allow 233472 /
  // 34304 = 6, but 64 registers x 256 threads allow 65536 / 16384 = 4.
  EXPECT_EQ(blocks_per_sm(build_pattern({"transpose", 64, 0, 0, DataType::f64},
                                        Config::parse("smem=1,tile=64,block_x=32,block_y=8,pad=1")),
                          profile),
            4);
  // Stencil tile (32*4 + 16) x (32 + 16) f32 = 27648 B (+1 KiB reserved): 233472 / 28672 = 8.
  EXPECT_EQ(
      blocks_per_sm(build_pattern({"stencil2d", 512}, Config::parse("radius=8,block_x=32,block_y=4,ept_y=32,smem=1")),
                    profile),
      8);
  // 32-thread blocks: the 32-blocks-per-SM limit.
  EXPECT_EQ(blocks_per_sm(build_pattern({"copy", 4096}, Config::parse("block=32,vector=1,ept=1")), profile), 32);
}

TEST(Families, StoreBurstIsTheCompiledRunCappedByTheThreadsStores) {
  const auto burst = [](const ProblemSpec& problem, const char* config) {
    return build_pattern(problem, Config::parse(config)).store_burst;
  };
  // copy and transpose store each batch after loading it: batches of kMoveBatch = 4 (copy), of
  // the thread's tile elements up to kMaxFullTileBatch = 16 (a compiled transpose shape), never
  // more than the thread's own elements.
  EXPECT_EQ(burst({"copy", 1 << 20}, "block=128,vector=4,ept=2"), 2);
  EXPECT_EQ(burst({"copy", 1 << 20}, "block=128,vector=4,ept=8"), 4);
  EXPECT_EQ(burst({"transpose", 1024}, "smem=1,tile=64,block_x=32,block_y=8,pad=1"), 16);
  EXPECT_EQ(burst({"transpose", 1024}, "smem=0,tile=32,block_x=32,block_y=8"), 4);
  // stencil2d, compiled rows: all ept_y rows' stores follow their taps; staged, every row
  // after the barrier (shared loads do not end a run of global stores).
  EXPECT_EQ(burst({"stencil2d", 1024}, "radius=1,block_x=64,block_y=2,ept_y=8,smem=0,vector=4"), 8);
  EXPECT_EQ(burst({"stencil2d", 1024}, "radius=1,block_x=32,block_y=8,ept_y=4,smem=1"), 4);
  // stencil3d: the vector kernel's 2-plane batches, the scalar streaming kernel's 8 (a
  // 4-plane chunk: its 4), blocking 1.
  EXPECT_EQ(burst({"stencil3d", 256}, "mode=1,block_x=64,block_y=4,vector=2,z_chunk=8"), 2);
  EXPECT_EQ(burst({"stencil3d", 256}, "mode=1,block_x=64,block_y=4,vector=2,z_chunk=1"), 1);
  EXPECT_EQ(burst({"stencil3d", 256}, "mode=1,block_x=64,block_y=4,z_chunk=16"), 8);
  EXPECT_EQ(burst({"stencil3d", 256}, "mode=0,block_x=32,block_y=4,block_z=2"), 1);
  // gemm writes its thread tile of C once, at the end.
  EXPECT_EQ(burst({"gemm", 512}, "bm=64,bn=64,bk=8,tm=4,tn=2,pad=1"), 8);
}

TEST(Families, LoadsInFlightAreTheCompiledKernelsRounds) {
  const auto in_flight = [](const ProblemSpec& problem, const char* config) {
    return build_pattern(problem, Config::parse(config)).loads_in_flight;
  };
  // The batched kernels keep a whole batch in flight: copy and gemm kMoveBatch = 4, transpose
  // its compiled batch (tile 32 over 32x2: 16 elements per thread, one batch of 16; the
  // bounds-checked walk of tile 48 over 16x6: kTransposeBatch = 8).
  EXPECT_EQ(in_flight({"copy", 1 << 20}, "block=128,vector=4,ept=8"), 4);
  EXPECT_EQ(in_flight({"gemm", 512}, "bm=64,bn=64,bk=8,tm=4,tn=2,pad=1"), 4);
  EXPECT_EQ(in_flight({"transpose", 1024}, "smem=1,tile=32,block_x=32,block_y=2,pad=1"), 16);
  EXPECT_EQ(in_flight({"transpose", 1536}, "smem=1,tile=48,block_x=16,block_y=6,pad=1"), 8);
  // stencil3d blocking: a point's 7 taps; streaming in 8-plane batches: 40 taps, in the
  // calibration's rounds (1 without one; the H200's 2: two rounds of 20).
  EXPECT_EQ(in_flight({"stencil3d", 256}, "mode=0,block_x=32,block_y=4,block_z=2"), 7);
  EXPECT_EQ(in_flight({"stencil3d", 256}, "mode=1,block_x=64,block_y=4,z_chunk=16"), 40);
  Calibration two_rounds = default_calibration();
  two_rounds.stencil3d_streaming_batch_rounds.value = 2;
  EXPECT_EQ(build_pattern({"stencil3d", 256}, Config::parse("mode=1,block_x=64,block_y=4,z_chunk=16"), two_rounds)
                .loads_in_flight,
            20);
  // stencil2d radius 1, one compiled row: its 5 taps. Compiled rows take the largest round of
  // their H200 SASS (measurements/sass/stencil-loads-by-stretch.txt): f32 vector 4 with 4
  // rows issues its 20 taps in rounds of 5, 7, 3, 5; the scalar kernel 8 rows' 40 in 17, 20, 3.
  EXPECT_EQ(in_flight({"stencil2d", 1024}, "radius=1,block_x=32,block_y=4,ept_y=1,smem=0"), 5);
  EXPECT_EQ(in_flight({"stencil2d", 1024}, "radius=1,block_x=32,block_y=4,ept_y=4,smem=0,vector=4"), 7);
  EXPECT_EQ(in_flight({"stencil2d", 1024}, "radius=1,block_x=32,block_y=4,ept_y=8,smem=0"), 20);
  // Rows with no SASS measured (3: rolled) take the front end's rounds of the PTX.
  const ProblemSpec rolled_problem{"stencil2d", 1024};
  const Config rolled = Config::parse("radius=1,block_x=32,block_y=4,ept_y=3,smem=0");
  EXPECT_EQ(builtin_kernel_facts(rolled_problem, rolled).sass_loads_per_round, 0);
  EXPECT_EQ(build_pattern(rolled_problem, rolled).loads_in_flight,
            builtin_kernel_facts(rolled_problem, rolled).loads_per_round);
}

TEST(Families, GemmRegistersSetItsOccupancy) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  // f64 4x4 tile, 256 threads: ptxas -v reports 82 registers for gemm_tiled<double, 4, 4>, 2624 -> 2816 per warp, 22528
  // per block: 65536 / 22528 = 2 blocks (shared memory would allow 12: (64*17 + 16*65) x 8 B + 1 KiB = 18048 B of
  // 233472; threads 8).
  const KernelPattern f64_tiles =
      build_pattern({"gemm", 256, 0, 0, DataType::f64}, Config::parse("bm=64,bn=64,bk=16,tm=4,tn=4,pad=1"));
  EXPECT_EQ(f64_tiles.registers_per_thread, 82);
  EXPECT_EQ(blocks_per_sm(f64_tiles, profile), 2);
  // f32 2x4 tile, 1024 threads: 56 registers, 1792 per warp, 32 warps use 57344: one block.
  EXPECT_EQ(blocks_per_sm(build_pattern({"gemm", 256}, Config::parse("bm=64,bn=128,bk=16,tm=2,tn=4,pad=0")), profile),
            1);
  // f32 8x2 tile, 512 threads: 64 registers, 2048 per warp, 16 warps 32768: two blocks (the
  // estimate it replaced, 70 -> 72, allowed one).
  EXPECT_EQ(blocks_per_sm(build_pattern({"gemm", 1024}, Config::parse("bm=64,bn=128,bk=32,tm=8,tn=2,pad=1")), profile),
            2);
  // A thread tile no kernel compiles (3x2) is not a kernel the model can describe.
  expect_rejected({"gemm", 192}, "bm=48,bn=64,bk=16,tm=3,tn=2,pad=1",
                  "gemm: tm=3 has no compiled kernel (compiled: 1, 2, 4, 8)");
  // f32 4x4 tile, 1024 threads: 66 registers, 2112 -> 2304 per warp: 32 warps need 73728, so
  // the kernel cannot launch and the model says so.
  try {
    check_fits_device(build_pattern({"gemm", 256}, Config::parse("bm=128,bn=128,bk=16,tm=4,tn=4,pad=0")), profile);
    FAIL() << "accepted a 1024-thread 4x4 gemm block";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "pattern needs 73728 registers per block; the device allows 65536");
  }
}

} // namespace
} // namespace cachewise
