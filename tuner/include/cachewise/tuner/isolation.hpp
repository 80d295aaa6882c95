// cachewise::tuner process isolation, also for CUDA callers: CUDA cannot be used in a child
// forked after the parent initialised it, so a parent that forks candidates must do even its
// device queries through this.
#pragma once

#include <chrono>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

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

/// Several such children at once (one per GPU), from one thread: no fork from a
/// multithreaded parent.
class ChildProcesses {
public:
  ChildProcesses() = default;
  ~ChildProcesses(); ///< kills and reaps those still running
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;

  /// Forks a child running `work`; returns its ticket.
  std::uint64_t start(const std::function<std::string()>& work, std::chrono::milliseconds timeout);
  /// Waits until one child has finished (or passed its timeout: it is killed) and returns its
  /// ticket and outcome. Throws std::logic_error when none is running.
  std::pair<std::uint64_t, ChildOutcome> wait_any();
  std::size_t running() const { return children_.size(); }

private:
  struct Child {
    pid_t pid = -1;
    int fd = -1;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::milliseconds timeout{0};
    std::string received;
  };
  ChildOutcome finish(Child& child, bool timed_out);

  std::map<std::uint64_t, Child> children_;
  std::uint64_t next_ticket_ = 0;
};

} // namespace cachewise::tuner
