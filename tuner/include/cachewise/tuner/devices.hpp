// cachewise::tuner devices: the GPUs a run measures on, how `--gpus` picks them, and the
// pinning of a measuring child to one of them (CUDA_VISIBLE_DEVICES).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cachewise::tuner {

/// One GPU that measured (or will measure) a candidate.
struct MeasuringDevice {
  int index = -1;             ///< CUDA ordinal among the devices this process sees; -1: the default device, not pinned
  std::string name;           ///< the model ("NVIDIA H200"): times are compared only within one model
  std::string uuid;           ///< "GPU-8e1c...", where the driver reports one
  int compute_capability = 0; ///< 90 for sm_90; 0 unknown
  std::string host;           ///< MPI runs: the measuring rank's host
  int rank = -1;              ///< MPI runs: the measuring rank
};

/// Same physical device: the UUID when both have one, else host, rank and index.
bool same_device(const MeasuringDevice& a, const MeasuringDevice& b);
/// "0 (NVIDIA H200, GPU-8e1c...)", "rank 2 on node7: 1 (NVIDIA H200)".
std::string describe(const MeasuringDevice& device);

nlohmann::json device_to_json(const MeasuringDevice& device);
MeasuringDevice device_from_json(const nlohmann::json& json); ///< throws InputError naming the bad field

/// The devices `--gpus` names among those `present`: "all", or indexes "0,2,3". Throws
/// InputError for an index that is not present ("--gpus 5: no device 5 (this host has 0-1)"),
/// a repeated one, malformed text, or no device present at all.
std::vector<MeasuringDevice> select_devices(std::string_view text, const std::vector<MeasuringDevice>& present);

/// The devices grouped by model (name), groups in order of first appearance: each model is
/// tuned on its own, as a time on one model says nothing about another.
std::vector<std::vector<MeasuringDevice>> group_by_model(const std::vector<MeasuringDevice>& devices);

/// The GPUs of this host: the CUDA driver's, asked in a child process (the parent forks
/// measuring children and must not initialise CUDA). Empty when there are none; then
/// `why_none` (if given) says why ("no CUDA device: built without CUDA").
std::vector<MeasuringDevice> list_devices(std::string* why_none = nullptr);

/// The CUDA driver's devices, in this process; throws NoDeviceError without a driver or
/// device (or a build without CUDA).
std::vector<MeasuringDevice> list_cuda_devices();

/// What CUDA_VISIBLE_DEVICES must be in a child measuring on `index`: the index, or the
/// entry at that position of this process's own CUDA_VISIBLE_DEVICES when it has one (the
/// indexes are those of the devices it sees).
std::string visible_devices_value(int index);

/// In a measuring child, before anything initialises CUDA: makes `device` the only one it
/// sees (no-op for index -1).
void pin_to_device(const MeasuringDevice& device);

} // namespace cachewise::tuner
