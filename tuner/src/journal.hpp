// The JSON-lines journal: one header line naming the run, then one line per evaluation round,
// each written and fsync'ed as it finishes, so a run killed at any moment loses at most the
// evaluation in flight.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cachewise/model/problem.hpp"
#include "cachewise/tuner/execution.hpp"

namespace cachewise::tuner {

class Journal {
public:
  /// Opens `path` for appending, creating it with a header line for `identity`. An existing
  /// journal must carry the same identity (InputError otherwise); a truncated last line (the
  /// run was killed mid-write) is cut off; any other malformed line is an InputError.
  Journal(std::filesystem::path path, const nlohmann::json& identity);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const RoundRecord* find(const Config& config, int round) const;
  /// Appends one line and fsyncs it before returning.
  void append(const RoundRecord& record);

private:
  void write_line(const nlohmann::json& json);

  std::filesystem::path path_;
  int fd_ = -1;
  std::map<std::pair<std::string, int>, RoundRecord> records_;
};

} // namespace cachewise::tuner
