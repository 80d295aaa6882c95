#include "cachewise/frontend/compile.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "frontend_test_support.hpp"

#include "cachewise/frontend/ptx.hpp"
#include "cachewise/model.hpp"

namespace cachewise::frontend {
namespace {

using test_support::fresh_cache;

const std::filesystem::path kData = std::filesystem::path(CACHEWISE_FRONTEND_TEST_DIR) / "data";
const std::filesystem::path kExamples = std::filesystem::path(CACHEWISE_SOURCE_DIR) / "examples" / "kernels";

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

bool have_nvcc() { return std::filesystem::exists("/usr/local/cuda/bin/nvcc") || std::getenv("CACHEWISE_NVCC") != nullptr; }

TEST(PtxasReport, ReadsARealLog) {
  // tests/frontend/data/spill.cu: nvcc -ptx -arch=sm_90, then ptxas -v --maxrregcount=16.
  const std::string log = read(kData / "ptxas_spill.log");
  EXPECT_EQ(parse_ptxas_resources(log, "_Z5spillPfPKfi"), (CompilerResources{24, 216, 208, 316, 0}));
  EXPECT_EQ(parse_ptxas_resources(log, "_Z5stackPfi"), (CompilerResources{22, 0, 0, 0, 0}));
  EXPECT_THROW(parse_ptxas_resources(log, "_Z5spill"), InputError); // a prefix is not the entry
}

TEST(PtxasReport, ReadsNvrtcStyleLines) {
  // NVRTC's log indents the properties line with "ptxas         ." (seen with NVRTC 13.0).
  const std::string log = "ptxas info    : Compiling entry function '_Z1kILi32EEvPfPKf' for 'sm_90'\n"
                          "ptxas info    : Function properties for _Z1kILi32EEvPfPKf\n"
                          "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                          "ptxas info    : Used 12 registers, used 1 barriers, 4224 bytes smem\n";
  EXPECT_EQ(parse_ptxas_resources(log, "_Z1kILi32EEvPfPKf"), (CompilerResources{12, 0, 0, 0, 4224}));
}

TEST(FindEntry, MatchesDemangledNames) {
  const std::vector<std::string> entries = {"_Z15transpose_tiledILi32ELi8ELi1EEvPfPKfii", "_Z15transpose_tiledILi16ELi4ELi0EEvPfPKfii",
                                            "_Z5naivePfPKfii", "plain_c"};
  EXPECT_EQ(find_entry(entries, "transpose_tiled", {16, 4, 0}), entries[1]);
  EXPECT_EQ(find_entry(entries, "naive", {}), entries[2]);
  EXPECT_EQ(find_entry(entries, "plain_c", {}), entries[3]);
  try {
    find_entry(entries, "transpose", {});
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "entry 'transpose' not found (entries: transpose_tiled<32,8,1>, transpose_tiled<16,4,0>, naive, plain_c)");
  }
}

// The name the model's builtin_kernel() gives an instantiation: no return type, scope or
// parameters; a plain function is its bare name.
TEST(EntryInstanceName, DropsReturnTypeScopeAndParameters) {
  EXPECT_EQ(entry_instance_name("_ZN9cachewise7kernels39_GLOBAL__N__564f33a2_7_copy_cu_f0ce098910copy_wordsIjEEvPKT_PS3_xxi"),
            "copy_words<unsigned int>");
  EXPECT_EQ(entry_instance_name("_Z16stencil2d_globalI6__halfLi1ELi1EEvv"), "stencil2d_global<__half, 1, 1>");
  EXPECT_EQ(entry_instance_name("_Z6kernelPfi"), "kernel");
}

TEST(FirstErrorLine, PicksTheErrorNotTheBanner) {
  EXPECT_EQ(first_error_line("warning: x\nk.cu(3): error: identifier \"y\" is undefined\n  y;\n"),
            "k.cu(3): error: identifier \"y\" is undefined");
  EXPECT_EQ(first_error_line("\n\nsomething odd\n"), "something odd");
}

TEST(Compiler, DeviceOnlySourceCompilesAndCaches) {
  if (!have_nvcc()) GTEST_SKIP() << "no NVRTC or nvcc on this machine";
  Compiler compiler(fresh_cache("device-only"));
  CompileRequest request{kData / "device_only.cu", 90, {{"SCALE", "3.0f"}}, "c++17", {}};
  const CompiledKernel first = compiler.compile(request);
#if CACHEWISE_WITH_NVRTC
  EXPECT_EQ(first.compiler, "nvrtc");
#endif
  EXPECT_FALSE(first.from_cache);
  EXPECT_EQ(compiler.compilations(), 1);
  const PtxModule module = parse_ptx(first.ptx);
  EXPECT_EQ(entry_names(module), std::vector<std::string>{"_Z5scalePfPKfi"});
  EXPECT_GT(parse_ptxas_resources(first.ptxas_log, "_Z5scalePfPKfi").registers_per_thread, 0);
  EXPECT_NE(first.ptx.find(".loc"), std::string::npos); // -lineinfo

  // Unchanged: nothing compiles, even through a second Compiler on the same directory.
  const CompiledKernel again = compiler.compile(request);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.ptx, first.ptx);
  EXPECT_EQ(compiler.compilations(), 1);
  // Another define is another build.
  request.defines = {{"SCALE", "4.0f"}};
  EXPECT_FALSE(compiler.compile(request).from_cache);
  EXPECT_EQ(compiler.compilations(), 2);
}

TEST(Compiler, AnEditedIncludeInvalidatesTheCache) {
  if (!have_nvcc()) GTEST_SKIP() << "no NVRTC or nvcc on this machine";
  const auto directory = fresh_cache("include-edit");
  std::filesystem::create_directories(directory / "src");
  std::filesystem::copy_file(kData / "device_only.cu", directory / "src" / "device_only.cu");
  std::filesystem::copy_file(kData / "device_only_helper.cuh", directory / "src" / "device_only_helper.cuh");
  Compiler compiler(directory / "cache");
  const CompileRequest request{directory / "src" / "device_only.cu", 90, {}, {}, {}};
  compiler.compile(request);
  EXPECT_TRUE(compiler.compile(request).from_cache);
  std::ofstream(directory / "src" / "device_only_helper.cuh", std::ios::app) << "// edited\n";
  EXPECT_FALSE(compiler.compile(request).from_cache);
  EXPECT_EQ(compiler.compilations(), 2);
}

TEST(Compiler, HostCodeFallsBackToNvccAndTemplatesAreInstantiated) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc on this machine";
  Compiler compiler(fresh_cache("host-code"));
  // main() instantiates only <32, 8, 1>; the request asks for <16, 4, 0>.
  const CompileRequest request{kExamples / "transpose_template.cu", 90, {}, "c++17", {"transpose_tiled<16, 4, 0>"}};
  const CompiledKernel compiled = compiler.compile(request);
  EXPECT_EQ(compiled.compiler, "nvcc"); // NVRTC cannot open <cstdio>
  const std::vector<std::string> entries = entry_names(parse_ptx(compiled.ptx));
  const std::string entry = find_entry(entries, "transpose_tiled", {16, 4, 0});
  EXPECT_EQ(entry, "_Z15transpose_tiledILi16ELi4ELi0EEvPfPKfii");
  // float tile[16][16 + 0]: 1024 bytes of static shared memory.
  EXPECT_EQ(parse_ptxas_resources(compiled.ptxas_log, entry).static_shared_bytes, 1024);
}

TEST(Compiler, CompileErrorsGiveTheFirstErrorLine) {
  if (!have_nvcc()) GTEST_SKIP() << "no NVRTC or nvcc on this machine";
  Compiler compiler(fresh_cache("broken"));
  const CompileRequest request{kData / "broken.cu", 90, {}, {}, {}};
  for (int attempt = 0; attempt < 2; ++attempt) { // the second answer comes from the cache
    try {
      compiler.compile(request);
      FAIL() << "no error";
    } catch (const InputError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("broken.cu(3): error: identifier \"undefined_name\" is undefined"), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos);
    }
  }
  EXPECT_EQ(compiler.compilations(), 1);
}

} // namespace
} // namespace cachewise::frontend
