// Results JSON and the generated C++ header.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/results.hpp"
#include "cachewise/tuner/tuned_header.hpp"
#include "header_parts.hpp"

namespace cachewise::tuner {
namespace {

nlohmann::json finite_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

} // namespace

namespace header_parts {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string cpp_string_literal(const std::string& text) {
  std::string literal = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') literal += '\\';
    literal += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return literal + "\"";
}

std::string one_line(std::string text) {
  std::ranges::replace(text, '\n', ' ');
  std::ranges::replace(text, '\r', ' ');
  return text;
}

std::string upper(std::string text) {
  std::ranges::transform(text, text.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

bool is_identifier(const std::string& text) {
  static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(text, identifier);
}

} // namespace header_parts

using namespace header_parts;

nlohmann::json results_to_json(const TuningResult& result) {
  nlohmann::json evaluations = nlohmann::json::array();
  for (const Evaluation& e : result.evaluations) {
    nlohmann::json item = {
        {"config", e.config.to_string()}, {"ok", e.ok}, {"rounds", e.rounds}, {"from_journal", e.from_journal}};
    if (e.ok) {
      item["median_ms"] = e.time_ms.median;
      item["ci_low_ms"] = finite_or_null(e.time_ms.ci_low);
      item["ci_high_ms"] = finite_or_null(e.time_ms.ci_high);
      item["samples"] = e.samples_ms.size();
      item["converged"] = e.converged;
    } else {
      item["failure"] = e.failure;
    }
    if (e.predicted) item["predicted"] = *e.predicted;
    if (!e.device.name.empty()) item["device"] = device_to_json(e.device);
    evaluations.push_back(std::move(item));
  }
  nlohmann::json json = {{"problem",
                          {{"family", result.problem.family},
                           {"n", result.problem.n},
                           {"m", result.problem.m},
                           {"k", result.problem.k},
                           {"dtype", to_string(result.problem.dtype)}}},
                         {"strategy", result.strategy},
                         {"space_size", result.space_size},
                         {"unconstrained_size", result.unconstrained_size},
                         {"stop_reason", result.stop_reason},
                         {"evaluations", std::move(evaluations)}};
  if (const Evaluation* best = result.best_evaluation()) {
    json["best"] = {{"config", best->config.to_string()}, {"median_ms", best->time_ms.median}};
  } else {
    json["best"] = nullptr;
  }
  return json;
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path temporary = path;
  temporary += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw InputError(path.string() + ": cannot write");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary);
    throw InputError(path.string() + ": cannot write: " + error.message());
  }
}

void save_results_json(const TuningResult& result, const std::filesystem::path& path) {
  write_text_file(path, results_to_json(result).dump(2) + '\n');
}

TunedEntry tuned_entry(const TuningResult& result) {
  const Evaluation* best = result.best_evaluation();
  if (best == nullptr) {
    throw InputError("tuning " + result.problem.family + " n=" + std::to_string(result.problem.n) +
                     ": every evaluated candidate failed");
  }
  const auto failed = std::ranges::count_if(result.evaluations, [](const Evaluation& e) { return !e.ok; });
  std::ostringstream note;
  note << "median of " << best->samples_ms.size() << " samples, "
       << "CI [" << number_text(best->time_ms.ci_low) << ", " << number_text(best->time_ms.ci_high) << "] ms; "
       << result.evaluations.size() << " of " << result.space_size << " candidates evaluated (" << result.strategy
       << ", " << result.stop_reason << ")";
  if (failed > 0) note << ", " << failed << " failed";
  return {result.problem, best->config, true, best->time_ms.median, note.str()};
}

namespace header_parts {

std::vector<std::string> config_keys(const Config& config) {
  std::vector<std::string> names;
  for (const auto& [key, value] : config.values()) names.push_back(key);
  return names;
}

std::string bucket_name(const HeaderBucket& bucket) {
  if (bucket.sizes.empty()) return "fixed"; // sizes that are compile-time constants of the kernel
  std::string name;
  for (const auto& [key, value] : bucket.sizes) name += (name.empty() ? "" : "_") + key + std::to_string(value);
  return name;
}

std::string bucket_label(const HeaderBucket& bucket) {
  if (!bucket.label.empty()) return bucket.label;
  if (bucket.sizes.empty()) return "sizes fixed in the kernel";
  std::string label;
  for (const auto& [key, value] : bucket.sizes)
    label += (label.empty() ? "" : ", ") + key + " = " + std::to_string(value);
  return label;
}

void check_buckets(const std::string& scope, const std::vector<HeaderBucket>& buckets) {
  if (buckets.empty()) throw InputError("tuned header: no entries");
  if (!is_identifier(scope)) throw InputError("tuned header: '" + scope + "' is not an identifier");
  const HeaderBucket& first = buckets.front();
  const std::vector<std::string> keys = config_keys(first.config);
  std::set<std::string> size_keys, names;
  for (const auto& [key, value] : first.sizes) {
    if (!is_identifier(key) || key == "time_ms")
      throw InputError("tuned header: size key '" + key + "' cannot be a C++ member name");
    if (value < 1) throw InputError("tuned header: size " + key + " = " + std::to_string(value) + " must be positive");
    size_keys.insert(key);
  }
  if (size_keys.size() != first.sizes.size()) throw InputError("tuned header: bucket size keys repeated");
  if (size_keys.empty() && buckets.size() > 1)
    throw InputError("tuned header: several buckets need size keys to tell them apart");
  for (const HeaderBucket& bucket : buckets) {
    if (bucket.measured != first.measured) throw InputError("tuned header: entries mix measured and static configs");
    std::vector<std::string> bucket_keys;
    for (const auto& [key, value] : bucket.sizes) bucket_keys.push_back(key);
    std::vector<std::string> first_keys;
    for (const auto& [key, value] : first.sizes) first_keys.push_back(key);
    if (bucket_keys != first_keys) throw InputError("tuned header: buckets have different size keys");
    if (!names.insert(bucket_name(bucket)).second)
      throw InputError("tuned header: size " + bucket_label(bucket) + " twice");
    if (config_keys(bucket.config) != keys) throw InputError("tuned header: entries have different config keys");
  }
  for (const std::string& key : keys) {
    if (!is_identifier(key) || size_keys.contains(key) || key == "time_ms") {
      throw InputError("tuned header: config key '" + key + "' cannot be a C++ member name");
    }
  }
}

/// config_for over one size key: boundaries at the geometric means of neighbouring sizes.
void write_one_key_lookup(std::ostringstream& out, const std::vector<HeaderBucket>& buckets) {
  const std::string& key = buckets.front().sizes.front().first;
  out << "/// The entry tuned for the size closest to " << key << " on a log scale.\n"
      << "constexpr const Config& config_for(std::int64_t " << key << ") {\n";
  for (std::size_t i = 0; i + 1 < buckets.size(); ++i) {
    const auto boundary =
        static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(buckets[i].sizes.front().second) *
                                                      static_cast<double>(buckets[i + 1].sizes.front().second))));
    out << "  if (" << key << " < " << boundary << ") return " << bucket_name(buckets[i]) << ";\n";
  }
  out << "  return " << bucket_name(buckets.back()) << ";\n}\n\n";
}

/// config_for over several size keys: the least product of ratios, computed at compile time.
void write_many_key_lookup(std::ostringstream& out, const std::vector<HeaderBucket>& buckets) {
  out << "constexpr double size_ratio(std::int64_t a, std::int64_t b) {\n"
      << "  const double x = a < 1 ? 1.0 : static_cast<double>(a), y = static_cast<double>(b);\n"
      << "  return x > y ? x / y : y / x;\n}\n\n"
      << "inline constexpr const Config* configs[] = {";
  for (std::size_t i = 0; i < buckets.size(); ++i) out << (i ? ", " : "") << "&" << bucket_name(buckets[i]);
  out << "};\n\n/// The entry tuned for the sizes closest to these on a log scale.\nconstexpr const Config& "
         "config_for(";
  const auto& sizes = buckets.front().sizes;
  for (std::size_t i = 0; i < sizes.size(); ++i) out << (i ? ", " : "") << "std::int64_t " << sizes[i].first;
  out << ") {\n  const Config* best = configs[0];\n  double best_distance = -1.0;\n"
      << "  for (const Config* config : configs) {\n    const double distance = ";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    out << (i ? " * " : "") << "size_ratio(" << sizes[i].first << ", config->" << sizes[i].first << ")";
  }
  out << ";\n    if (best_distance < 0.0 || distance < best_distance) {\n      best = config;\n      best_distance = "
         "distance;\n"
      << "    }\n  }\n  return *best;\n}\n\n";
}

void sort_by_sizes(std::vector<HeaderBucket>& buckets) {
  std::ranges::sort(buckets, {}, [](const HeaderBucket& b) {
    std::vector<std::int64_t> sizes;
    for (const auto& [key, value] : b.sizes) sizes.push_back(value);
    return sizes;
  });
}

void write_config_struct(std::ostringstream& out, const std::vector<HeaderBucket>& buckets) {
  out << "struct Config {\n";
  for (const auto& [key, value] : buckets.front().sizes)
    out << "  std::int64_t " << key << "; // a size this entry was tuned for\n";
  for (const std::string& key : config_keys(buckets.front().config)) out << "  std::int64_t " << key << ";\n";
  out << "  double time_ms; // " << (buckets.front().measured ? "measured median" : "model-predicted time")
      << "\n};\n\n";
}

void write_entries_and_lookup(std::ostringstream& out, const std::vector<HeaderBucket>& buckets) {
  for (const HeaderBucket& bucket : buckets) {
    out << "// " << bucket_label(bucket) << ": " << (bucket.measured ? "measured " : "predicted ")
        << number_text(bucket.time_ms) << " ms";
    if (!bucket.note.empty()) out << "; " << one_line(bucket.note);
    out << "\ninline constexpr Config " << bucket_name(bucket) << "{";
    bool first = true;
    for (const auto& [key, value] : bucket.sizes) {
      out << (first ? "" : ", ") << "/*" << key << "*/ " << value;
      first = false;
    }
    for (const auto& [key, value] : bucket.config.values()) {
      out << (first ? "" : ", ") << "/*" << key << "*/ " << value;
      first = false;
    }
    out << ", /*time_ms*/ " << number_text(bucket.time_ms) << "};\n";
  }
  out << "\n";
  if (buckets.front().sizes.empty()) {
    out << "/// The one entry: the kernel's sizes are compile-time constants.\n"
        << "constexpr const Config& config_for() { return " << bucket_name(buckets.front()) << "; }\n\n";
  } else if (buckets.front().sizes.size() == 1) {
    write_one_key_lookup(out, buckets);
  } else {
    write_many_key_lookup(out, buckets);
  }
}

} // namespace header_parts

std::string render_bucket_header(const std::string& scope, std::vector<HeaderBucket> buckets, const HeaderInfo& info) {
  check_buckets(scope, buckets);
  sort_by_sizes(buckets);
  const std::string prefix = "CACHEWISE_TUNED_" + upper(scope);
  const bool measured = buckets.front().measured;
  std::ostringstream out;
  out << "// Generated by cachewise (advisor tune). Do not edit: regenerate instead.\n"
      << "//   " << one_line(info.generated_by) << "\n"
      << "// Device:   " << one_line(info.device_name) << "\n"
      << "// Profile:  " << one_line(info.profile) << "\n"
      << "// Strategy: " << one_line(info.strategy) << "\n";
  if (measured) {
    out << "// Source:   measured on the device; times are medians of timed launches.\n";
  } else {
    out << "// Source:   STATIC RECOMMENDATION, NOT MEASURED: no GPU was available when this was\n"
        << "//           generated, so each config is the advisor's model-predicted best and each\n"
        << "//           time is the model's prediction. Rebuild on a GPU machine to tune.\n";
  }
  out << "#pragma once\n\n#include <cstdint>\n\n"
      << "#define " << prefix << "_FROM_MEASUREMENT " << (measured ? 1 : 0) << "\n";
  for (const HeaderBucket& bucket : buckets) {
    for (const auto& [key, value] : bucket.config.values()) {
      out << "#define " << prefix << "_" << upper(bucket_name(bucket)) << "_" << upper(key) << ' ' << value << "\n";
    }
  }
  out << "\nnamespace cachewise_tuned::" << scope << " {\n\n"
      << "inline constexpr const char* device_name = " << cpp_string_literal(info.device_name) << ";\n"
      << "inline constexpr bool from_measurement = " << (measured ? "true" : "false") << ";\n\n";
  write_config_struct(out, buckets);
  write_entries_and_lookup(out, buckets);
  out << "} // namespace cachewise_tuned::" << scope << "\n";
  return out.str();
}

std::string render_header(std::vector<TunedEntry> entries, const HeaderInfo& info) {
  if (entries.empty()) throw InputError("tuned header: no entries");
  const TunedEntry& first = entries.front();
  std::vector<HeaderBucket> buckets;
  for (const TunedEntry& e : entries) {
    if (e.problem.family != first.problem.family || e.problem.dtype != first.problem.dtype) {
      throw InputError("tuned header: entries mix families or dtypes");
    }
    std::string label = "n = " + std::to_string(e.problem.n);
    if (e.problem.m != 0) label += ", m = " + std::to_string(e.problem.m);
    if (e.problem.k != 0) label += ", k = " + std::to_string(e.problem.k);
    buckets.push_back({{{"n", e.problem.n}}, label, e.config, e.measured, e.time_ms, e.note});
  }
  if (!is_identifier(first.problem.family))
    throw InputError("tuned header: family '" + first.problem.family + "' is not an identifier");
  return render_bucket_header(first.problem.family + "_" + to_string(first.problem.dtype), std::move(buckets), info);
}

} // namespace cachewise::tuner
