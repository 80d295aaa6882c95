#include "cachewise/frontend/compile.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

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

bool have_nvcc() {
  return std::filesystem::exists("/usr/local/cuda/bin/nvcc") || std::getenv("CACHEWISE_NVCC") != nullptr;
}

TEST(PtxasReport, ReadsARealLog) {
  // tests/frontend/data/spill.cu: nvcc -ptx -arch=sm_90, then ptxas -v --maxrregcount=16.
  const std::string log = read(kData / "ptxas_spill.log");
  EXPECT_EQ(parse_ptxas_resources(log, "_Z5spillPfPKfi"), (CompilerResources{24, 216, 208, 316, 0}));
  EXPECT_EQ(parse_ptxas_resources(log, "_Z5stackPfi"), (CompilerResources{22, 0, 0, 0, 0}));
  EXPECT_THROW(parse_ptxas_resources(log, "_Z5spill"), InputError); // a prefix is not the entry
}

TEST(PtxasReport, ReadsNvrtcStyleLines) {
  // NVRTC's log indents the properties line with "ptxas         ." (seen with NVRTC 13.0).
  const std::string log =
      "ptxas info    : Compiling entry function '_Z1kILi32EEvPfPKf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1kILi32EEvPfPKf\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, used 1 barriers, 4224 bytes smem\n";
  EXPECT_EQ(parse_ptxas_resources(log, "_Z1kILi32EEvPfPKf"), (CompilerResources{12, 0, 0, 0, 4224}));
}

TEST(FindEntry, MatchesDemangledNames) {
  const std::vector<std::string> entries = {"_Z15transpose_tiledILi32ELi8ELi1EEvPfPKfii",
                                            "_Z15transpose_tiledILi16ELi4ELi0EEvPfPKfii", "_Z5naivePfPKfii", "plain_c"};
  EXPECT_EQ(find_entry(entries, "transpose_tiled", {"16", "4", "0"}), entries[1]);
  EXPECT_EQ(find_entry(entries, "naive", {}), entries[2]);
  EXPECT_EQ(find_entry(entries, "plain_c", {}), entries[3]);
  try {
    find_entry(entries, "transpose", {});
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(
        error.what(),
        "entry 'transpose' not found (entries: transpose_tiled<32, 8, 1>, transpose_tiled<16, 4, 0>, naive, plain_c)");
  }
}

// Two kernels named scale: the name alone is ambiguous, listed with their parameters; a
// parameter list picks one, spaced or with `const T` as the user writes it.
TEST(FindEntry, OverloadsNeedASignature) {
  const std::vector<std::string> entries = {"_Z5scalePfPKf", "_Z5scalePdPKd"};
  try {
    find_entry(entries, "scale", {});
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(
        error.what(),
        "entry 'scale' is ambiguous: 2 kernels match (scale(float*, float const*), scale(double*, double const*)); "
        "name one with its parameters, e.g. --entry \"scale(float*, float const*)\"");
  }
  EXPECT_EQ(find_entry(entries, "scale", {}, "(double*, double const*)"), entries[1]);
  EXPECT_EQ(find_entry(entries, "scale", {}, "( double *, const double * )"), entries[1]);
  EXPECT_EQ(find_entry(entries, "scale", {}, "(float*,const float*)"), entries[0]);
  EXPECT_FALSE(is_entry_of(entries[0], "scale", {}, "(double*, const double*)"));
}

// Type and bool arguments: pair_sum<float, 256, true> and <double, 128, false>; tiled<unsigned
// int, 32u>, asked for as "unsigned" and "uint32_t". Listed as --entry takes them.
TEST(FindEntry, TypeAndBoolArguments) {
  const std::vector<std::string> entries = {"_Z8pair_sumIfLi256ELb1EEvPKT_PS0_", "_Z8pair_sumIdLi128ELb0EEvPKT_PS0_",
                                            "_Z5tiledIjLj32EEvPT_"};
  EXPECT_EQ(find_entry(entries, "pair_sum", {"float", "256", "true"}), entries[0]);
  EXPECT_EQ(find_entry(entries, "pair_sum", {"double", "128", "0"}), entries[1]);
  EXPECT_EQ(find_entry(entries, "tiled", {"unsigned", "32"}), entries[2]);
  EXPECT_EQ(find_entry(entries, "tiled", {"uint32_t", "32"}), entries[2]);
  EXPECT_TRUE(is_entry_of(entries[0], "pair_sum", {"float", "256", "true"}));
  EXPECT_FALSE(is_entry_of(entries[0], "pair_sum", {"double", "256", "true"}));
  try {
    find_entry(entries, "pair_sum", {"float", "128", "true"});
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(),
                 "entry 'pair_sum<float, 128, true>' not found (entries: pair_sum<float, 256, true>, "
                 "pair_sum<double, 128, false>, tiled<unsigned int, 32>)");
  }
}

// The name the model's builtin_kernel() gives an instantiation: no return type, scope or
// parameters; a plain function is its bare name.
TEST(EntryInstanceName, DropsReturnTypeScopeAndParameters) {
  EXPECT_EQ(
      entry_instance_name("_ZN9cachewise7kernels39_GLOBAL__N__564f33a2_7_copy_cu_f0ce098910copy_wordsIjEEvPKT_PS3_xxi"),
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
  // NVRTC cannot open <cstdio>. Its device side compiles, but (CUDA 13.0) NVRTC addresses the
  // tile through 64-bit registers where nvcc uses 32-bit shared addresses: the PTX differ, so
  // the file stays with nvcc.
  EXPECT_EQ(compiled.compiler, "nvcc");
  const std::vector<std::string> entries = entry_names(parse_ptx(compiled.ptx));
  const std::string entry = find_entry(entries, "transpose_tiled", {"16", "4", "0"});
  EXPECT_EQ(entry, "_Z15transpose_tiledILi16ELi4ELi0EEvPfPKfii");
  // float tile[16][16 + 0]: 1024 bytes of static shared memory.
  EXPECT_EQ(parse_ptxas_resources(compiled.ptxas_log, entry).static_shared_bytes, 1024);
}

TEST(Compiler, CompileErrorsGiveTheFirstErrorLineAndAreNeverCached) {
  if (!have_nvcc()) GTEST_SKIP() << "no NVRTC or nvcc on this machine";
  Compiler compiler(fresh_cache("broken"));
  const CompileRequest request{kData / "broken.cu", 90, {}, {}, {}};
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      compiler.compile(request);
      FAIL() << "no error";
    } catch (const InputError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("broken.cu(3): error: identifier \"undefined_name\" is undefined"), std::string::npos)
          << message;
      EXPECT_EQ(message.find('\n'), std::string::npos);
    }
  }
  EXPECT_EQ(compiler.compilations(), 2); // the failure was compiled again, not served from the cache
}

/// The PTX without its .loc and .file lines: what two files with one kernel on different lines share.
std::string without_source_lines(const std::string& ptx) {
  std::istringstream in(ptx);
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    if (line.find(".loc\t") == std::string::npos && line.find(".file\t") == std::string::npos) kept += line + "\n";
  }
  return kept;
}

TEST(Compiler, AHostCodeFileCompilesToItsKernelOnlyTwinsPtx) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc on this machine";
  const std::filesystem::path kernels = std::filesystem::path(CACHEWISE_SOURCE_DIR) / "benchmarks" / "kernels";
  Compiler compiler(fresh_cache("twins"));
  for (const std::string block_x : {"16", "64"}) {
    const std::vector<Define> defines = {{"BLOCK_X", block_x}, {"BLOCK_Y", "4"}};
    const CompiledKernel host = compiler.compile({kernels / "jacobi_with_host.cu", 90, defines, {}, {}});
    const CompiledKernel twin = compiler.compile({kernels / "jacobi_kernel_only.cu", 90, defines, {}, {}});
#if CACHEWISE_WITH_NVRTC
    EXPECT_EQ(host.compiler, "nvrtc, device side"); // the first through nvcc too, whose PTX agreed
    EXPECT_EQ(twin.compiler, "nvrtc");
#endif
    // The same kernel four lines further down: the same PTX but for its line numbers and file.
    EXPECT_EQ(without_source_lines(host.ptx), without_source_lines(twin.ptx));
    EXPECT_EQ(parse_ptxas_resources(host.ptxas_log, "_Z12jacobi_sweepPfPKfi"),
              parse_ptxas_resources(twin.ptxas_log, "_Z12jacobi_sweepPfPKfi"));
  }
  EXPECT_EQ(compiler.compilations(), 4);
}

#if CACHEWISE_WITH_NVRTC
TEST(Compiler, SpeculationCachesOnlyWhatNvccsCheckConfirms) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc on this machine";
  const std::filesystem::path kernels = std::filesystem::path(CACHEWISE_SOURCE_DIR) / "benchmarks" / "kernels";
  Compiler compiler(fresh_cache("speculation"));
  compiler.set_speculative(true);
  // A faithful device side (the twins above): given at once, cached once the check holds.
  std::vector<CompileRequest> jacobi;
  for (const std::string block_x : {"16", "64"})
    jacobi.push_back({kernels / "jacobi_with_host.cu", 90, {{"BLOCK_X", block_x}, {"BLOCK_Y", "4"}}, {}, {}});
  for (const CompileRequest& request : jacobi) EXPECT_EQ(compiler.compile(request).compiler, "nvrtc, device side");
  EXPECT_TRUE(compiler.confirm_speculation());
  for (const CompileRequest& request : jacobi) EXPECT_TRUE(compiler.compile(request).from_cache);
  // An unfaithful one (PTX unlike nvcc's): given, never cached, reported once; compiled again,
  // the file goes to nvcc.
  const CompileRequest transpose{kExamples / "transpose_template.cu", 90, {}, "c++17", {"transpose_tiled<16, 4, 0>"}};
  EXPECT_EQ(compiler.compile(transpose).compiler, "nvrtc, device side");
  EXPECT_FALSE(compiler.confirm_speculation());
  EXPECT_TRUE(compiler.confirm_speculation());
  const CompiledKernel again = compiler.compile(transpose);
  EXPECT_FALSE(again.from_cache);
  EXPECT_EQ(again.compiler, "nvcc");
  EXPECT_TRUE(compiler.confirm_speculation()); // a settled verdict speculates no more
  EXPECT_EQ(compiler.compilations(), 4);
}
#endif

TEST(Compiler, HostCodeErrorsAreNvccsFirstErrorLine) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc on this machine";
  const auto directory = fresh_cache("host-errors");
  std::filesystem::create_directories(directory);
  // The device side of the first compiles; its host code does not. The second's kernel does not.
  std::ofstream(directory / "host_error.cu")
      << "#include <cstdio>\n__global__ void store(float* out) { out[0] = 1.0f; }\n"
         "int main() { undefined_host_call(); }\n";
  std::ofstream(directory / "device_error.cu")
      << "#include <cstdio>\n__global__ void store(float* out) { out[0] = missing; }\n"
         "int main() { std::puts(\"x\"); }\n";
  Compiler compiler(directory / "cache");
  for (int attempt = 0; attempt < 2; ++attempt) {
    EXPECT_EQ(test_support::error_of([&] {
                compiler.compile({directory / "host_error.cu", 90, {}, {}, {}});
              }),
              (directory / "host_error.cu").string() + "(3): error: identifier \"undefined_host_call\" is undefined");
    EXPECT_EQ(test_support::error_of([&] {
                compiler.compile({directory / "device_error.cu", 90, {}, {}, {}});
              }),
              (directory / "device_error.cu").string() + "(2): error: identifier \"missing\" is undefined");
  }
  EXPECT_EQ(compiler.compilations(), 4); // failures are compiled again, never cached
}

// --- Hostile input: nothing the user wrote reaches a shell -----------------------------------

/// A file that must not exist after the compile: a shell that ran the payload would create it.
std::filesystem::path marker(const std::string& name) {
  const auto path =
      std::filesystem::temp_directory_path() / ("cachewise-pwned-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove(path);
  return path;
}

// transpose_template.cu holds host code, so it goes through nvcc, whose driver runs its steps
// through a shell: a define's value must reach the preprocessor as text, never that shell.
TEST(CompilerSecurity, DefineValuesNeverReachAShell) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc on this machine";
  Compiler compiler(fresh_cache("defines-shell"));
  const auto substitution = marker("substitution"), backtick = marker("backtick"), quote = marker("quote");
  CompileRequest request{kExamples / "transpose_template.cu", 90, {}, "c++17", {"transpose_tiled<16, 4, 0>"}};
  request.defines = {{"EXTRA", "$(touch " + substitution.string() + ")1"},
                     {"OTHER", "`touch " + backtick.string() + "`"},
                     {"QUOTED", "\"'; touch " + quote.string() + "; '\""}};
  // Unused macros: the file compiles. Its first candidate goes through nvcc whether or not
  // NVRTC then compiles its device side.
  compiler.compile(request);
  EXPECT_FALSE(std::filesystem::exists(substitution));
  EXPECT_FALSE(std::filesystem::exists(backtick));
  EXPECT_FALSE(std::filesystem::exists(quote));
}

TEST(CompilerSecurity, ACacheDirectoryNamedLikeACommandRunsNothing) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc on this machine";
  const auto payload = marker("cache-dir");
  const auto directory = fresh_cache("cache-name") / ("$(touch " + payload.string() + ")");
  Compiler compiler(directory);
  const CompileRequest request{kExamples / "transpose_template.cu", 90, {}, "c++17", {"transpose_tiled<16, 4, 0>"}};
  compiler.compile(request); // its first candidate goes through nvcc
  EXPECT_FALSE(std::filesystem::exists(payload));
  EXPECT_TRUE(compiler.compile(request).from_cache); // the odd name is still a working cache
}

TEST(CompilerSecurity, UnsafeDefinesOptionsAndPathsAreRefused) {
  using test_support::error_of;
  CompileRequest request{kData / "device_only.cu", 90, {}, {}, {}};
  request.defines = {{"A", "1\n#include \"/etc/passwd\""}};
  EXPECT_EQ(error_of([&] { check_compile_request(request); }), "--define A: a macro value must be one line");
  request.defines = {{"A", "1 \\"}};
  EXPECT_EQ(error_of([&] { check_compile_request(request); }), "--define A: a macro value must not end in a backslash");
  request.defines = {{"E; int injected = 0; //", "1"}};
  EXPECT_EQ(error_of([&] { check_compile_request(request); }),
            "--define 'E; int injected = 0; //': a macro name must be an identifier");
  request.defines = {};
  request.language_standard = "c++17 -Xcompiler=$(id)";
  EXPECT_NE(error_of([&] { check_compile_request(request); }).find("--std 'c++17 -Xcompiler=$(id)': expected one of"),
            std::string::npos);
  request.language_standard = {};
  request.compiler_options = {"-Xcompiler=$(touch x)"};
  EXPECT_NE(error_of([&] { check_compile_request(request); }).find("not an option cachewise passes on"),
            std::string::npos);
  request.compiler_options = {"-maxrregcount=$(x)"}; // a known option with a value a shell reads
  EXPECT_NE(error_of([&] { check_compile_request(request); }).find("not an option cachewise passes on"),
            std::string::npos);
  request.compiler_options = {"-maxrregcount=64", "--use_fast_math"};
  EXPECT_EQ(error_of([&] { check_compile_request(request); }), "no error");
  request.source = "/tmp/a\"b.cu";
  EXPECT_EQ(error_of([&] { check_compile_request(request); }),
            "/tmp/a\"b.cu: a source path must not hold a double quote or a line break");
}

// --- The cache: per user, atomic, checked on read ---------------------------------------------

std::filesystem::path only_entry(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> entries;
  for (const auto& file : std::filesystem::directory_iterator(directory)) entries.push_back(file.path());
  EXPECT_EQ(entries.size(), 1u);
  return entries.empty() ? std::filesystem::path() : entries.front();
}

TEST(CompilerCache, AnAlteredEntryIsAMissAndIsMadeAgain) {
  if (!have_nvcc()) GTEST_SKIP() << "no NVRTC or nvcc on this machine";
  const auto directory = fresh_cache("altered");
  Compiler compiler(directory);
  const CompileRequest request{kData / "device_only.cu", 90, {{"SCALE", "3.0f"}}, "c++17", {}};
  const std::string ptx = compiler.compile(request).ptx;
  const auto entry = only_entry(directory);
  std::string text = read(entry);
  const std::size_t at = text.find("mul.f32");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "add.f32"); // a planted edit that changes the prediction
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << text;
  const CompiledKernel again = compiler.compile(request);
  EXPECT_FALSE(again.from_cache);
  EXPECT_EQ(again.ptx, ptx);
  EXPECT_EQ(compiler.compilations(), 2);
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << text.substr(0, text.size() / 2); // truncated
  EXPECT_FALSE(compiler.compile(request).from_cache);
  EXPECT_TRUE(compiler.compile(request).from_cache);
  EXPECT_EQ(compiler.compilations(), 3);
}

TEST(CompilerCache, AnUnusableDirectoryCompilesWithoutACache) {
  if (!have_nvcc()) GTEST_SKIP() << "no NVRTC or nvcc on this machine";
  const auto parent = fresh_cache("unusable");
  std::filesystem::create_directories(parent);
  std::ofstream(parent / "a-file") << "not a directory";
  std::filesystem::create_directories(parent / "shared");
  std::filesystem::permissions(parent / "shared", std::filesystem::perms::all); // 0777: others could plant entries
  for (const auto& directory : {parent / "a-file", parent / "shared"}) {
    Compiler compiler(directory);
    const CompileRequest request{kData / "device_only.cu", 90, {}, "c++17", {}};
    EXPECT_FALSE(compiler.compile(request).from_cache);
    EXPECT_FALSE(compiler.compile(request).from_cache) << directory;
    EXPECT_EQ(compiler.compilations(), 2);
  }
  EXPECT_TRUE(std::filesystem::is_empty(parent / "shared"));
}

TEST(CompilerCache, NoSharedTemporaryFallback) {
  const char* saved_home = std::getenv("HOME");
  const std::string home = saved_home ? saved_home : "";
  ::unsetenv("HOME");
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("CACHEWISE_CACHE_DIR");
  const std::filesystem::path directory = Compiler::default_cache_directory();
  if (!home.empty()) ::setenv("HOME", home.c_str(), 1);
  // The account's home from the password database, or no cache at all; never the shared /tmp.
  EXPECT_EQ(directory.string().rfind(std::filesystem::temp_directory_path().string(), 0), std::string::npos)
      << directory;
  if (!directory.empty()) {
    EXPECT_EQ(directory.filename(), "cachewise");
  }
}

// --- Limits: what the compiler is given to read, and how long it may run ----------------------

TEST(CompilerLimits, IncludesOfDevicesAndPipesAreRefusedUnread) {
  const auto directory = fresh_cache("special-includes");
  std::filesystem::create_directories(directory);
  ASSERT_EQ(::mkfifo((directory / "pipe").c_str(), 0600), 0);
  Compiler compiler(directory / "cache");
  std::ofstream(directory / "zero.cu") << "\n#include \"/dev/zero\"\n";
  std::ofstream(directory / "fifo.cu") << "#  include \"pipe\"\n";
  std::ofstream(directory / "long.cu") << "#include \"" << std::string(40000, 'a') << "\"\n";
  using test_support::error_of;
  EXPECT_EQ(error_of([&] {
              compiler.compile({directory / "zero.cu", 90, {}, {}, {}});
            }),
            (directory / "zero.cu").string() + ":2: #include /dev/zero: not a regular file");
  EXPECT_EQ(
      error_of([&] {
        compiler.compile({directory / "fifo.cu", 90, {}, {}, {}});
      }),
      (directory / "fifo.cu").string() + ":1: #include " + (directory / "pipe").string() + ": not a regular file");
  EXPECT_EQ(error_of([&] {
              compiler.compile({directory / "long.cu", 90, {}, {}, {}});
            }),
            (directory / "long.cu").string() + ":1: #include names a path longer than 4096 characters");
  EXPECT_EQ(compiler.compilations(), 0);
}

TEST(CompilerLimits, ACompilerPastItsTimeoutIsKilledAndNotCached) {
  // A stand-in nvcc that never finishes: the real one may finish within any limit on an idle
  // machine. A file with host code goes to nvcc whether or not NVRTC is present.
  const auto directory = fresh_cache("timeout");
  std::filesystem::create_directories(directory);
  const std::filesystem::path slow_nvcc = directory / "nvcc";
  std::ofstream(slow_nvcc) << "#!/bin/sh\nexec sleep 60\n";
  std::filesystem::permissions(slow_nvcc, std::filesystem::perms::owner_all);
  std::ofstream(directory / "host.cu")
      << "#include <cstdio>\n__global__ void store(float* out) { out[0] = 1.0f; }\nint main() { std::puts(\"x\"); }\n";
  ::setenv("CACHEWISE_NVCC", slow_nvcc.c_str(), 1);
  ::setenv("CACHEWISE_COMPILE_TIMEOUT_S", "1", 1);
  Compiler compiler(directory / "cache");
  ::unsetenv("CACHEWISE_COMPILE_TIMEOUT_S");
  ::unsetenv("CACHEWISE_NVCC");
  const CompileRequest request{directory / "host.cu", 90, {}, {}, {}};
  for (int attempt = 0; attempt < 2; ++attempt) {
    EXPECT_EQ(test_support::error_of([&] { compiler.compile(request); }),
              "nvcc did not finish within 1 s (CACHEWISE_COMPILE_TIMEOUT_S raises the limit)");
  }
  EXPECT_EQ(compiler.compilations(), 2);
}

} // namespace
} // namespace cachewise::frontend
