#include "cachewise/frontend/kernel_advisor.hpp"

#include <unistd.h>

#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frontend_test_support.hpp"

namespace cachewise::frontend {
namespace {

using test_support::fresh_cache;

const std::filesystem::path kData = std::filesystem::path(CACHEWISE_FRONTEND_TEST_DIR) / "data";
const std::filesystem::path kExamples = std::filesystem::path(CACHEWISE_SOURCE_DIR) / "examples" / "kernels";

bool have_compiler() {
#if CACHEWISE_WITH_NVRTC
  return true;
#else
  return std::filesystem::exists("/usr/local/cuda/bin/nvcc") || std::getenv("CACHEWISE_NVCC") != nullptr;
#endif
}

const DeviceProfile& example_profile() {
  static const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  return profile;
}

KernelSpec transpose(const std::filesystem::path& source, const std::string& entry) {
  KernelSpec spec;
  spec.source = source;
  spec.entry = entry;
  spec.grid = "width / 32, height / 32";
  spec.block = "32, BLOCK_ROWS";
  spec.buffers = {{"odata", "width * height * 4"}, {"idata", "width * height * 4"}};
  spec.args = {{"width", 1024}, {"height", 1024}};
  return spec;
}

const advisor::Candidate& with_pad(const advisor::Suggestion& suggestion, std::int64_t pad) {
  for (const advisor::Candidate& candidate : suggestion.ranked) {
    if (candidate.config.get("PAD") == pad) return candidate;
  }
  throw std::logic_error("no candidate with that pad");
}

// Tile 32 x (32 + PAD) floats, BLOCK_ROWS = 8. Reading tile[threadIdx.x][threadIdx.y + j]: lane
// l reads word l * (32 + PAD) + c, bank (l * (32 + PAD) + c) % 32: with PAD=0 every lane hits
// bank c (32-way conflict), with PAD=1 bank (l + c) % 32 (all distinct, 1-way). Writing
// tile[threadIdx.y + j][threadIdx.x] walks one row: 1-way for both. Global rows are 32
// consecutive floats = 128 B = 4 sectors per request, loads and stores.
TEST(SuggestKernel, PaddingRemovesTheSharedLoadConflict) {
  if (!have_compiler()) GTEST_SKIP() << "no NVRTC or nvcc";
  KernelSpec spec = transpose(kExamples / "transpose.cu", "transpose_tiled");
  spec.parameters = {{"TILE_DIM", {32}}, {"BLOCK_ROWS", {8}}, {"PAD", {0, 1}}};
  Compiler compiler(fresh_cache("pad"));
  const KernelSuggestion result = suggest_kernel(spec, example_profile(), compiler);
  const advisor::Suggestion& suggestion = result.suggestion;
  ASSERT_EQ(suggestion.feasible, 2);
  EXPECT_EQ(suggestion.ranked.front().config.get("PAD"), 1);
  const advisor::CounterSummary padded = advisor::summarize(with_pad(suggestion, 1).prediction);
  const advisor::CounterSummary unpadded = advisor::summarize(with_pad(suggestion, 0).prediction);
  EXPECT_DOUBLE_EQ(padded.shared_load_ways.value(), 1.0);
  EXPECT_DOUBLE_EQ(unpadded.shared_load_ways.value(), 32.0);
  EXPECT_DOUBLE_EQ(padded.shared_store_ways.value(), 1.0);
  EXPECT_DOUBLE_EQ(unpadded.shared_store_ways.value(), 1.0);
  EXPECT_DOUBLE_EQ(padded.load_sectors_per_request.value(), 4.0);
  EXPECT_DOUBLE_EQ(padded.store_sectors_per_request.value(), 4.0);
  // ptxas: 32 * 33 * 4 and 32 * 32 * 4 bytes of static shared memory, no spills.
  EXPECT_EQ(with_pad(suggestion, 1).compiled->static_shared_bytes, 4224);
  EXPECT_EQ(with_pad(suggestion, 0).compiled->static_shared_bytes, 4096);
  EXPECT_EQ(with_pad(suggestion, 1).shared_bytes_per_block, 4224);
  EXPECT_EQ(with_pad(suggestion, 0).compiled->spill_store_bytes, 0);
  EXPECT_NE(suggestion.ranked.front().reason.find("removes the 32-way bank conflict of shared loads"),
            std::string::npos)
      << suggestion.ranked.front().reason;
  EXPECT_EQ(result.builds, 2);
  EXPECT_EQ(result.compilations, 2);

  // The same run again compiles nothing.
  const KernelSuggestion again = suggest_kernel(spec, example_profile(), compiler);
  EXPECT_EQ(again.builds, 2);
  EXPECT_EQ(again.compilations, 0);
  EXPECT_EQ(compiler.compilations(), 2);
}

// The space is streamed a chunk at a time: transpose's 3 x 3 x 2 = 18 configs (16, 32 and 64
// are all multiples of 4, 8 and 16), ranked one candidate a chunk and all in one chunk: the
// same table, rejections and reasons. The example profile refines its best 32, so all 18: each
// chunk is refined as it arrives and the best 5 (--top) stay whole: one at a time, at most
// 2 x 5 before a compaction + the chunk screened + the chunk traced = 12 are held at once.
TEST(SuggestKernel, ChunksDoNotChangeTheRanking) {
  if (!have_compiler()) GTEST_SKIP() << "no NVRTC or nvcc";
  const KernelSpec spec = load_kernel_spec(kExamples / "transpose.json");
  Compiler compiler(fresh_cache("chunks"));
  KernelSuggestOptions one_at_a_time;
  one_at_a_time.chunk_candidates = 1;
  KernelSuggestion chunked = suggest_kernel(spec, example_profile(), compiler, one_at_a_time);
  KernelSuggestion whole = suggest_kernel(spec, example_profile(), compiler);
  chunked.suggestion.elapsed = whole.suggestion.elapsed = {};
  EXPECT_EQ(advisor::suggestion_to_json(chunked.suggestion).dump(),
            advisor::suggestion_to_json(whole.suggestion).dump());
  EXPECT_EQ(chunked.builds, whole.builds);
  EXPECT_EQ(chunked.suggestion.enumerated, whole.suggestion.enumerated);
  EXPECT_LE(chunked.peak_held_candidates, 12);
  EXPECT_GT(whole.peak_held_candidates, 12);
}

// The library refuses what --max-candidates refuses: past the ceiling, one line naming it.
// gemv_thread_per_row (tests/frontend/kernels/gemv.cu): one block of 64 threads (2 warps), each
// thread walking its row of 4096 floats in the loop at line 7, which nvcc unrolls by 4: 1024
// trips a run, affine, so the trace jumps it ahead (as in extract_loops_test.cpp). Whatever
// blocks and predictions traced it, each warp's run is 1024 trips, interpreted or extrapolated;
// replaying every trip leaves no summary.
TEST(SuggestKernel, ReportsTheLoopsItsTraceJumpedAhead) {
  if (!have_compiler()) GTEST_SKIP() << "no NVRTC or nvcc";
  KernelSpec spec;
  spec.source = std::filesystem::path(CACHEWISE_FRONTEND_TEST_DIR) / "kernels" / "gemv.cu";
  spec.entry = "gemv_thread_per_row";
  spec.grid = "1";
  spec.block = "64";
  spec.buffers = {{"A", "rows * cols * 4"}, {"x", "cols * 4"}, {"y", "rows * 4"}};
  spec.args = {{"rows", 64}, {"cols", 4096}};
  Compiler compiler(fresh_cache("loops"));
  const advisor::Suggestion summarised = suggest_kernel(spec, example_profile(), compiler).suggestion;
  ASSERT_EQ(summarised.ranked.size(), 1u);
  const std::vector<SummarisedLoop>& loops = summarised.ranked.front().prediction.summarised_loops;
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops.front().location, "gemv.cu:7");
  EXPECT_GT(loops.front().runs, 0);
  EXPECT_EQ(loops.front().runs % 2, 0) << "both warps of a traced block run the loop";
  EXPECT_EQ(loops.front().trips_interpreted + loops.front().trips_skipped, loops.front().runs * 1024);
  EXPECT_GT(loops.front().trips_skipped, 9 * loops.front().trips_interpreted);
  const nlohmann::json json = advisor::suggestion_to_json(summarised);
  EXPECT_EQ(json["ranked"][0]["summarised_loops"][0]["loop"], "gemv.cu:7");
  EXPECT_EQ(json["ranked"][0]["summarised_loops"][0]["trips_extrapolated"], loops.front().trips_skipped);

  spec.replay_loops = true;
  const advisor::Suggestion replayed = suggest_kernel(spec, example_profile(), compiler).suggestion;
  ASSERT_EQ(replayed.ranked.size(), 1u);
  EXPECT_TRUE(replayed.ranked.front().prediction.summarised_loops.empty());
  EXPECT_FALSE(advisor::suggestion_to_json(replayed)["ranked"][0].contains("summarised_loops"));
}

TEST(SuggestKernel, MaxCandidatesPastTheCeilingIsAnInputError) {
  KernelSpec spec = load_kernel_spec(kExamples / "transpose.json");
  spec.max_candidates = kLargestMaxCandidates + 1;
  Compiler compiler(fresh_cache("ceiling"));
  try {
    suggest_kernel(spec, example_profile(), compiler);
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "kernel spec: max_candidates must be 1 to 100000, got 100001");
  }
}

// BLOCK_ROWS reaches the kernel only through blockDim.y: its macro changes no PTX, but --block
// names it, so it is a real parameter. 4 rows walk the tile in 8 steps, 8 rows in 4: the same
// conflict-free accesses, so both have 1-way shared loads and 4 sectors per request.
// jacobi_with_host.cu is jacobi_kernel_only.cu's kernel with a host program around it (includes,
// main, launches): host code set aside, both rank the same candidates the same way.
TEST(SuggestKernel, AHostCodeFileRanksLikeItsKernelOnlyTwin) {
  if (!have_compiler()) GTEST_SKIP() << "no NVRTC or nvcc";
  const std::filesystem::path kernels = std::filesystem::path(CACHEWISE_SOURCE_DIR) / "benchmarks" / "kernels";
  auto jacobi = [&](const std::string& file) {
    KernelSpec spec;
    spec.source = kernels / file;
    spec.entry = "jacobi_sweep";
    spec.parameters = {{"BLOCK_X", {32, 64}}, {"BLOCK_Y", {4, 8}}};
    spec.grid = "ceil_div(n, BLOCK_X), ceil_div(n, BLOCK_Y)";
    spec.block = "BLOCK_X, BLOCK_Y";
    spec.buffers = {{"next", "n * n * 4"}, {"current", "n * n * 4"}};
    spec.args = {{"n", 1024}};
    return spec;
  };
  Compiler compiler(fresh_cache("jacobi-twins"));
  const advisor::Suggestion host =
      suggest_kernel(jacobi("jacobi_with_host.cu"), example_profile(), compiler).suggestion;
  const advisor::Suggestion twin =
      suggest_kernel(jacobi("jacobi_kernel_only.cu"), example_profile(), compiler).suggestion;
  ASSERT_EQ(host.ranked.size(), 4u);
  ASSERT_EQ(twin.ranked.size(), 4u);
  for (std::size_t i = 0; i < host.ranked.size(); ++i) {
    EXPECT_EQ(host.ranked[i].config.to_string(), twin.ranked[i].config.to_string());
    EXPECT_EQ(host.ranked[i].prediction.time_us, twin.ranked[i].prediction.time_us);
    EXPECT_EQ(host.ranked[i].registers_per_thread, twin.ranked[i].registers_per_thread);
  }
}

TEST(SuggestKernel, AParameterMayShapeOnlyTheLaunch) {
  if (!have_compiler()) GTEST_SKIP() << "no NVRTC or nvcc";
  KernelSpec spec = transpose(kData / "transpose_blockdim.cu", "transpose_rows");
  spec.parameters = {{"BLOCK_ROWS", {4, 8}}};
  Compiler compiler(fresh_cache("blockdim"));
  const KernelSuggestion result = suggest_kernel(spec, example_profile(), compiler);
  ASSERT_EQ(result.suggestion.feasible, 2);
  EXPECT_EQ(result.builds, 2); // one per -DBLOCK_ROWS, identical PTX
  for (const advisor::Candidate& candidate : result.suggestion.ranked) {
    EXPECT_DOUBLE_EQ(advisor::summarize(candidate.prediction).shared_load_ways.value(), 1.0);
    EXPECT_DOUBLE_EQ(advisor::summarize(candidate.prediction).load_sectors_per_request.value(), 4.0);
  }
  // The same parameter named by no launch expression is unused.
  spec.block = "32, 8";
  try {
    suggest_kernel(spec, example_profile(), compiler);
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(),
                 "parameter 'BLOCK_ROWS' is used neither by the source (its values compile to identical PTX) nor by a "
                 "launch expression");
  }
}

// The template entry, instantiated per candidate: <32, 8, PAD> in a file whose main() only
// instantiates <32, 8, 1>.
TEST(SuggestKernel, TemplateEntryPerCandidate) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc") && std::getenv("CACHEWISE_NVCC") == nullptr)
    GTEST_SKIP() << "no nvcc";
  KernelSpec spec = transpose(kExamples / "transpose_template.cu", "transpose_tiled<32, BLOCK_ROWS, PAD>");
  spec.parameters = {{"BLOCK_ROWS", {8}}, {"PAD", {0, 1}}};
  Compiler compiler(fresh_cache("template"));
  const KernelSuggestion result = suggest_kernel(spec, example_profile(), compiler);
  ASSERT_EQ(result.suggestion.feasible, 2);
  EXPECT_EQ(result.suggestion.ranked.front().config.get("PAD"), 1);
  EXPECT_DOUBLE_EQ(advisor::summarize(with_pad(result.suggestion, 0).prediction).shared_load_ways.value(), 32.0);
#if CACHEWISE_WITH_NVRTC
  // The file's device side gives other PTX than nvcc's (Compiler.HostCodeFallsBackToNvcc...):
  // ranked first from it while nvcc checked, the space was ranked again through nvcc, whose
  // builds alone were cached.
  for (const std::int64_t pad : {0, 1}) {
    Config config;
    config.set("BLOCK_ROWS", 8);
    config.set("PAD", pad);
    const CompiledKernel cached = compiler.compile(
        candidate_compile_request(spec, SpecExpressions(spec).evaluate(config), parse_entry_name(spec.entry), 90));
    EXPECT_TRUE(cached.from_cache) << "PAD=" << pad;
    EXPECT_EQ(cached.compiler, "nvcc") << "PAD=" << pad;
  }
#endif
  // A parameter outside the template arguments reaches nothing: its builds are one and the same.
  spec.parameters.push_back({"UNUSED", {1, 2}});
  try {
    suggest_kernel(spec, example_profile(), compiler);
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(),
                 "parameter 'UNUSED' is used neither by the source (its values compile to identical PTX) nor by a "
                 "launch expression");
  }
}

KernelSpec several(const std::string& entry) {
  KernelSpec spec;
  spec.source = std::filesystem::path(CACHEWISE_FRONTEND_TEST_DIR) / "kernels" / "several.cu";
  spec.entry = entry;
  spec.grid = "n / 512";
  spec.block = "256";
  spec.buffers = {{"in", "n * 8"}, {"out", "n * 8"}};
  spec.args = {{"n", 1 << 20}};
  return spec;
}

// pair_sum<T, 256, true>: each thread loads in[i] and in[i + 256], a warp 32 consecutive T:
// 128 B = 4 sectors per request as float, 256 B = 8 as double. The file's other kernels
// (env_word does not parse, carry_sum does not lower) do not matter.
TEST(SuggestKernel, TypeParameterAndBoolTemplateArgument) {
  if (!have_compiler()) GTEST_SKIP() << "no NVRTC or nvcc";
  KernelSpec spec = several("pair_sum<T, 256, true>");
  spec.parameters = {{"T", {0, 1}, {"float", "double"}}};
  Compiler compiler(fresh_cache("type-parameter"));
  const KernelSuggestion result = suggest_kernel(spec, example_profile(), compiler);
  ASSERT_EQ(result.suggestion.ranked.size(), 2u);
  for (const advisor::Candidate& candidate : result.suggestion.ranked) {
    const bool is_float = candidate.config.to_string() == "T=float";
    EXPECT_TRUE(is_float || candidate.config.to_string() == "T=double") << candidate.config.to_string();
    EXPECT_DOUBLE_EQ(advisor::summarize(candidate.prediction).load_sectors_per_request.value(), is_float ? 4.0 : 8.0);
  }
}

// Two entries in one ranking: each candidate's config carries its entry as the word of "entry".
TEST(SuggestKernel, SeveralEntriesInOneRanking) {
  if (!have_compiler()) GTEST_SKIP() << "no NVRTC or nvcc";
  KernelSpec spec = several("");
  spec.grid = "n / 256";
  Compiler compiler(fresh_cache("several-entries"));
  const KernelSuggestion result =
      suggest_kernel_entries(spec, {"tile_sum", "pair_sum<float, 256, false>"}, example_profile(), compiler);
  ASSERT_EQ(result.suggestion.ranked.size(), 2u);
  std::set<std::string> entries;
  for (const advisor::Candidate& candidate : result.suggestion.ranked) {
    ASSERT_NE(candidate.config.word("entry"), nullptr);
    entries.insert(*candidate.config.word("entry"));
    // Both load 32 consecutive floats per warp request: 4 sectors.
    EXPECT_DOUBLE_EQ(advisor::summarize(candidate.prediction).load_sectors_per_request.value(), 4.0);
  }
  EXPECT_EQ(entries, (std::set<std::string>{"tile_sum", "pair_sum<float, 256, false>"}));
}

// tile_sum has no template arguments, so --param THREADS reaches it as -DTHREADS=128, which
// applies to the whole file and would rewrite pair_sum's "template <typename T, int THREADS, bool
// FIRST_ADD>" (the name on several.cu:48). Found before anything compiles, in one line.
TEST(SuggestKernel, SeveralEntriesMacroNamesAnotherEntrysTemplateParameter) {
  KernelSpec spec = several("");
  spec.parameters = {{"THREADS", {128, 256}, {}}};
  Compiler compiler(fresh_cache("several-entries-macro"));
  try {
    (void)suggest_kernel_entries(spec, {"tile_sum", "pair_sum<float, THREADS, false>"}, example_profile(), compiler);
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(),
                 "several.cu:48: --param THREADS reaches tile_sum as a macro, which rewrites the template parameter "
                 "THREADS of 'pair_sum': give the --param a name no entry's template declares");
  }
  EXPECT_EQ(compiler.compilations(), 0);
}

} // namespace
} // namespace cachewise::frontend
