// How long one candidate takes to simulate with the default options (what the advisor pays
// per refined config) and with the advisor's screening options (what it pays per config).
// Goals (docs/model.md): transpose n=4096 <= 50 ms, n=16384 <= 1 s.
#include <benchmark/benchmark.h>

#include "cachewise/model.hpp"

namespace {

using cachewise::Config;
using cachewise::ProblemSpec;

void simulate_candidate(benchmark::State& state, const ProblemSpec& problem, const char* config,
                        cachewise::SimulationOptions options = {}) {
  const cachewise::DeviceProfile profile = cachewise::load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const cachewise::KernelPattern pattern = cachewise::build_pattern(problem, Config::parse(config));
  double simulated_fraction = 1.0;
  for (auto _ : state) {
    const cachewise::Prediction prediction = cachewise::simulate(pattern, profile, options);
    simulated_fraction = prediction.simulated_fraction;
    benchmark::DoNotOptimize(prediction.time_us);
  }
  state.counters["simulated_fraction"] = simulated_fraction;
}

const char* const kExpertTranspose = "smem=1,tile=32,block_x=32,block_y=8,pad=1";
const char* const kNaiveTranspose = "smem=0,tile=32,block_x=32,block_y=8";
/// What the advisor screens every candidate with (SuggestOptions::screening).
const cachewise::SimulationOptions kScreening{.work_budget = std::int64_t{1} << 13, .simulated_sm_count = 4};

BENCHMARK_CAPTURE(simulate_candidate, transpose_4096_smem, ProblemSpec{"transpose", 4096}, kExpertTranspose)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_candidate, transpose_4096_naive, ProblemSpec{"transpose", 4096}, kNaiveTranspose)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_candidate, transpose_16384_smem, ProblemSpec{"transpose", 16384}, kExpertTranspose)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_candidate, stencil2d_4096, ProblemSpec{"stencil2d", 4096},
                  "radius=2,block_x=32,block_y=8,ept_y=4,smem=1")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_candidate, stencil3d_256, ProblemSpec{"stencil3d", 256},
                  "mode=1,block_x=32,block_y=8,z_chunk=16")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_candidate, gemm_4096, ProblemSpec{"gemm", 4096}, "bm=128,bn=128,bk=8,tm=8,tn=8,pad=4")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_candidate, screen_transpose_4096_smem, ProblemSpec{"transpose", 4096}, kExpertTranspose,
                  kScreening)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_candidate, screen_stencil3d_256, ProblemSpec{"stencil3d", 256},
                  "mode=1,block_x=32,block_y=8,z_chunk=16", kScreening)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(simulate_candidate, screen_gemm_2048, ProblemSpec{"gemm", 2048}, "bm=128,bn=128,bk=8,tm=8,tn=8,pad=4",
                  kScreening)
    ->Unit(benchmark::kMillisecond);

} // namespace
