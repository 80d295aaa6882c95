#include "probe_common.hpp"

#include <cmath>
#include <ctime>
#include <iomanip>
#include <sstream>

namespace cachewise::probe::detail {

std::string format_bytes(double bytes) {
  std::ostringstream out;
  out << std::setprecision(4);
  if (bytes >= kGiB) {
    out << bytes / kGiB << " GiB";
  } else if (bytes >= kMiB) {
    out << bytes / kMiB << " MiB";
  } else if (bytes >= kKiB) {
    out << bytes / kKiB << " KiB";
  } else {
    out << bytes << " B";
  }
  return out.str();
}

std::string format_number(double value, int precision) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::ostringstream out;
  out << std::put_time(&utc, "%Y-%m-%dT%H:%M:%SZ");
  return out.str();
}

Confidence agreement_confidence(double value, double other) {
  if (value <= 0.0 || other <= 0.0) return Confidence::low;
  const double difference = std::abs(value - other) / value;
  if (difference <= 0.05) return Confidence::high;
  if (difference <= 0.15) return Confidence::medium;
  return Confidence::low;
}

} // namespace cachewise::probe::detail
