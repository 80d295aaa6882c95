// cachewise::tuner — autotuning by measurement, with the timer injected, so the same code
// tunes real kernels on a GPU (the CLI passes a CUDA-event timer) and fake workloads in tests.
//
//   tuner::Tuner tuner(problem, advisor_space);          // or add_parameter / add_constraint
//   tuner.set_measure([&](const Config& c, std::int64_t iteration) { return run_once_ms(c, iteration); });
//   tuner.set_strategy(tuner::Strategy::model_ranked(predicted_time));
//   tuner.set_options({.journal = "tune.jsonl"});
//   tuner::TuningResult result = tuner.tune();
//   tuner::save_results_json(result, "tune.json");
//
// Every candidate is measured in a forked child process by default, so a kernel that crashes,
// hangs or poisons its CUDA context marks that candidate failed and the run goes on. Results
// are appended to a JSON-lines journal as they arrive (fsync per line): a killed run, started
// again with the same journal, skips what is done. With Options::devices, a batch's candidates
// run in parallel, one child per GPU (CUDA_VISIBLE_DEVICES), contenders re-measured on the
// first; an executor (execution.hpp) may hand rounds to MPI ranks instead (mpi.hpp). Plain C++20 (POSIX); CUDA only
// behind the launch layer's Device interface (device.hpp), which tunes a user's own kernel (kernel_tuning.hpp) and
// writes Kernel Tuner's cache file (kernel_tuner_cache.hpp).
//
// An umbrella over the one-concept headers in cachewise/tuner/.
#pragma once

#include "cachewise/tuner/autotuner.hpp"
#include "cachewise/tuner/convergence.hpp"
#include "cachewise/tuner/device.hpp"
#include "cachewise/tuner/device_source.hpp"
#include "cachewise/tuner/devices.hpp"
#include "cachewise/tuner/execution.hpp"
#include "cachewise/tuner/kernel_arguments.hpp"
#include "cachewise/tuner/kernel_tuner_cache.hpp"
#include "cachewise/tuner/kernel_tuning.hpp"
#include "cachewise/tuner/isolation.hpp"
#include "cachewise/tuner/merged_header.hpp"
#include "cachewise/tuner/options.hpp"
#include "cachewise/tuner/results.hpp"
#include "cachewise/tuner/statistics.hpp"
#include "cachewise/tuner/strategy.hpp"
#include "cachewise/tuner/tune_kernel.hpp"
#include "cachewise/tuner/tune_results.hpp"
#include "cachewise/tuner/tuned_header.hpp"
