// The pieces of a generated header that the single-device header (output.cpp) and the
// merged one (merged_header.cpp) share.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cachewise/tuner/tuned_header.hpp"

namespace cachewise::tuner::header_parts {

std::string number_text(double value); ///< %.6g
std::string cpp_string_literal(const std::string& text);
std::string one_line(std::string text);
std::string upper(std::string text);
bool is_identifier(const std::string& text);

std::string bucket_name(const HeaderBucket& bucket); ///< "width1024_height512"
/// Throws InputError as render_bucket_header documents.
void check_buckets(const std::string& scope, const std::vector<HeaderBucket>& buckets);
void sort_by_sizes(std::vector<HeaderBucket>& buckets);
/// struct Config {sizes..., config keys..., time_ms}.
void write_config_struct(std::ostringstream& out, const std::vector<HeaderBucket>& buckets);
/// A constexpr Config per bucket, then config_for(sizes...) picking the nearest.
void write_entries_and_lookup(std::ostringstream& out, const std::vector<HeaderBucket>& buckets);

} // namespace cachewise::tuner::header_parts
