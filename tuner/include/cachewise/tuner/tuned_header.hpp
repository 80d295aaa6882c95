// cachewise::tuner generated headers: a tuned (or statically recommended) config per size bucket
// as a self-contained C++17 header.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cachewise/problem.hpp"
#include "cachewise/tuner/results.hpp"

namespace cachewise::tuner {

/// One size bucket of a generated header.
struct TunedEntry {
  ProblemSpec problem;
  Config config;
  bool measured = false; ///< false: the advisor's static (model-predicted) recommendation
  double time_ms = 0.0;  ///< measured median, or the model's predicted time
  std::string note;      ///< one line for the comment: samples, interval, candidates evaluated
};

/// The entry for a finished run; throws InputError when every candidate failed.
TunedEntry tuned_entry(const TuningResult& result);

struct HeaderInfo {
  std::string device_name;  ///< the measured device, or the profile's device for a static header
  std::string profile;      ///< profile file used to rank candidates
  std::string strategy;
  std::string generated_by; ///< the command line that produced it
};

/// A self-contained C++17 header: namespace cachewise_tuned::<family>_<dtype> with a constexpr
/// struct per size bucket, `config_for(n)` returning the bucket closest to n on a log scale,
/// the device name, times and profile in comments, and the macro
/// CACHEWISE_TUNED_<FAMILY>_<DTYPE>_FROM_MEASUREMENT (1 measured, 0 static recommendation).
/// Throws InputError for no entries, mixed families/dtypes/keys, or duplicate sizes.
std::string render_header(std::vector<TunedEntry> entries, const HeaderInfo& info);

/// Writes `text` atomically (temporary file in the same folder, then rename).
void write_text_file(const std::filesystem::path& path, const std::string& text);

} // namespace cachewise::tuner
