// The built-in families' compiled kernels: which instantiation a config runs (derived by hand
// from the launchers in kernels/src/*.cu), the embedded facts table (model/data, whose values
// the kernel_facts_current test holds to the compiled code) and how it is read.
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "cachewise/model/families/builtin_kernels.hpp"
#include "cachewise/model/families/families.hpp"
#include "cachewise/model/families/family_kernels.hpp"

namespace cachewise {
namespace {

std::string key_of(const ProblemSpec& problem, const char* config) {
  return builtin_kernel(problem, Config::parse(config)).key();
}

TEST(BuiltinKernels, TransposeRunsItsCompiledShapeOrTheBoundsCheckedWalk) {
  // tile 32 over 32x2: 1 column x 16 rows per thread, batch min(16, 16).
  EXPECT_EQ(key_of({"transpose", 1024}, "smem=1,tile=32,block_x=32,block_y=2,pad=1"),
            "transpose_shared<unsigned int, 1, 16>");
  // tile 64 over 16x16, f64: 4 x 4 = 16 elements, 8-byte words.
  EXPECT_EQ(key_of({"transpose", 1024, 0, 0, DataType::f64}, "smem=0,tile=64,block_x=16,block_y=16"),
            "transpose_direct<uint2, 4, 16>");
  // tile 32 over 32x8: 1 x 4, batch 4.
  EXPECT_EQ(key_of({"transpose", 1024}, "smem=0,tile=32,block_x=32,block_y=8"), "transpose_direct<unsigned int, 1, 4>");
  // 3 columns (not a power of two) and 16 columns (more than 8): the walk, f16 as 2-byte words.
  EXPECT_EQ(key_of({"transpose", 1536, 0, 0, DataType::f16}, "smem=0,tile=48,block_x=16,block_y=6"),
            "transpose_direct<unsigned short, 0, 1>");
  EXPECT_EQ(key_of({"transpose", 1024}, "smem=1,tile=64,block_x=4,block_y=64,pad=0"),
            "transpose_shared<unsigned int, 0, 1>");
}

TEST(BuiltinKernels, CopyRunsTheWordOfItsVector) {
  EXPECT_EQ(key_of({"copy", 1 << 20, 0, 0, DataType::f16}, "block=128,vector=8,ept=1"), "copy_words<uint4>");
  EXPECT_EQ(key_of({"copy", 1 << 20, 0, 0, DataType::f64}, "block=128,vector=1,ept=1"), "copy_words<uint2>");
  EXPECT_EQ(key_of({"copy", 1 << 20}, "block=128,vector=1,ept=1,stride=2"), "copy_words<unsigned int>");
  EXPECT_EQ(key_of({"copy", 1 << 20, 0, 0, DataType::f16}, "block=128,vector=1,ept=4"), "copy_words<unsigned short>");
}

TEST(BuiltinKernels, StencilsRunTheirCompiledRowsPlanesAndVectors) {
  EXPECT_EQ(key_of({"stencil2d", 1024}, "radius=1,smem=0,block_x=32,block_y=4,ept_y=4,vector=4"),
            "stencil2d_vector<float, 1, 4, 4>");
  EXPECT_EQ(key_of({"stencil2d", 1024}, "radius=1,smem=0,block_x=32,block_y=4,ept_y=3,vector=4"),
            "stencil2d_vector<float, 1, 0, 4>");
  EXPECT_EQ(key_of({"stencil2d", 1024, 0, 0, DataType::f64}, "radius=2,smem=0,block_x=32,block_y=4,ept_y=4"),
            "stencil2d_global<double, 0, 0>");
  EXPECT_EQ(key_of({"stencil2d", 1024, 0, 0, DataType::f16}, "radius=3,smem=1,block_x=32,block_y=4,ept_y=4"),
            "stencil2d_shared<__half>");
  EXPECT_EQ(key_of({"stencil3d", 64, 0, 0, DataType::f16}, "mode=0,block_x=32,block_y=4,block_z=2"),
            "stencil3d_blocked<__half>");
  EXPECT_EQ(key_of({"stencil3d", 64}, "mode=1,block_x=32,block_y=4,z_chunk=16"), "stencil3d_streaming<float, 8>");
  EXPECT_EQ(key_of({"stencil3d", 64}, "mode=1,block_x=32,block_y=4,z_chunk=12"), "stencil3d_streaming<float, 0>");
  // One vector kernel, two compiled paths by z_chunk's parity.
  EXPECT_EQ(key_of({"stencil3d", 64}, "mode=1,block_x=32,block_y=4,z_chunk=5,vector=2"),
            "stencil3d_streaming_vector<float, 2> [plane by plane]");
  EXPECT_EQ(key_of({"stencil3d", 64}, "mode=1,block_x=32,block_y=4,z_chunk=8,vector=2"),
            "stencil3d_streaming_vector<float, 2> [batched]");
}

TEST(BuiltinKernels, GemmRunsItsThreadTileAndNoOther) {
  EXPECT_EQ(key_of({"gemm", 256, 0, 0, DataType::f64}, "bm=64,bn=32,bk=8,tm=8,tn=2,pad=0"), "gemm_tiled<double, 8, 2>");
  try {
    key_of({"gemm", 256}, "bm=64,bn=64,bk=8,tm=16,tn=2,pad=0");
    FAIL() << "accepted tm=16";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "gemm: tm=16 has no compiled kernel (compiled: 1, 2, 4, 8)");
  }
}

// Every kernel the advisor's value lists reach (tm, tn, vector, z_chunk, ept_y, dtypes) has
// facts: a config never falls back to a guess.
TEST(BuiltinKernels, EveryReachableKernelHasFacts) {
  for (const DataType dtype : {DataType::f32, DataType::f64, DataType::f16}) {
    for (const int tm : {1, 2, 4, 8}) {
      for (const int tn : {1, 2, 4, 8}) {
        const std::string config = "bm=64,bn=64,bk=8,pad=0,tm=" + std::to_string(tm) + ",tn=" + std::to_string(tn);
        EXPECT_NO_THROW(builtin_kernel_facts({"gemm", 256, 0, 0, dtype}, Config::parse(config))) << config;
      }
    }
    for (int vector = 1; vector * element_bytes(dtype) <= 16 && vector <= 8; vector *= 2) {
      for (const int rows : {1, 2, 3, 4, 8}) {
        const std::string config =
            "radius=1,smem=0,block_x=32,block_y=4,ept_y=" + std::to_string(rows) + ",vector=" + std::to_string(vector);
        EXPECT_NO_THROW(builtin_kernel_facts({"stencil2d", 1024, 0, 0, dtype}, Config::parse(config))) << config;
      }
      for (const int z_chunk : {1, 8, 16, 32, 64}) {
        const std::string config =
            "mode=1,block_x=32,block_y=4,z_chunk=" + std::to_string(z_chunk) + ",vector=" + std::to_string(vector);
        EXPECT_NO_THROW(builtin_kernel_facts({"stencil3d", 256, 0, 0, dtype}, Config::parse(config))) << config;
      }
    }
  }
}

// The vector walk is held to stencil3d_vector_walk_registers by __maxnreg__: ptxas's count is
// at most that (f32 vector 2: 32, f16 vector 8: 56).
TEST(BuiltinKernels, MaxnregHoldsTheVectorWalksRegisters) {
  int walks = 0;
  for (const CompiledKernelFacts& facts : builtin_kernel_facts_table()) {
    if (facts.key.rfind("stencil3d_streaming_vector<", 0) != 0) continue;
    const int bytes = facts.key.find("double") != std::string::npos   ? 8
                      : facts.key.find("__half") != std::string::npos ? 2
                                                                      : 4;
    const int vector = facts.key[facts.key.find(", ") + 2] - '0';
    EXPECT_LE(facts.registers_per_thread, stencil3d_vector_walk_registers(bytes, vector)) << facts.key;
    ++walks;
  }
  EXPECT_EQ(walks, 12); // f32 vector 2, 4; f64 2; f16 2, 4, 8; each batched and plane by plane
}

// The family patterns model neither local memory nor static shared memory: a kernel that
// started to spill or declare __shared__ arrays would need them (the table is regenerated from
// ptxas, so this fails when it does).
TEST(BuiltinKernels, NoBuiltinKernelSpillsOrDeclaresStaticShared) {
  ASSERT_EQ(builtin_kernel_facts_table().size(), 220u); // 214 instantiations, 6 with a second path
  for (const CompiledKernelFacts& facts : builtin_kernel_facts_table()) {
    EXPECT_EQ(facts.spill_store_bytes + facts.spill_load_bytes + facts.stack_frame_bytes, 0) << facts.key;
    EXPECT_EQ(facts.static_shared_bytes, 0) << facts.key;
  }
}

TEST(BuiltinKernels, PatternsCarryTheirKernelsFacts) {
  const ProblemSpec problem{"gemm", 256, 0, 0, DataType::f64};
  const Config config = Config::parse("bm=64,bn=64,bk=16,tm=4,tn=4,pad=1");
  const CompiledKernelFacts& facts = builtin_kernel_facts(problem, config);
  EXPECT_EQ(facts.key, "gemm_tiled<double, 4, 4>");
  const KernelPattern pattern = build_pattern(problem, config);
  EXPECT_EQ(pattern.registers_per_thread, facts.registers_per_thread);
  EXPECT_EQ(pattern.loads_in_flight, facts.loads_per_round);
  // Before the facts: KernelPattern's defaults, the same launch and accesses.
  const KernelPattern bare = build_pattern_before_kernel_facts(problem, config);
  EXPECT_EQ(bare.registers_per_thread, KernelPattern{}.registers_per_thread);
  EXPECT_EQ(bare.grid.count(), pattern.grid.count());
  EXPECT_EQ(bare.phases.size(), pattern.phases.size());
  EXPECT_EQ(builtin_kernel_facts_provenance().architecture, "sm_90");
}

// gemm_tiled<float, 4, 2>'s PTX unrolls kk by 4 and loads As row 0 of 4 kk as one
// ld.shared.v4.f32 (16-byte aligned: 4 ty rows of any stride, kk a multiple of 4), row 2 as
// two .v2 (8-byte aligned), rows 1 and 3 and Bs one element at a time: 19 loads a group.
TEST(BuiltinKernels, GemmInnerProductLoadsAreTheCompiledOnes) {
  const ProblemSpec problem{"gemm", 256};
  const Config config = Config::parse("bm=64,bn=32,bk=16,tm=4,tn=2,pad=0");
  const CompiledKernelFacts& facts = builtin_kernel_facts(problem, config);
  EXPECT_EQ(facts.kk_per_group, 4);
  const KernelPattern pattern = build_pattern(problem, config);
  const Phase& inner = pattern.phases.at(1);
  ASSERT_EQ(inner.loops.size(), 1u);
  EXPECT_EQ(inner.loops[0].step, 4);
  ASSERT_EQ(inner.accesses.size(), 19u);
  std::vector<int> as_widths(4, 0); // elements As row i loads per group
  for (const Access& access : inner.accesses) {
    if (access.array == "Bs") EXPECT_EQ(access.vector_elements, 1);
    if (access.array == "As")
      as_widths.at(static_cast<std::size_t>(access.index.at(0).constant)) += access.vector_elements;
  }
  EXPECT_EQ(as_widths, (std::vector<int>{4, 4, 4, 4}));
  const auto widest =
      std::max_element(inner.accesses.begin(), inner.accesses.end(),
                       [](const Access& a, const Access& b) { return a.vector_elements < b.vector_elements; });
  EXPECT_EQ(widest->vector_elements, 4);
  EXPECT_EQ(widest->index.at(0).constant, 0);
}

void expect_bad_facts(const std::string& text, const std::string& message) {
  try {
    parse_kernel_facts(text);
    FAIL() << "accepted " << text;
  } catch (const InputError& error) {
    EXPECT_EQ(error.what(), message);
  }
}

TEST(BuiltinKernels, MalformedFactsFilesAreNamed) {
  const std::string head =
      R"({"schema": "cachewise kernel facts v1", "architecture": "sm_90", "compiler": "c", "command": "x",
                               "sources_fnv1a64": "0", "sass_source": "", "kernels": )";
  const std::string entry =
      R"({"kernel": "k<int>", "registers_per_thread": 40, "spill_store_bytes": 0, "spill_load_bytes": 0,
                                "stack_frame_bytes": 0, "static_shared_bytes": 0, "loads_per_round": 4, "stores_per_run": 4,
                                "sass_loads_per_round": 0, "measured_with": "copy"})";
  EXPECT_EQ(parse_kernel_facts(head + "[" + entry + "]}").at(0).registers_per_thread, 40);
  expect_bad_facts(head + "[" + entry + ", " + entry + "]}", "kernel_facts.kernels: kernel 'k<int>' listed twice");
  expect_bad_facts(R"({"schema": "v0"})", "kernel_facts.schema: expected \"cachewise kernel facts v1\"");
  expect_bad_facts(head + "{}}", "kernel_facts.kernels: expected an array, got an object");
  std::string no_registers = entry;
  no_registers.replace(no_registers.find("40"), 2, "0");
  expect_bad_facts(head + "[" + no_registers + "]}",
                   "kernel_facts.kernels[0].registers_per_thread: expected an integer in [1, 255], got 0");
  const std::string gemm_entry = entry.substr(0, entry.size() - 1) + R"(, "kk_per_group": 4, "fragment_loads": )";
  const std::vector<CompiledKernelFacts> gemm =
      parse_kernel_facts(head + "[" + gemm_entry + R"(["As[0][kk+0] x4", "Bs[kk+3][1] x1"]}]})");
  ASSERT_EQ(gemm.at(0).fragment_loads.size(), 2u);
  EXPECT_EQ(gemm.at(0).fragment_loads[1], (FragmentLoad{true, 1, 3, 1}));
  expect_bad_facts(head + "[" + gemm_entry + R"(["As[0][kk+2] x4"]}]})",
                   "kernel_facts.kernels[0].fragment_loads[0]: reaches past the group's kk_per_group kk");
  expect_bad_facts(
      head + "[" + gemm_entry + R"(["Bs[kk+0][0] x2"]}]})",
      "kernel_facts.kernels[0].fragment_loads[0]: expected \"As[i][kk+o] xN\" or \"Bs[kk+o][j] x1\" (N 1, 2, "
      "4 or 8), got \"Bs[kk+0][0] x2\"");
  try {
    parse_kernel_facts("{");
    FAIL() << "accepted malformed JSON";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("kernel facts: malformed JSON", 0), 0u) << error.what();
  }
}

} // namespace
} // namespace cachewise
