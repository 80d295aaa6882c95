// cachewise::kernels — real CUDA kernels for every built-in pattern family, launched from the
// same ProblemSpec + Config the model simulates (docs/pattern-families.md), a CPU reference to
// check them, and event-based timing. No CUDA type appears here: streams travel as void*.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cachewise/model.hpp"

namespace cachewise::kernels {

/// Name of CUDA device 0 ("NVIDIA H200"), or empty when no device is usable.
std::string local_device_name();

/// Throws NoDeviceError("no CUDA device: <reason>") unless `device` is usable; selects it.
void require_device(int device = 0);

/// Device memory for one problem: `input_sets` independent copies of every array, inputs
/// filled with random values in [-1, 1) (never zeros: they hide unwritten outputs) and
/// outputs poisoned with NaN. Several sets let timing rotate through more data than L2 holds.
class Workload {
public:
  /// Validates the problem's sizes (InputError) and allocates; needs a device (NoDeviceError).
  /// `config` matters only where it sizes an array (copy's stride); launches with any config
  /// of the same sizes may share the workload.
  Workload(const ProblemSpec& problem, const Config& config, int input_sets = 1, std::uint64_t seed = 1);
  ~Workload();
  Workload(Workload&&) noexcept;
  Workload& operator=(Workload&&) noexcept;
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  const ProblemSpec& problem() const;
  /// Elements of each array of one set: inputs in family order, then the output.
  const std::vector<std::int64_t>& array_elements() const;
  int input_sets() const;
  /// The set the next launch reads and writes.
  void select_set(int index);
  int selected_set() const;
  /// Fills the selected set's outputs with NaN again.
  void poison_outputs();
  /// Bytes of one set (all inputs and outputs).
  std::int64_t bytes_per_set() const;

  /// Host copies of the selected set's arrays, converted to double, in the order the family
  /// names them (transpose/copy/stencil: in; gemm: A, B) and the output (out or C).
  std::vector<std::vector<double>> inputs_on_host() const;
  std::vector<double> output_on_host() const;

  /// Device pointers of the selected set: inputs in family order, then the output.
  std::vector<void*> device_arrays() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Launches the family's kernel for `config` on the workload's selected set, asynchronously.
/// The config is first checked with model::build_pattern, so a bad config fails with the
/// same InputError as `advisor simulate`; a config the model accepts but no compiled kernel
/// covers (e.g. gemm tm=16) fails with an InputError naming the compiled values.
void launch(const ProblemSpec& problem, const Config& config, Workload& workload, void* stream = nullptr);

/// Largest error of the selected set's output against a double-precision CPU reference:
/// max over checked points of |out - ref| / (sum of |terms| in ref), +inf for an unwritten
/// (NaN) point. `max_checked_points` 0 checks every point; otherwise an evenly spread sample
/// that always includes the first and last points (edges of tiles that do not divide n).
/// `config` supplies what the problem keeps there (stencil2d radius, copy stride).
double max_relative_error(const ProblemSpec& problem, const Config& config, const Workload& workload,
                          std::int64_t max_checked_points = 0);

/// Tolerance for max_relative_error: 0 for copy/transpose (bit-exact), else by dtype
/// (f64 1e-12, f32 1e-5, f16 2e-3).
double error_tolerance(const ProblemSpec& problem);

/// max_relative_error(...) <= error_tolerance(problem).
bool check_against_cpu_reference(const ProblemSpec& problem, const Config& config, const Workload& workload,
                                 std::int64_t max_checked_points = 0);

struct TimingOptions {
  int warmup_launches = 3; ///< at least 1: the first launch also validates the config
  int repeats = 20;
  /// 0: as many sets (up to 8) as make the data at least 3x the device's L2, so repeated
  /// launches do not measure a warm cache; 1: always the same buffers (warm-L2 timing).
  int input_sets = 0;
  std::uint64_t seed = 1;
};

struct Timing {
  double median_ms = 0.0;
  double p25_ms = 0.0;
  double p75_ms = 0.0;
  int repeats = 0;
  /// The pattern's useful bytes (each input read once, each output written once) / median.
  double bandwidth_gb_per_s = 0.0;
};

/// Times one kernel with CUDA events: warm-up launches, then `repeats` launches each timed on
/// its own, rotating through the input sets; reports the median and quartiles.
Timing time_kernel(const ProblemSpec& problem, const Config& config, const TimingOptions& options = {});
/// Same, on a workload the caller keeps (to time many configs of one problem cheaply).
Timing time_kernel(const ProblemSpec& problem, const Config& config, Workload& workload,
                   const TimingOptions& options = {});

/// Input sets time_kernel(problem, config, options) allocates when options.input_sets is 0:
/// enough (up to 8) that the data is at least 3x the device's L2.
int timing_input_sets(const ProblemSpec& problem, const Config& config);

/// Reads a scratch buffer twice the size of the device's L2, so the next kernel starts with
/// none of its data cached and nothing dirty in L2 (what the model assumes, and what
/// `ncu --cache-control all` does).
void evict_l2();

/// Device-to-device cudaMemcpy bandwidth copying `bytes`, counting bytes read + written (2 *
/// bytes per copy); median of repeats after a warm-up, rotating over buffer pairs that together
/// exceed 3x L2 so every copy reads DRAM. The ceiling kernels are held to.
double measure_copy_bandwidth_gb_per_s(std::int64_t bytes);

} // namespace cachewise::kernels
