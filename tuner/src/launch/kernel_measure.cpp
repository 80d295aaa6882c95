// The measuring side of kernel tuning: a candidate loaded on a Device with its buffer sets,
// checked once against the reference variant, then timed launch by launch.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <sstream>

#include "cachewise/frontend/kernel_advisor.hpp"
#include "cachewise/tuner/kernel_tuning.hpp"

namespace cachewise::tuner {
namespace {

std::int64_t set_bytes_of(const std::vector<std::int64_t>& buffer_bytes) {
  std::int64_t total = 0;
  for (const std::int64_t bytes : buffer_bytes) total += bytes;
  return total;
}

LaunchShape shape_of(const frontend::EvaluatedSpec& evaluated) {
  return {evaluated.grid, evaluated.block, evaluated.dynamic_shared_bytes};
}

template <typename T>
T element(std::span<const std::byte> bytes, std::size_t index) {
  T value;
  std::memcpy(&value, bytes.data() + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
std::optional<std::string> first_difference_as(std::span<const std::byte> a, std::span<const std::byte> b,
                                               double tolerance) {
  for (std::size_t i = 0; i < a.size() / sizeof(T); ++i) {
    const double x = static_cast<double>(element<T>(a, i)), y = static_cast<double>(element<T>(b, i));
    const bool both_nan = std::isnan(x) && std::isnan(y);
    if (both_nan || x == y) continue;
    if (!std::isnan(x) && !std::isnan(y) && std::abs(x - y) <= tolerance * std::max(std::abs(x), std::abs(y))) continue;
    std::ostringstream text;
    text.precision(9);
    text << "index " << i << ": " << x << " vs " << y;
    return text.str();
  }
  return std::nullopt;
}

/// Lives in the measuring process: the device opened there, the candidate loaded there.
struct MeasureState {
  std::shared_ptr<const KernelCandidates> candidates;
  DeviceFactory open_device;
  KernelMeasureOptions options;
  std::unique_ptr<Device> device;
  std::string loaded_config;
  std::unique_ptr<LoadedKernel> loaded;
};

} // namespace

LoadedKernel::LoadedKernel(Device& device, const KernelCandidates& candidates, const CompiledCandidate& candidate,
                           const KernelMeasureOptions& options)
    : device_(device), candidates_(candidates), candidate_(candidate) {
  if (candidate.ptx.empty()) throw InputError(candidate.failure);
  const DeviceLimits limits = device.limits();
  check_launch_limits(shape_of(candidate.evaluated), limits);
  function_ = device.function(device.load_module(candidate.ptx), candidate.entry);
  const std::int64_t l2_bytes = options.l2_bytes > 0 ? options.l2_bytes : limits.l2_bytes;
  const int sets =
      buffer_sets_for(set_bytes_of(candidate.evaluated.buffer_bytes), l2_bytes, limits.global_memory_bytes);
  for (int set = 0; set < sets; ++set) {
    std::vector<DeviceBuffer> buffers;
    for (std::size_t b = 0; b < candidate.evaluated.buffer_bytes.size(); ++b) {
      buffers.push_back(device.allocate(candidate.evaluated.buffer_bytes[b]));
      fill(buffers.back(), set, static_cast<int>(b));
    }
    sets_.push_back(std::move(buffers));
  }
}

LoadedKernel::~LoadedKernel() {
  for (const std::vector<DeviceBuffer>& set : sets_) {
    for (const DeviceBuffer& buffer : set) device_.release(buffer);
  }
}

double LoadedKernel::run(std::int64_t iteration) {
  if (iteration == 0 && candidates_.reference() != nullptr) check_against_reference();
  const auto set = static_cast<std::size_t>(iteration) % sets_.size();
  return device_.launch_timed(function_, shape_of(candidate_.evaluated), arguments(candidate_, sets_[set]));
}

void LoadedKernel::fill(const DeviceBuffer& buffer, int set, int index) {
  // A buffer with declared contents holds them in every set: the kernel runs as it was modelled.
  const frontend::DeclaredContents* declared =
      candidate_.evaluated.contents_of(candidates_.spec().buffers[static_cast<std::size_t>(index)].name);
  if (!declared) return device_.copy_to_device(buffer, buffer_contents(buffer.bytes, set, index));
  auto [found, added] = declared_bytes_.try_emplace(index);
  if (added) found->second = declared->bytes(buffer.bytes);
  device_.copy_to_device(buffer, found->second);
}

PackedArguments LoadedKernel::arguments(const CompiledCandidate& kernel,
                                        const std::vector<DeviceBuffer>& buffers) const {
  std::vector<std::uint64_t> addresses;
  for (const DeviceBuffer& buffer : buffers) addresses.push_back(buffer.address);
  std::vector<frontend::PtxParam> compiled;
  for (const KernelParameter& parameter : kernel.parameters)
    compiled.push_back({parameter.name, parameter.type, parameter.bytes, parameter.align});
  return pack_arguments(kernel.parameters,
                        frontend::kernel_parameter_values(compiled, candidates_.source_parameters(), candidates_.spec(),
                                                          kernel.evaluated, addresses));
}

void LoadedKernel::check_against_reference() {
  const CompiledCandidate& reference = *candidates_.reference();
  if (reference.evaluated.buffer_bytes != candidate_.evaluated.buffer_bytes) {
    throw InputError("the reference " + reference.evaluated.config.to_string() + " has other buffer sizes than " +
                     candidate_.evaluated.config.to_string() + ": outputs cannot be compared");
  }
  check_launch_limits(shape_of(reference.evaluated), device_.limits());
  const std::uint64_t reference_function = device_.function(device_.load_module(reference.ptx), reference.entry);
  const std::vector<std::vector<std::byte>> expected = outputs_after(reference_function, reference);
  const std::vector<std::vector<std::byte>> actual = outputs_after(function_, candidate_);
  const frontend::KernelSpec& spec = candidates_.spec();
  for (std::size_t i = 0; i < spec.outputs.size(); ++i) {
    if (auto difference = first_difference(actual[i], expected[i], spec.outputs[i].type, spec.tolerance)) {
      throw InputError("output " + spec.outputs[i].name + " differs from the reference (" +
                       reference.evaluated.config.to_string() + ") at " + *difference);
    }
  }
}

std::vector<std::vector<std::byte>> LoadedKernel::outputs_after(std::uint64_t function,
                                                                const CompiledCandidate& kernel) {
  const frontend::KernelSpec& spec = candidates_.spec();
  std::vector<DeviceBuffer>& buffers = sets_.front();
  for (std::size_t b = 0; b < buffers.size(); ++b) fill(buffers[b], 0, static_cast<int>(b));
  device_.launch_timed(function, shape_of(kernel.evaluated), arguments(kernel, buffers));
  std::vector<std::vector<std::byte>> outputs;
  for (const frontend::OutputSpec& output : spec.outputs) {
    const auto index = static_cast<std::size_t>(
        std::ranges::find(spec.buffers, output.name, &frontend::BufferSpec::name) - spec.buffers.begin());
    outputs.push_back(device_.copy_from_device(buffers[index]));
  }
  for (std::size_t b = 0; b < buffers.size(); ++b)
    fill(buffers[b], 0, static_cast<int>(b)); // timed runs start from the contents
  return outputs;
}

int buffer_sets_for(std::int64_t set_bytes, std::int64_t l2_bytes, std::int64_t memory_bytes) {
  if (set_bytes <= 0) return 1;
  std::int64_t sets = l2_bytes / set_bytes + 1;
  sets = std::min<std::int64_t>(sets, kMaxBufferSets);
  if (memory_bytes > 0) sets = std::min(sets, memory_bytes / 2 / set_bytes);
  return static_cast<int>(std::max<std::int64_t>(sets, 1));
}

std::vector<std::byte> buffer_contents(std::int64_t bytes, int set, int buffer) {
  std::vector<std::byte> contents(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0)), std::byte{0});
  const std::uint32_t seed =
      static_cast<std::uint32_t>(set) * 0x9E3779B9u + static_cast<std::uint32_t>(buffer) * 0x85EBCA6Bu;
  for (std::size_t word = 0; word + 4 <= contents.size(); word += 4) {
    const std::uint32_t hash = (static_cast<std::uint32_t>(word / 4) + seed) * 2654435761u;
    const float value = static_cast<float>(hash >> 8) / 16777216.0f; // 24 bits: exact in a float, in [0, 1)
    const auto bits = std::bit_cast<std::uint32_t>(value);
    for (int b = 0; b < 4; ++b)
      contents[word + static_cast<std::size_t>(b)] = static_cast<std::byte>((bits >> (8 * b)) & 0xFF);
  }
  return contents;
}

std::optional<std::string> first_difference(std::span<const std::byte> candidate, std::span<const std::byte> reference,
                                            const std::string& type, double tolerance) {
  if (candidate.size() != reference.size()) {
    throw InputError("outputs of " + std::to_string(candidate.size()) + " and " + std::to_string(reference.size()) +
                     " bytes cannot be compared");
  }
  if (type == "f32") return first_difference_as<float>(candidate, reference, tolerance);
  if (type == "f64") return first_difference_as<double>(candidate, reference, tolerance);
  if (type == "i32") return first_difference_as<std::int32_t>(candidate, reference, tolerance);
  if (type == "u8") return first_difference_as<std::uint8_t>(candidate, reference, tolerance);
  throw InputError("output type '" + type + "' (valid: f32, f64, i32, u8)");
}

Measure kernel_measure(std::shared_ptr<const KernelCandidates> candidates, DeviceFactory open_device,
                       KernelMeasureOptions options) {
  auto state = std::make_shared<MeasureState>();
  state->candidates = std::move(candidates);
  state->open_device = std::move(open_device);
  state->options = options;
  return [state](const Config& config, std::int64_t iteration) {
    const CompiledCandidate& candidate = state->candidates->at(config);
    if (candidate.ptx.empty()) throw InputError(candidate.failure); // before opening a device: nothing to load
    if (!state->device) state->device = state->open_device();
    if (!state->loaded || state->loaded_config != config.to_string()) {
      state->loaded.reset();
      state->loaded = std::make_unique<LoadedKernel>(*state->device, *state->candidates, candidate, state->options);
      state->loaded_config = config.to_string();
    }
    return state->loaded->run(iteration);
  };
}

} // namespace cachewise::tuner
