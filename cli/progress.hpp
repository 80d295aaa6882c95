// Progress of a long `advisor suggest --kernel` run on stderr: nothing for its first 2 s, then
// "advisor: compiled 12/50, simulated 40/82, 3.1 s elapsed, about 4 s left", rewritten in place
// on a terminal, else (with --progress) a line at most once a second.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>

namespace cachewise::cli {

class Progress {
public:
  /// `requested` (--progress) reports on any stderr; otherwise only on a terminal and when
  /// `wanted` (not --json): a script reading stderr gets one line for an error, nothing else.
  Progress(bool requested, bool wanted);
  ~Progress(); ///< ends a line rewritten in place
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Thread-safe: called from the compiling and simulating threads.
  void compiled(std::size_t done, std::size_t total);
  void simulated(std::size_t done, std::size_t total);

private:
  using Clock = std::chrono::steady_clock;
  void show(Clock::time_point now); ///< with mutex_ held

  bool enabled_;
  bool terminal_;
  std::mutex mutex_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point stage_start_ = start_; ///< when the current stage (compiling, simulating) began
  Clock::time_point last_shown_{};
  bool shown_ = false;
  std::size_t compiled_ = 0, compile_total_ = 0, simulated_ = 0, simulate_total_ = 0;
};

} // namespace cachewise::cli
