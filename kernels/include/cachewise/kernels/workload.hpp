// cachewise::kernels::Workload: the device memory one problem's kernels read and write.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cachewise/model/problem.hpp"

namespace cachewise::kernels {

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

} // namespace cachewise::kernels
