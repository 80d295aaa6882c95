// cachewise::tuner round record: one evaluation round of one candidate, as the journal holds it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cachewise/model/problem.hpp"
#include "cachewise/tuner/devices.hpp"

namespace cachewise::tuner {

/// One evaluation round of one candidate, as measured (or failed), and where.
struct RoundRecord {
  Config config;
  int round = 0; ///< 0 = first measurement, 1.. = contender re-measurement
  bool ok = false;
  std::string failure;
  std::vector<double> samples_ms;
  bool converged = false;
  MeasuringDevice device; ///< name empty: the default device, not identified
};

nlohmann::json round_to_json(const RoundRecord& record);
RoundRecord round_from_json(const nlohmann::json& json); ///< throws InputError naming the bad field

} // namespace cachewise::tuner
