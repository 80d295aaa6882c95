// `advisor tune --kernel FILE.cu | --spec FILE.json`: a user kernel tuned per size bucket on
// the local GPU through the tuner's launch layer, or ranked statically by the front end when
// there is none; writes the same kind of header as the family tuning.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "suggest_kernel.hpp"

namespace cachewise::cli {

/// The options of `advisor tune` that a family and a user kernel share.
struct TuneRunOptions {
  std::string strategy = "model";
  std::uint64_t seed = 1;
  std::int64_t budget = 0;
  std::int64_t timeout_s = 60;
  int max_repeats = 100;
  std::string journal;
  std::string header;
  std::string json;
  std::string gpus; ///< --gpus: "all" or "0,2,3"; empty: the first GPU
  bool mpi = false; ///< --mpi: rank 0 plans, the other ranks measure
};

struct KernelTuneArguments {
  KernelOptions kernel;
  std::vector<std::string> sizes; ///< "width=1024,height=1024" per bucket
  std::string kernel_tuner_cache; ///< Kernel Tuner cache-file JSON (one per bucket when several)
};

void add_kernel_tune_options(CLI::App& command, KernelTuneArguments& arguments);
/// `profile` empty: the bundled one.
void run_tune_kernel(const KernelTuneArguments& arguments, const TuneRunOptions& run, const std::string& profile);

} // namespace cachewise::cli
