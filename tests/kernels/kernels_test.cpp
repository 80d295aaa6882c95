// Every family's kernel against the double-precision CPU reference, on random inputs, for
// several configs each, including sizes that no tile divides. Needs a GPU (label `gpu`).
#include <cmath>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "cachewise/model/families/families.hpp"
#include "cachewise/kernels.hpp"

namespace cachewise::kernels {
namespace {

struct Case {
  ProblemSpec problem;
  std::string config;
};

std::string describe(const Case& c) {
  return c.problem.family + " n=" + std::to_string(c.problem.n) + " m=" + std::to_string(c.problem.m) +
         " k=" + std::to_string(c.problem.k) + " " + to_string(c.problem.dtype) + " " + c.config;
}

void expect_matches_reference(const Case& c) {
  SCOPED_TRACE(describe(c));
  const Config config = Config::parse(c.config);
  Workload workload(c.problem, config, 1, 7);
  launch_family_kernel(c.problem, config, workload);
  const double error = max_relative_error(c.problem, config, workload);
  EXPECT_LE(error, error_tolerance(c.problem));
}

ProblemSpec problem(std::string family, std::int64_t n, std::int64_t m, std::int64_t k, DataType dtype) {
  return ProblemSpec{std::move(family), n, m, k, dtype};
}

TEST(Transpose, MatchesReferenceForEveryVariantAndRaggedSizes) {
  for (const DataType dtype : {DataType::f32, DataType::f64, DataType::f16}) {
    for (const std::string config :
         {"smem=0,tile=32,block_x=32,block_y=8,pad=0", "smem=1,tile=32,block_x=32,block_y=8,pad=1",
          "smem=1,tile=32,block_x=32,block_y=8,pad=0", "smem=1,tile=16,block_x=16,block_y=16,pad=0",
          "smem=0,tile=8,block_x=8,block_y=4,pad=0", "smem=1,tile=64,block_x=32,block_y=16,pad=1"}) {
      expect_matches_reference({problem("transpose", 67, 45, 0, dtype), config});
      expect_matches_reference({problem("transpose", 128, 0, 0, dtype), config});
    }
  }
}

TEST(Copy, MatchesReferenceForVectorsEptAndStride) {
  expect_matches_reference({problem("copy", 1000, 0, 0, DataType::f32), "block=128,vector=1,ept=1,stride=1"});
  expect_matches_reference({problem("copy", 1000, 0, 0, DataType::f32), "block=256,vector=4,ept=4,stride=1"});
  expect_matches_reference({problem("copy", 4098, 0, 0, DataType::f32), "block=64,vector=2,ept=3,stride=1"});
  expect_matches_reference({problem("copy", 1000, 0, 0, DataType::f32), "block=128,vector=1,ept=2,stride=3"});
  expect_matches_reference({problem("copy", 4096, 0, 0, DataType::f16), "block=128,vector=8,ept=2,stride=1"});
  expect_matches_reference({problem("copy", 4094, 0, 0, DataType::f16), "block=32,vector=1,ept=1,stride=1"});
  expect_matches_reference({problem("copy", 2002, 0, 0, DataType::f64), "block=96,vector=2,ept=1,stride=1"});
  expect_matches_reference({problem("copy", 999, 0, 0, DataType::f64), "block=256,vector=1,ept=2,stride=5"});
}

TEST(Stencil2d, MatchesReferenceWithAndWithoutSharedMemory) {
  for (const DataType dtype : {DataType::f32, DataType::f64, DataType::f16}) {
    for (const std::string config :
         {"radius=1,block_x=32,block_y=8,ept_y=1,smem=0", "radius=1,block_x=32,block_y=8,ept_y=1,smem=1",
          "radius=3,block_x=32,block_y=4,ept_y=2,smem=0", "radius=3,block_x=16,block_y=8,ept_y=4,smem=1",
          "radius=8,block_x=64,block_y=4,ept_y=1,smem=1"}) {
      expect_matches_reference({problem("stencil2d", 70, 93, 0, dtype), config});
    }
  }
}

TEST(Stencil2d, VectorsMatchReferenceIncludingEdgeVectorsAndRaggedRows) {
  // m = 96: every vector width divides it; the first and last vector of each row store their
  // interior points one by one. ept_y 4 takes the compiled rows, 3 the rolled loop, radius 3
  // the run-time radius; n = 70 leaves partial row blocks.
  for (const DataType dtype : {DataType::f32, DataType::f64, DataType::f16}) {
    const int widest = 16 / static_cast<int>(element_bytes(dtype));
    for (int vector = 2; vector <= widest; vector *= 2) {
      const std::string v = ",vector=" + std::to_string(vector);
      for (const std::string config :
           {"radius=1,block_x=8,block_y=4,ept_y=4,smem=0", "radius=1,block_x=16,block_y=2,ept_y=3,smem=0",
            "radius=3,block_x=8,block_y=4,ept_y=2,smem=0", "radius=1,block_x=4,block_y=8,ept_y=8,smem=0"}) {
        expect_matches_reference({problem("stencil2d", 70, 96, 0, dtype), config + v});
      }
    }
  }
}

TEST(Stencil3d, StreamingVectorsMatchReference) {
  // m = 40: vectors of 2, 4 and 8 divide it; z_chunk 4 walks its planes in batches of 2 (the
  // bottom chunk's 3 written planes: a batch and one left over), 5 plane by plane; k = 17
  // leaves a last chunk that writes no plane.
  for (const DataType dtype : {DataType::f32, DataType::f64, DataType::f16}) {
    const int widest = 16 / static_cast<int>(element_bytes(dtype));
    for (int vector = 2; vector <= widest; vector *= 2) {
      const std::string v = ",vector=" + std::to_string(vector);
      for (const std::string config :
           {"mode=1,block_x=8,block_y=4,z_chunk=4", "mode=1,block_x=4,block_y=8,z_chunk=5"}) {
        expect_matches_reference({problem("stencil3d", 20, 40, 17, dtype), config + v});
      }
    }
  }
}

TEST(Stencil3d, MatchesReferenceInBothModes) {
  for (const DataType dtype : {DataType::f32, DataType::f64, DataType::f16}) {
    // Streaming with k = 17: z_chunk 4 plane by plane; 8 a bottom chunk of 7 written planes (all
    // left over), a full batch of 8, a top chunk writing none; 64 one chunk of 15 (a batch of
    // 8 and 7 left over).
    for (const std::string config :
         {"mode=0,block_x=32,block_y=4,block_z=2", "mode=0,block_x=8,block_y=8,block_z=8",
          "mode=1,block_x=32,block_y=4,block_z=1,z_chunk=4", "mode=1,block_x=32,block_y=4,block_z=1,z_chunk=8",
          "mode=1,block_x=16,block_y=16,block_z=1,z_chunk=64"}) {
      expect_matches_reference({problem("stencil3d", 20, 37, 17, dtype), config});
    }
  }
}

TEST(Gemm, MatchesReferenceForThreadTilesAndPads) {
  for (const DataType dtype : {DataType::f32, DataType::f64, DataType::f16}) {
    for (const std::string config :
         {"bm=64,bn=64,bk=16,tm=4,tn=4,pad=0", "bm=64,bn=64,bk=16,tm=4,tn=4,pad=1", "bm=32,bn=64,bk=8,tm=2,tn=8,pad=0",
          "bm=128,bn=64,bk=8,tm=8,tn=2,pad=4", "bm=32,bn=32,bk=32,tm=1,tn=1,pad=1",
          // 96 threads: A's sweep steps 1 row + 32 columns of 64 (a carry
          // every other step) and ends after 21 or 22 elements per thread.
          "bm=32,bn=96,bk=64,tm=8,tn=4,pad=1"}) {
      expect_matches_reference({problem("gemm", 128, 192, 64, dtype), config});
    }
  }
}

TEST(Reference, FlagsAnUnwrittenOutput) {
  const ProblemSpec spec = problem("copy", 512, 0, 0, DataType::f32);
  const Config config = Config::parse("block=128,vector=1,ept=1,stride=1");
  Workload workload(spec, config);
  EXPECT_TRUE(std::isinf(max_relative_error(spec, config, workload))); // poisoned, never launched
  launch_family_kernel(spec, config, workload);
  EXPECT_TRUE(check_against_cpu_reference(spec, config, workload));
  workload.poison_outputs();
  EXPECT_FALSE(check_against_cpu_reference(spec, config, workload));
}

TEST(Reference, SampledCheckCoversTheLastPoint) {
  // A transpose whose last tile is ragged, checked on a 10-point sample: still exact.
  const ProblemSpec spec = problem("transpose", 33, 65, 0, DataType::f32);
  const Config config = Config::parse("smem=1,tile=32,block_x=32,block_y=8,pad=1");
  Workload workload(spec, config);
  launch_family_kernel(spec, config, workload);
  EXPECT_EQ(max_relative_error(spec, config, workload, 10), 0.0);
}

TEST(Workload, InputsAreRandomNonZeroAndOutputsPoisoned) {
  const ProblemSpec spec = problem("gemm", 64, 32, 16, DataType::f16);
  Workload workload(spec, Config::parse("bm=32,bn=32,bk=16,tm=2,tn=2,pad=0"), 2, 3);
  ASSERT_EQ(workload.array_elements(), (std::vector<std::int64_t>{64 * 16, 16 * 32, 64 * 32}));
  EXPECT_EQ(workload.bytes_per_set(), (64 * 16 + 16 * 32 + 64 * 32) * 2);
  const auto first_set = workload.inputs_on_host();
  for (const auto& input : first_set) {
    for (const double value : input) {
      ASSERT_NE(value, 0.0);
      ASSERT_GE(value, -1.0);
      ASSERT_LT(value, 1.0);
    }
  }
  EXPECT_NE(first_set[0], first_set[1]);
  for (const double value : workload.output_on_host()) ASSERT_TRUE(std::isnan(value));
  workload.select_set(1);
  EXPECT_NE(workload.inputs_on_host()[0], first_set[0]); // sets hold different data
  EXPECT_THROW(workload.select_set(2), InputError);
}

TEST(Launch, RejectsBadConfigsWithTheModelsError) {
  const ProblemSpec spec = problem("transpose", 64, 0, 0, DataType::f32);
  const Config bad = Config::parse("smem=1,tile=32,block_x=24,block_y=8,pad=0"); // 32 % 24 != 0
  Workload workload(spec, Config{});
  std::string model_message;
  try {
    build_pattern(spec, bad);
  } catch (const InputError& e) {
    model_message = e.what();
  }
  ASSERT_FALSE(model_message.empty());
  try {
    launch_family_kernel(spec, bad, workload);
    FAIL() << "launch accepted a config the model rejects";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), model_message);
  }
}

TEST(Launch, RejectsAWorkloadOfAnotherProblem) {
  const Config config = Config::parse("block=128,vector=1,ept=1,stride=1");
  Workload workload(problem("copy", 256, 0, 0, DataType::f32), config);
  EXPECT_THROW(launch_family_kernel(problem("copy", 512, 0, 0, DataType::f32), config, workload), InputError);
  EXPECT_THROW(launch_family_kernel(problem("copy", 256, 0, 0, DataType::f32),
                                    Config::parse("block=128,vector=1,ept=1,stride=2"), workload),
               InputError);
}

TEST(Timing, ReportsOrderedQuantilesAndUsefulBandwidth) {
  const ProblemSpec spec = problem("copy", 1 << 24, 0, 0, DataType::f32);
  const Config config = Config::parse("block=256,vector=4,ept=1,stride=1");
  TimingOptions options;
  options.repeats = 9;
  const Timing timing = time_kernel(spec, config, options);
  EXPECT_EQ(timing.repeats, 9);
  EXPECT_GT(timing.median_ms, 0.0);
  EXPECT_LE(timing.p25_ms, timing.median_ms);
  EXPECT_LE(timing.median_ms, timing.p75_ms);
  // 64 MiB read + 64 MiB written per launch.
  const double useful_bytes = 2.0 * 4.0 * (1 << 24);
  EXPECT_NEAR(timing.bandwidth_gb_per_s, useful_bytes / (timing.median_ms * 1e-3) / 1e9,
              1e-6 * timing.bandwidth_gb_per_s);
}

TEST(Timing, RotatesThroughThreeTimesL2WithAtMostEightSets) {
  // The H200's 60 MiB L2: 3x is 180 MiB. copy f32 moves 8 bytes per element per set.
  const Config config = Config::parse("block=256,vector=1,ept=1,stride=1");
  EXPECT_EQ(timing_input_sets(problem("copy", 1 << 20, 0, 0, DataType::f32), config), 8); // 8 MiB sets: 23, capped
  EXPECT_EQ(timing_input_sets(problem("copy", 1 << 26, 0, 0, DataType::f32), config), 1); // 512 MiB: one set
  int l2_bytes = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0), cudaSuccess);
  const std::int64_t set_bytes = std::int64_t{8} << 22; // n = 2^22: 32 MiB per set
  EXPECT_EQ(timing_input_sets(problem("copy", 1 << 22, 0, 0, DataType::f32), config),
            static_cast<int>((3 * std::int64_t{l2_bytes} + set_bytes - 1) / set_bytes));
}

TEST(Timing, CopyBandwidthIsPositiveAndRejectsNoBytes) {
  EXPECT_GT(measure_copy_bandwidth_gb_per_s(64 << 20), 0.0);
  EXPECT_THROW(measure_copy_bandwidth_gb_per_s(0), InputError);
}

} // namespace
} // namespace cachewise::kernels
