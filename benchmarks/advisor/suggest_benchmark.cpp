// Whole suggest() per family with the default options (what `advisor suggest` pays, minus
// process start and profile loading), and the search space alone. Goals (docs/advisor.md):
// transpose n=4096 <= 1 s wall on the 2-core development machine; the largest space <= 5 s.
#include <benchmark/benchmark.h>

#include "cachewise/advisor.hpp"

namespace {

using cachewise::ProblemSpec;
namespace advisor = cachewise::advisor;

void suggest_family(benchmark::State& state, const ProblemSpec& problem) {
  const cachewise::DeviceProfile profile = cachewise::load_profile(CACHEWISE_EXAMPLE_PROFILE);
  advisor::Suggestion suggestion;
  for (auto _ : state) {
    suggestion = advisor::suggest(problem, profile);
    benchmark::DoNotOptimize(suggestion.ranked.front().prediction.time_us);
  }
  state.counters["feasible"] = static_cast<double>(suggestion.feasible);
  state.counters["enumerated"] = static_cast<double>(suggestion.enumerated);
}

void enumerate_space(benchmark::State& state, const ProblemSpec& problem) {
  const cachewise::DeviceProfile profile = cachewise::load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const cachewise::SearchSpace space = cachewise::family_search_space(problem, profile);
  std::size_t configs = 0;
  for (auto _ : state) {
    configs = space.enumerate().size();
    benchmark::DoNotOptimize(configs);
  }
  state.counters["configs"] = static_cast<double>(configs);
}

BENCHMARK_CAPTURE(suggest_family, transpose_4096, ProblemSpec{"transpose", 4096})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(suggest_family, copy_16m, ProblemSpec{"copy", 16 << 20})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(suggest_family, stencil2d_4096, ProblemSpec{"stencil2d", 4096})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(suggest_family, stencil3d_256, ProblemSpec{"stencil3d", 256})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(suggest_family, gemm_2048, ProblemSpec{"gemm", 2048})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(enumerate_space, transpose, ProblemSpec{"transpose", 4096})->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(enumerate_space, gemm, ProblemSpec{"gemm", 2048})->Unit(benchmark::kMicrosecond);

} // namespace
