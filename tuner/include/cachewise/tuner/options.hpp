// cachewise::tuner options: when a timing is trustworthy, how candidates are isolated, budget
// and journal.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "cachewise/tuner/devices.hpp"
#include "cachewise/tuner/round_record.hpp"

namespace cachewise::tuner {

/// When a candidate's timing is trustworthy enough.
struct MeasurementPolicy {
  int warmup_runs = 3;  ///< untimed calls first (code load, clocks, TLB)
  int min_repeats = 10; ///< timed calls before the confidence interval is looked at
  int max_repeats = 100;
  /// Stop repeating once the median's confidence interval is at most this fraction of the
  /// median wide (0.02: the interval spans 2% of the median).
  double max_ci_width_fraction = 0.02;
  double confidence = 0.95;
  /// Rounds of re-measuring the candidates whose interval overlaps the leader's before the
  /// pick; each round merges fresh samples (from a fresh child) into the old ones.
  int contender_rounds = 1;
  int max_contenders = 8;
};

enum class Isolation {
  child_process, ///< fork per evaluation: crashes, hangs and poisoned contexts stay in the child
  in_process,    ///< call the Measure directly: faster, for callables known to be safe
};

struct Options {
  MeasurementPolicy measurement;
  Isolation isolation = Isolation::child_process;
  std::chrono::milliseconds candidate_timeout{60'000}; ///< per evaluation (child_process only)
  std::int64_t budget = 0;                             ///< most candidates measured (contenders excluded); 0 = no cap
  std::filesystem::path journal;                       ///< JSON lines; empty = none. An existing one is resumed.
  /// Rounds measured before, elsewhere (a Kernel Tuner cache: cached_rounds): taken as journaled
  /// rounds are (the journal's own first), so they are not measured again.
  std::vector<RoundRecord> known_rounds;
  /// GPUs of one model measuring in parallel, one child each (the first re-measures the
  /// contenders); empty: the default device, one candidate at a time.
  std::vector<MeasuringDevice> devices;
};

} // namespace cachewise::tuner
