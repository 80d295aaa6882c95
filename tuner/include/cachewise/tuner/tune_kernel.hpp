// cachewise::tuner tune_kernel: a user kernel's spec tuned per size bucket on one GPU model
// through the launch layer (compiled in a child process first, so the measuring children are
// forked from a process that never ran NVRTC or CUDA), or ranked statically by the front end
// when there is no GPU. Returns what the header and the results file hold; the caller writes them.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cachewise/frontend/spec.hpp"
#include "cachewise/tuner/autotuner.hpp"
#include "cachewise/tuner/device_source.hpp"
#include "cachewise/tuner/size_bucket.hpp"
#include "cachewise/tuner/tune_results.hpp"
#include "cachewise/tuner/tuned_header.hpp"

namespace cachewise::tuner {

struct KernelTuneOptions {
  std::string strategy = "model"; ///< exhaustive, random or model
  std::uint64_t seed = 1;         ///< of the random strategy
  std::int64_t budget = 0;        ///< most candidates measured per bucket; 0: no cap
  std::chrono::seconds candidate_timeout{60};
  int max_repeats = 100;
  std::filesystem::path journal; ///< FILE.<bucket>.ext per bucket when several
  /// Kernel Tuner cache file: resumed from when it exists, then written (per bucket likewise).
  std::filesystem::path kernel_tuner_cache;
  std::filesystem::path profile; ///< empty: the bundled one of the device (the default one without)
};

/// One evaluation as a run reports it.
struct KernelTuneProgress {
  const Progress& progress;
  const ProblemSpec& problem;           ///< kernel_problem of the bucket
  std::size_t done = 0;                 ///< candidates evaluated so far in this bucket
  std::size_t space_size = 0;           ///< candidates of the bucket's space
  bool from_kernel_tuner_cache = false; ///< read back from the resumed cache file (from_journal is set too)
};

/// How a run measures and what it reports as it goes.
struct KernelTuneHooks {
  const DeviceSource* devices = nullptr; ///< the candidates' Measure; must be set when measuring
  /// Runs a bucket's tuner: Tuner::tune, or a rank's share of an MPI run (nullopt on a measuring rank).
  std::function<std::optional<TuningResult>(Tuner&)> run = [](Tuner& tuner) { return tuner.tune(); };
  std::function<void(const KernelTuneProgress&)> on_progress = [](const KernelTuneProgress&) {};
  /// "resuming from FILE: 3 of its 9 configurations are candidates"
  std::function<void(const std::string&)> on_note = [](const std::string&) {};
  /// Each bucket's pick as it is made, with the bucket's problem (kernel_problem).
  std::function<void(const ProblemSpec&, const HeaderBucket&)> on_bucket = [](const ProblemSpec&, const HeaderBucket&) {
  };
};

struct KernelTuneOutcome {
  std::string function;              ///< the entry's function: the header's scope
  std::vector<HeaderBucket> buckets; ///< for render_bucket_header
  HeaderInfo header;                 ///< every field but generated_by
  TuneResults results;               ///< the results file
};

/// The buckets of `texts` ("width=1024,height=1024" each), or the spec's own sizes as one
/// bucket: its args, else its integer defines, else none. Throws InputError when the buckets
/// do not name the same args in the same order.
std::vector<SizeBucket> size_buckets(const std::vector<std::string>& texts, const frontend::KernelSpec& spec);

/// Every bucket measured on `group` (GPUs of one model), or ranked statically when it is
/// empty. Throws InputError for a strategy the model cannot serve, or a bucket whose every
/// candidate failed.
KernelTuneOutcome tune_kernel(const frontend::KernelSpec& spec, const std::vector<SizeBucket>& buckets,
                              const std::vector<MeasuringDevice>& group, const KernelTuneOptions& options,
                              const KernelTuneHooks& hooks);

} // namespace cachewise::tuner
