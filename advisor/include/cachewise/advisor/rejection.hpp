// cachewise::advisor::Rejection — a config dropped before ranking, and the stage that dropped it.
#pragma once

#include <string>

#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// Where a config was rejected, in check order: build_pattern's family rules, the global
/// arrays against device memory, check_fits_device's limits, then residency (blocks_per_sm).
/// A compiled candidate (a user kernel) can also fail to compile, before any other check, and
/// be too long to trace (TraceLimitError), when admitted or when predicted, after every check.
enum class RejectionStage { compile, family_rules, device_memory, device_limits, occupancy, trace };
std::string to_string(RejectionStage stage);

struct Rejection {
  RejectionStage stage = RejectionStage::family_rules;
  Config config;
  std::string message;
};

} // namespace cachewise::advisor
