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

#include "cachewise/errors.hpp"
#include "cachewise/tuner/results.hpp"
#include "cachewise/tuner/tuned_header.hpp"

namespace cachewise::tuner {
namespace {

nlohmann::json finite_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

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

} // namespace

nlohmann::json results_to_json(const TuningResult& result) {
  nlohmann::json evaluations = nlohmann::json::array();
  for (const Evaluation& e : result.evaluations) {
    nlohmann::json item = {{"config", e.config.to_string()}, {"ok", e.ok}, {"rounds", e.rounds}, {"from_journal", e.from_journal}};
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
  note << "median of " << best->samples_ms.size() << " samples, " << "CI [" << number_text(best->time_ms.ci_low) << ", "
       << number_text(best->time_ms.ci_high) << "] ms; " << result.evaluations.size() << " of " << result.space_size
       << " candidates evaluated (" << result.strategy << ", " << result.stop_reason << ")";
  if (failed > 0) note << ", " << failed << " failed";
  return {result.problem, best->config, true, best->time_ms.median, note.str()};
}

std::string render_header(std::vector<TunedEntry> entries, const HeaderInfo& info) {
  if (entries.empty()) throw InputError("tuned header: no entries");
  std::ranges::sort(entries, {}, [](const TunedEntry& e) { return e.problem.n; });
  const TunedEntry& first = entries.front();
  const std::vector<std::string> keys = [&] {
    std::vector<std::string> names;
    for (const auto& [key, value] : first.config.values()) names.push_back(key);
    return names;
  }();
  std::set<std::int64_t> sizes;
  for (const TunedEntry& e : entries) {
    if (e.problem.family != first.problem.family || e.problem.dtype != first.problem.dtype) {
      throw InputError("tuned header: entries mix families or dtypes");
    }
    if (e.measured != first.measured) throw InputError("tuned header: entries mix measured and static configs");
    if (!sizes.insert(e.problem.n).second) throw InputError("tuned header: size n=" + std::to_string(e.problem.n) + " twice");
    std::vector<std::string> entry_keys;
    for (const auto& [key, value] : e.config.values()) entry_keys.push_back(key);
    if (entry_keys != keys) throw InputError("tuned header: entries have different config keys");
  }
  for (const std::string& key : keys) {
    if (!is_identifier(key) || key == "n" || key == "time_ms") {
      throw InputError("tuned header: config key '" + key + "' cannot be a C++ member name");
    }
  }
  if (!is_identifier(first.problem.family)) throw InputError("tuned header: family '" + first.problem.family + "' is not an identifier");

  const std::string scope = first.problem.family + "_" + to_string(first.problem.dtype);
  const std::string macro = "CACHEWISE_TUNED_" + upper(scope) + "_FROM_MEASUREMENT";
  const bool measured = first.measured;
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
      << "#define " << macro << ' ' << (measured ? 1 : 0) << "\n\n"
      << "namespace cachewise_tuned::" << scope << " {\n\n"
      << "inline constexpr const char* device_name = " << cpp_string_literal(info.device_name) << ";\n"
      << "inline constexpr bool from_measurement = " << (measured ? "true" : "false") << ";\n\n"
      << "struct Config {\n"
      << "  std::int64_t n; // the problem size this entry was tuned for\n";
  for (const std::string& key : keys) out << "  std::int64_t " << key << ";\n";
  out << "  double time_ms; // " << (measured ? "measured median" : "model-predicted time") << "\n};\n\n";

  for (const TunedEntry& e : entries) {
    out << "// n = " << e.problem.n;
    if (e.problem.m != 0) out << ", m = " << e.problem.m;
    if (e.problem.k != 0) out << ", k = " << e.problem.k;
    out << ": " << (measured ? "measured " : "predicted ") << number_text(e.time_ms) << " ms";
    if (!e.note.empty()) out << "; " << one_line(e.note);
    out << "\ninline constexpr Config n" << e.problem.n << "{/*n*/ " << e.problem.n;
    for (const auto& [key, value] : e.config.values()) out << ", /*" << key << "*/ " << value;
    out << ", /*time_ms*/ " << number_text(e.time_ms) << "};\n";
  }
  out << "\n/// The entry tuned for the size closest to n on a log scale.\n"
      << "constexpr const Config& config_for(std::int64_t n) {\n";
  for (std::size_t i = 0; i + 1 < entries.size(); ++i) {
    // Geometric midpoint between neighbouring tuned sizes.
    const auto boundary = static_cast<std::int64_t>(std::ceil(
        std::sqrt(static_cast<double>(entries[i].problem.n) * static_cast<double>(entries[i + 1].problem.n))));
    out << "  if (n < " << boundary << ") return n" << entries[i].problem.n << ";\n";
  }
  out << "  return n" << entries.back().problem.n << ";\n}\n\n"
      << "} // namespace cachewise_tuned::" << scope << "\n";
  return out.str();
}

} // namespace cachewise::tuner
