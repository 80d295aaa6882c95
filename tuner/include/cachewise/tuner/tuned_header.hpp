// cachewise::tuner generated headers: a tuned (or statically recommended) config per size bucket
// as a self-contained C++17 header.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/model/problem.hpp"
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
  std::string device_name; ///< the measured device, or the profile's device for a static header
  std::string profile;     ///< profile file used to rank candidates
  std::string strategy;
  std::string generated_by; ///< the command line that produced it
};

/// One size bucket of any generated header: the sizes it was tuned for and its pick.
struct HeaderBucket {
  std::vector<std::pair<std::string, std::int64_t>> sizes; ///< {{"n", 1024}} or {{"width", 1024}, {"height", 512}}
  std::string label; ///< the comment's name of the bucket ("n = 1024, m = 8"); empty: from sizes
  Config config;
  bool measured = false;
  double time_ms = 0.0;
  std::string note;
};

/// The header of any tuned thing: namespace cachewise_tuned::<scope> with a constexpr Config
/// per bucket (named by its sizes, "width1024_height512"), macros per bucket
/// (CACHEWISE_TUNED_<SCOPE>_<BUCKET>_<KEY>) and CACHEWISE_TUNED_<SCOPE>_FROM_MEASUREMENT, and
/// config_for(sizes...) returning the bucket closest on a log scale: with one size key by
/// boundaries at the neighbours' geometric means, with several by the least product of
/// max(a/b, b/a) ratios (the L1 distance of the logs). A single bucket may have no sizes (a
/// kernel whose sizes are compile-time constants): it is named `fixed` and config_for() takes
/// no argument. Throws InputError for no buckets, mixed
/// keys or measured/static, duplicate sizes, or names that cannot be C++ identifiers.
std::string render_bucket_header(const std::string& scope, std::vector<HeaderBucket> buckets, const HeaderInfo& info);

/// A self-contained C++17 header: namespace cachewise_tuned::<family>_<dtype> with a constexpr
/// struct per size bucket, `config_for(n)` returning the bucket closest to n on a log scale,
/// the device name, times and profile in comments, and the macro
/// CACHEWISE_TUNED_<FAMILY>_<DTYPE>_FROM_MEASUREMENT (1 measured, 0 static recommendation).
/// Throws InputError for no entries, mixed families/dtypes/keys, or duplicate sizes.
std::string render_header(std::vector<TunedEntry> entries, const HeaderInfo& info);

/// Writes `text` atomically (temporary file in the same folder, then rename).
void write_text_file(const std::filesystem::path& path, const std::string& text);

} // namespace cachewise::tuner
