// Internal to the compiler: running a compiler process without a shell, with its output
// captured and a deadline.
#pragma once

#include <string>
#include <vector>

namespace cachewise::frontend {

struct ProcessResult {
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  std::string output; ///< stdout and stderr together
};

/// Runs `arguments` (no shell) with stdout and stderr captured, killed after `timeout_seconds`.
ProcessResult run_process(const std::vector<std::string>& arguments, int timeout_seconds);

/// The error for a compiler process that did not finish on its own.
void check_process_finished(const ProcessResult& result, const std::string& tool, int timeout_seconds);

} // namespace cachewise::frontend
