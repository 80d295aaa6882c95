// cachewise::tuner process isolation, also for CUDA callers: CUDA cannot be used in a child
// forked after the parent initialised it, so a parent that forks candidates must do even its
// device queries through this.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace cachewise::tuner {

struct ChildOutcome {
  bool ok = false;
  std::string output;  ///< what `work` returned (ok only)
  std::string failure; ///< as in Evaluation::failure
};

/// Runs `work` in a forked child and returns its string, or why it failed: an exception, a
/// signal, a nonzero exit or the timeout (the child is then killed). The child dies with the
/// parent (Linux PR_SET_PDEATHSIG).
ChildOutcome run_in_child_process(const std::function<std::string()>& work, std::chrono::milliseconds timeout);

} // namespace cachewise::tuner
