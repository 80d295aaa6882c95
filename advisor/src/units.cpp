#include "cachewise/advisor/units.hpp"

#include <array>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace cachewise::advisor {

std::string bytes_text(double bytes) {
  static constexpr std::array<const char*, 4> kUnits = {"B", "KiB", "MiB", "GiB"};
  std::size_t unit = 0;
  double value = bytes;
  while (unit + 1 < kUnits.size() && std::abs(value) >= 1024.0) {
    value /= 1024.0;
    ++unit;
  }
  std::ostringstream out;
  const bool whole = std::abs(value - std::round(value)) < 0.05;
  out << std::fixed << std::setprecision(unit == 0 || whole ? 0 : 1) << value << ' ' << kUnits[unit];
  return out.str();
}

TimeUnit time_unit_for(double largest_us) {
  constexpr double kMillisecondFromUs = 10'000.0; // 10 ms: five digits of µs are still easy to read
  return largest_us >= kMillisecondFromUs ? TimeUnit{"ms", 1000.0} : TimeUnit{"µs", 1.0};
}

std::string time_value(double us, TimeUnit unit) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << us / unit.us_per_unit;
  return out.str();
}

std::string time_text(double us) {
  const TimeUnit unit = time_unit_for(us);
  return time_value(us, unit) + ' ' + unit.name;
}

} // namespace cachewise::advisor
