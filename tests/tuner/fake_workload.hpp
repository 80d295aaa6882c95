// A fake workload for tuner tests: the "kernel time" is a known function of the config, so
// every expected pick can be derived by hand.
#pragma once

#include "cachewise/tuner.hpp"

namespace cachewise::tuner::testing {

/// a in {1,2,3,4}, b in {1,2,3}, constraint a*b <= 9 (drops a=4,b=3): 11 candidates.
inline SearchSpace fake_space() {
  SearchSpace space;
  space.add_parameter("a", {1, 2, 3, 4});
  space.add_parameter("b", {1, 2, 3});
  space.add_constraint(
      {"a", "b"}, [](const Config& c) { return c.get("a") * c.get("b") <= 9; }, "a*b <= 9");
  return space;
}

/// 1 + (a-3)^2 + 0.5 (b-2)^2 ms: best a=3,b=2 (1 ms); next a=3,b=1|3 (1.5 ms), a=2|4,b=2 (2 ms).
inline double fake_time_ms(const Config& config) {
  const double a = static_cast<double>(config.get("a"));
  const double b = static_cast<double>(config.get("b"));
  return 1.0 + (a - 3) * (a - 3) + 0.5 * (b - 2) * (b - 2);
}

inline ProblemSpec fake_problem() { return {"fake", 1024, 0, 0, DataType::f32}; }

} // namespace cachewise::tuner::testing
