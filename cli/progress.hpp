// Progress of a long `advisor suggest --kernel` run on stderr: nothing for its first 2 s, then
// "advisor: compiled 12/50, simulated 40/82, 3.1 s elapsed, about 4 s left", rewritten in place
// on a terminal, else (with --progress) a line at most once a second; --progress reports from
// the start. A run that reported ends with its final counts.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>

namespace cachewise::cli {

class Progress {
public:
  /// `requested` (--progress) reports on any stderr from the start; otherwise only on a
  /// terminal, after 2 s and when `wanted` (not --json): a script reading stderr gets one line
  /// for an error, nothing else.
  Progress(bool requested, bool wanted);
  ~Progress(); ///< when anything was shown: the final counts (unless the last line had them), a line ended
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Thread-safe: called from the compiling and simulating threads.
  void compiled(std::size_t done, std::size_t total);
  void simulated(std::size_t done, std::size_t total);

private:
  using Clock = std::chrono::steady_clock;
  void show(Clock::time_point now);  ///< with mutex_ held
  void print(Clock::time_point now); ///< with mutex_ held

  bool enabled_;
  bool terminal_;
  Clock::duration quiet_for_;
  std::mutex mutex_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point stage_start_ = start_; ///< when the current stage (compiling, simulating) began
  Clock::time_point last_shown_{};
  bool shown_ = false;
  std::size_t shown_compiled_ = 0, shown_simulated_ = 0; ///< the counts the last line printed
  std::size_t compiled_ = 0, compile_total_ = 0, simulated_ = 0, simulate_total_ = 0;
};

} // namespace cachewise::cli
