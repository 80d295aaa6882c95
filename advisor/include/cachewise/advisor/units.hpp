// Human units for text output: byte sizes in B, KiB, MiB, GiB and times in µs, or ms where
// large. One time unit for every command's text, always labelled.
#pragma once

#include <string>

namespace cachewise::advisor {

/// "512 B", "16 KiB", "1.5 MiB", "139.8 GiB": binary units, one decimal unless whole.
std::string bytes_text(double bytes);

/// The unit a column of times is shown in: µs below 10 ms, else ms.
struct TimeUnit {
  const char* name; ///< "µs" or "ms"
  double us_per_unit;
};
TimeUnit time_unit_for(double largest_us);

/// `us` in `unit` with two decimals, without the unit ("39.20").
std::string time_value(double us, TimeUnit unit);

/// `us` in its own unit, labelled: "39.20 µs", "102.35 ms".
std::string time_text(double us);

} // namespace cachewise::advisor
