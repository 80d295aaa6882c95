// Ranking a user kernel (examples/kernels/transpose.cu, n=4096, H200 profile) on 2 threads:
// a 50-candidate space cold (empty compile cache: every candidate compiled) and warm (every
// candidate cached), and one candidate warm (cache lookup, PTX parse, extraction, screening
// and refined simulation). CPU is the whole process (both threads). Results: docs/kernel-spec.md.
#include <unistd.h>

#include <benchmark/benchmark.h>

#include "cachewise/frontend/kernel_advisor.hpp"

namespace {

using namespace cachewise;
using namespace cachewise::frontend;

const DeviceProfile& h200() {
  static const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  return profile;
}

KernelSpec transpose_spec(std::vector<ParameterValues> parameters) {
  KernelSpec overrides;
  overrides.parameters = std::move(parameters);
  return merge_kernel_specs(load_kernel_spec(std::string(CACHEWISE_EXAMPLE_KERNELS) + "/transpose.json"), overrides);
}

/// 2 tiles x 5 row counts x 5 pads = 50 candidates, every one launchable.
KernelSpec fifty_candidates() {
  return transpose_spec({{"TILE_DIM", {16, 32}}, {"BLOCK_ROWS", {1, 2, 4, 8, 16}}, {"PAD", {0, 1, 2, 3, 4}}});
}

KernelSuggestOptions two_threads() {
  KernelSuggestOptions options;
  options.suggest.threads = 2;
  options.compile_threads = 2;
  return options;
}

std::filesystem::path fresh_cache(const char* name) {
  const auto directory = std::filesystem::temp_directory_path() /
                         ("cachewise-bench-" + std::string(name) + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(directory);
  return directory;
}

void report(benchmark::State& state, const KernelSuggestion& result) {
  state.counters["candidates"] = static_cast<double>(result.suggestion.enumerated);
  state.counters["compiled"] = static_cast<double>(result.compilations);
}

void BM_Rank50Cold(benchmark::State& state) {
  const KernelSpec spec = fifty_candidates();
  for (auto _ : state) {
    state.PauseTiming();
    Compiler compiler(fresh_cache("cold"));
    state.ResumeTiming();
    report(state, suggest_kernel(spec, h200(), compiler, two_threads()));
  }
}
BENCHMARK(BM_Rank50Cold)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime()->MeasureProcessCPUTime();

void BM_Rank50Warm(benchmark::State& state) {
  const KernelSpec spec = fifty_candidates();
  Compiler compiler(fresh_cache("warm"));
  suggest_kernel(spec, h200(), compiler, two_threads()); // fills the cache
  for (auto _ : state) report(state, suggest_kernel(spec, h200(), compiler, two_threads()));
}
BENCHMARK(BM_Rank50Warm)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime()->MeasureProcessCPUTime();

void BM_OneCandidateWarm(benchmark::State& state) {
  const KernelSpec spec = transpose_spec({{"TILE_DIM", {32}}, {"BLOCK_ROWS", {8}}, {"PAD", {1}}});
  Compiler compiler(fresh_cache("one"));
  suggest_kernel(spec, h200(), compiler, two_threads());
  for (auto _ : state) report(state, suggest_kernel(spec, h200(), compiler, two_threads()));
}
BENCHMARK(BM_OneCandidateWarm)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime()->MeasureProcessCPUTime();

} // namespace
