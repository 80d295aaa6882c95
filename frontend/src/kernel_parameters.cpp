// Kernel arguments: where the buffers lie in the traced address space, and which value each
// of the entry's parameters receives.
#include <algorithm>

#include "cachewise/frontend/kernel_advisor.hpp"

namespace cachewise::frontend {
namespace {

constexpr std::uint64_t kFirstBufferAddress = std::uint64_t{1} << 30;
constexpr std::uint64_t kBufferAlignmentBytes = std::uint64_t{1} << 20;

std::string listed(const std::vector<SourceParameter>& parameters) {
  std::string text;
  for (const SourceParameter& parameter : parameters) text += (text.empty() ? "" : ", ") + parameter.name;
  return text;
}

std::vector<std::uint64_t> values_by_name(const std::vector<SourceParameter>& parameters, const KernelSpec& spec,
                                          const CandidateLaunch& launch, const std::vector<std::uint64_t>& bases) {
  for (const BufferSpec& buffer : spec.buffers) {
    if (std::ranges::none_of(parameters, [&](const SourceParameter& p) { return p.pointer && p.name == buffer.name; })) {
      throw InputError("--buffer " + buffer.name + ": the entry has no pointer parameter '" + buffer.name +
                       "' (parameters: " + listed(parameters) + ")");
    }
  }
  std::vector<std::uint64_t> values;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const SourceParameter& parameter = parameters[i];
    const std::string position = std::to_string(i + 1);
    const std::string shown = parameter.name.empty() ? "#" + position : "'" + parameter.name + "'"; // unnamed: by position
    if (parameter.pointer) {
      const auto buffer = std::ranges::find(spec.buffers, parameter.name, &BufferSpec::name);
      if (buffer == spec.buffers.end()) {
        throw InputError("kernel parameter " + shown + " is a pointer with no buffer: give --buffer " +
                         (parameter.name.empty() ? "NAME" : parameter.name) + "=BYTES");
      }
      values.push_back(bases[static_cast<std::size_t>(buffer - spec.buffers.begin())]);
      continue;
    }
    const auto value = launch.bindings.find(parameter.name);
    if (value == launch.bindings.end()) {
      throw InputError("kernel parameter " + shown + " has no value: give --arg " + (parameter.name.empty() ? "NAME" : parameter.name) +
                       "=N (or a --param of that name)");
    }
    values.push_back(static_cast<std::uint64_t>(value->second));
  }
  return values;
}

std::vector<std::uint64_t> values_in_order(const std::vector<int>& parameter_bytes, const KernelSpec& spec,
                                           const std::vector<std::uint64_t>& bases) {
  std::vector<std::uint64_t> values;
  std::size_t next_buffer = 0, next_arg = 0;
  for (const int bytes : parameter_bytes) {
    if (bytes == 8 && next_buffer < bases.size()) {
      values.push_back(bases[next_buffer++]);
    } else if (next_arg < spec.args.size()) {
      values.push_back(static_cast<std::uint64_t>(spec.args[next_arg++].value));
    } else {
      throw InputError("the entry's parameters could not be read from the source, and its " + std::to_string(parameter_bytes.size()) +
                       " parameters outnumber the " + std::to_string(bases.size()) + " buffers and " +
                       std::to_string(spec.args.size()) + " args given (in order)");
    }
  }
  return values;
}

} // namespace

std::vector<std::uint64_t> buffer_base_addresses(const std::vector<std::int64_t>& buffer_bytes) {
  std::vector<std::uint64_t> bases;
  std::uint64_t next = kFirstBufferAddress;
  for (const std::int64_t bytes : buffer_bytes) {
    bases.push_back(next);
    const std::uint64_t rounded = (static_cast<std::uint64_t>(bytes) + kBufferAlignmentBytes - 1) / kBufferAlignmentBytes * kBufferAlignmentBytes;
    if (__builtin_add_overflow(next, rounded, &next)) throw InputError("--buffer: the buffers do not fit a 64-bit address space");
  }
  return bases;
}

std::vector<std::uint64_t> kernel_parameter_values(const std::vector<int>& parameter_bytes,
                                                   const std::optional<std::vector<SourceParameter>>& source_parameters,
                                                   const KernelSpec& spec, const CandidateLaunch& launch,
                                                   const std::vector<std::uint64_t>& buffer_bases) {
  if (source_parameters && source_parameters->size() == parameter_bytes.size()) {
    return values_by_name(*source_parameters, spec, launch, buffer_bases);
  }
  return values_in_order(parameter_bytes, spec, buffer_bases);
}

} // namespace cachewise::frontend
