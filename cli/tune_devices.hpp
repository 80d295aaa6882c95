// `advisor tune`'s devices: the GPUs --gpus picks (the first alone without it), grouped by
// model, each model tuned on its own; listed and measured by the run's device source.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cachewise/tuner/devices.hpp"
#include "cachewise/tuner/execution.hpp"
#include "cachewise/tuner/autotuner.hpp"
#include "cachewise/tuner/device_source.hpp"
#include "cachewise/tuner/mpi.hpp"

namespace cachewise::cli {

struct TuneDevices {
  std::vector<std::vector<tuner::MeasuringDevice>> groups; ///< one per model; empty: no GPU (static fallback)
  const tuner::DeviceSource* devices = nullptr;            ///< lists the GPUs and makes each candidate's Measure
  std::string why_none;                                    ///< when there is no GPU
  std::shared_ptr<tuner::mpi::Session> session;            ///< --mpi; its device is the one group's
  /// Not a measuring MPI rank: this process writes the outputs.
  bool writes_outputs() const { return !session || session->coordinator(); }
  const tuner::DeviceSource& source() const { return *devices; }
};

/// The GPUs of the run's device source (run_advisor.hpp). `gpus`: --gpus; `mpi`: --mpi
/// (starts the MPI session). Throws InputError for a --gpus that names no device here, or both.
TuneDevices tune_devices(const std::string& gpus, bool mpi);

/// tuner.tune(), or under --mpi its share of the run (nullopt on a measuring rank).
std::optional<tuner::TuningResult> run_tuner(tuner::Tuner& tuner, const TuneDevices& devices);

/// Runs `work`; under --mpi an error on one rank is printed there and ends every rank
/// (MPI_Abort), as the others would wait for it forever.
void on_every_rank(const TuneDevices& devices, const std::function<void()>& work);

/// What a progress line says of the device that measured: " [GPU 2]" with several GPUs,
/// " [rank 1: GPU 0]" under MPI, else nothing.
std::string device_tag(const tuner::MeasuringDevice& device, std::size_t devices_in_run);

/// FILE as given with one model; FILE.<model>.ext with several ("tuned.nvidia_h200.h").
std::string path_for_model(const std::string& file, const std::string& model, std::size_t models);

} // namespace cachewise::cli
