// One header over results tuned on several GPU models: a namespace per device, a fallback,
// and selection by macro, device name or compute capability.
#include <cctype>
#include <set>

#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/merged_header.hpp"
#include "cachewise/tuner/tune_results.hpp"
#include "header_parts.hpp"

namespace cachewise::tuner {
namespace {

using namespace header_parts;

TunedResults tuned_results(const TuneResults& file, const std::string& source) {
  TunedResults results;
  results.source = source;
  results.scope = file.scope;
  results.parameters = file.parameters;
  results.measured = file.measured;
  results.device_name = file.device_name;
  results.compute_capability = file.compute_capability;
  results.profile = file.profile;
  for (const TunedSize& size : file.sizes) {
    results.buckets.push_back({size.sizes, {}, size.pick.config, results.measured, size.pick.time_ms, size.note});
    if (size.static_pick) {
      results.static_buckets.push_back({size.sizes,
                                        {},
                                        size.static_pick->config,
                                        false,
                                        size.static_pick->time_ms,
                                        "the model's pick on " + results.profile});
    }
  }
  if (results.static_buckets.size() != results.buckets.size()) results.static_buckets.clear();
  return results;
}

std::string size_keys_text(const TunedResults& results) {
  std::string text;
  for (const auto& [key, value] : results.buckets.front().sizes) text += (text.empty() ? "" : ", ") + key;
  return text;
}

/// The reasons merge-tuned refuses its inputs.
void check_mergeable(const std::vector<TunedResults>& results) {
  const TunedResults& first = results.front();
  std::set<std::string> devices;
  for (const TunedResults& r : results) {
    if (r.scope != first.scope) {
      throw InputError("merge-tuned: " + r.source + " tunes " + r.scope + ", " + first.source + " " + first.scope +
                       ": results of different kernels");
    }
    if (r.parameters != first.parameters) {
      throw InputError("merge-tuned: " + r.source + " has another parameter space (" + r.parameters.dump() + ") than " +
                       first.source + " (" + first.parameters.dump() + ")");
    }
    if (size_keys_text(r) != size_keys_text(first)) {
      throw InputError("merge-tuned: " + r.source + "'s buckets are sized by " + size_keys_text(r) + ", " +
                       first.source + "'s by " + size_keys_text(first));
    }
    if (r.measured && !devices.insert(device_target_name(r.device_name)).second) {
      throw InputError("merge-tuned: two inputs hold results for " + r.device_name + " (" + r.source +
                       " is the second)");
    }
  }
  if (devices.empty())
    throw InputError("merge-tuned: no measured results among the inputs (advisor tune on a GPU writes them)");
}

std::string size_parameters(const std::vector<HeaderBucket>& buckets) {
  std::string text;
  for (const auto& [key, value] : buckets.front().sizes)
    text += (text.empty() ? "" : ", ") + std::string("std::int64_t ") + key;
  return text;
}

std::string size_arguments(const std::vector<HeaderBucket>& buckets) {
  std::string text;
  for (const auto& [key, value] : buckets.front().sizes) text += (text.empty() ? "" : ", ") + key;
  return text;
}

void write_table(std::ostringstream& out, const std::string& name, const std::string& device_name,
                 int compute_capability, std::vector<HeaderBucket> buckets) {
  sort_by_sizes(buckets);
  out << "namespace " << name << " {\n"
      << "inline constexpr const char* device_name = " << cpp_string_literal(device_name) << ";\n"
      << "inline constexpr int compute_capability = " << compute_capability << ";\n"
      << "inline constexpr bool from_measurement = " << (buckets.front().measured ? "true" : "false") << ";\n\n";
  write_entries_and_lookup(out, buckets);
  out << "} // namespace " << name << "\n\n";
}

void write_macros(std::ostringstream& out, const std::string& scope, const std::vector<HeaderBucket>& buckets) {
  const std::string prefix = "CACHEWISE_TUNED_" + upper(scope);
  out << "#define " << prefix << "_FROM_MEASUREMENT " << (buckets.front().measured ? 1 : 0) << "\n";
  for (const HeaderBucket& bucket : buckets) {
    for (const auto& [key, value] : bucket.config.values()) {
      out << "#define " << prefix << "_" << upper(bucket_name(bucket)) << "_" << upper(key) << ' ' << value << "\n";
    }
  }
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

} // namespace

TunedResults read_tuned_results(const std::filesystem::path& path) {
  return tuned_results(read_tune_results(path), path.string());
}

std::string device_target_name(const std::string& device_name) {
  std::string name = device_name.rfind("NVIDIA ", 0) == 0 ? device_name.substr(7) : device_name;
  std::string target;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      target += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!target.empty() && target.back() != '_') {
      target += '_';
    }
  }
  while (!target.empty() && target.back() == '_') target.pop_back();
  if (target.empty() || std::isdigit(static_cast<unsigned char>(target.front()))) target = "GPU_" + target;
  return target;
}

std::string render_merged_header(const std::vector<TunedResults>& results, const std::string& generated_by) {
  if (results.empty()) throw InputError("merge-tuned: no inputs");
  check_mergeable(results);
  const TunedResults* fallback = nullptr;
  for (const TunedResults& r : results) {
    if (!r.static_buckets.empty()) {
      fallback = &r;
      break;
    }
  }
  if (fallback == nullptr)
    throw InputError("merge-tuned: no input carries the model's static recommendation for the fallback");
  const std::string& scope = results.front().scope;
  std::vector<const TunedResults*> measured;
  for (const TunedResults& r : results) {
    if (!r.measured) continue;
    check_buckets(scope, r.buckets);
    measured.push_back(&r);
  }
  check_buckets(scope, fallback->static_buckets);

  std::ostringstream out;
  out << "// Generated by cachewise (advisor merge-tuned). Do not edit: regenerate instead.\n"
      << "//   " << one_line(generated_by) << "\n";
  for (const TunedResults* r : measured) {
    out << "// Device:   " << one_line(r->device_name) << " (compute capability " << r->compute_capability << ", "
        << one_line(r->source) << "): -DCACHEWISE_TARGET_" << device_target_name(r->device_name) << "\n";
  }
  out << "// Fallback: the model's static recommendation on " << one_line(fallback->profile) << " ("
      << one_line(fallback->source) << "), NOT MEASURED, for any other device\n"
      << "#pragma once\n\n#include <cstdint>\n\nnamespace cachewise_tuned::" << scope << " {\n\n";
  write_config_struct(out, measured.front()->buckets);
  for (const TunedResults* r : measured) {
    write_table(out, lower(device_target_name(r->device_name)), r->device_name, r->compute_capability, r->buckets);
  }
  write_table(out, "fallback", "", 0, fallback->static_buckets);

  out << "// The table chosen at compile time: -DCACHEWISE_TARGET_<DEVICE>, else the fallback; its\n"
      << "// macros as the single-device header has them.\n";
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const std::string target = device_target_name(measured[i]->device_name);
    out << (i == 0 ? "#if" : "#elif") << " defined(CACHEWISE_TARGET_" << target
        << ")\nnamespace target = " << lower(target) << ";\n";
    write_macros(out, scope, measured[i]->buckets);
  }
  out << "#else\nnamespace target = fallback;\n";
  write_macros(out, scope, fallback->static_buckets);
  out << "#endif\n\n"
      << "constexpr bool same_name(const char* a, const char* b) {\n"
      << "  while (*a != '\\0' && *a == *b) {\n    ++a;\n    ++b;\n  }\n  return *a == *b;\n}\n\n";
  const std::vector<HeaderBucket>& any = fallback->static_buckets;
  out << "/// At run time, by the device's name as CUDA reports it (cudaDeviceProp::name).\n"
      << "constexpr const Config& config_for_device(const char* device_name, " << size_parameters(any) << ") {\n";
  for (const TunedResults* r : measured) {
    const std::string name = lower(device_target_name(r->device_name));
    out << "  if (same_name(device_name, " << name << "::device_name)) return " << name << "::config_for("
        << size_arguments(any) << ");\n";
  }
  out << "  return fallback::config_for(" << size_arguments(any) << ");\n}\n\n"
      << "/// At run time, by compute capability (90 for sm_90): the first tuned device that has it.\n"
      << "constexpr const Config& config_for_compute_capability(int compute_capability, " << size_parameters(any)
      << ") {\n";
  for (const TunedResults* r : measured) {
    if (r->compute_capability == 0) continue;
    const std::string name = lower(device_target_name(r->device_name));
    out << "  if (compute_capability == " << name << "::compute_capability) return " << name << "::config_for("
        << size_arguments(any) << ");\n";
  }
  out << "  return fallback::config_for(" << size_arguments(any) << ");\n}\n\n"
      << "} // namespace cachewise_tuned::" << scope << "\n";
  return out.str();
}

} // namespace cachewise::tuner
