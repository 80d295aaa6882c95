#include "progress.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace cachewise::cli {
namespace {
constexpr std::chrono::seconds kQuietFor{2};
constexpr std::chrono::milliseconds kTerminalEvery{200};
constexpr std::chrono::seconds kLineEvery{1};
} // namespace

Progress::Progress(bool requested, bool wanted)
    : enabled_(requested || (wanted && ::isatty(STDERR_FILENO) == 1)),
      terminal_(::isatty(STDERR_FILENO) == 1),
      quiet_for_(requested ? Clock::duration::zero() : Clock::duration(kQuietFor)) {}

Progress::~Progress() {
  if (!shown_) return;
  if (shown_compiled_ != compiled_ || shown_simulated_ != simulated_) print(Clock::now());
  if (terminal_) std::cerr << '\n';
}

void Progress::compiled(std::size_t done, std::size_t total) {
  if (!enabled_) return;
  const std::scoped_lock lock(mutex_);
  compiled_ = std::max(compiled_, done);
  compile_total_ = total;
  show(Clock::now());
}

void Progress::simulated(std::size_t done, std::size_t total) {
  if (!enabled_) return;
  const std::scoped_lock lock(mutex_);
  const Clock::time_point now = Clock::now();
  if (simulate_total_ == 0) stage_start_ = now; // the first simulation: compiling is over
  simulated_ = std::max(simulated_, done);
  simulate_total_ = total;
  show(now);
}

void Progress::show(Clock::time_point now) {
  if (now - start_ < quiet_for_ ||
      now - last_shown_ < (terminal_ ? std::chrono::milliseconds(kTerminalEvery) : kLineEvery))
    return;
  print(now);
}

void Progress::print(Clock::time_point now) {
  last_shown_ = now;
  shown_ = true;
  shown_compiled_ = compiled_;
  shown_simulated_ = simulated_;
  using Seconds = std::chrono::duration<double>;
  // The current stage's rate so far gives its time left; the simulations' count is not known
  // while compiling.
  const bool simulating = simulate_total_ > 0;
  const std::size_t done = simulating ? simulated_ : compiled_;
  const std::size_t total = simulating ? simulate_total_ : compile_total_;
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << "advisor: compiled " << compiled_ << '/' << compile_total_
       << ", simulated " << simulated_ << '/' << (simulating ? std::to_string(simulate_total_) : std::string("?"))
       << ", " << Seconds(now - start_).count() << " s elapsed";
  if (done > 0 && done < total) {
    const double left =
        Seconds(now - stage_start_).count() / static_cast<double>(done) * static_cast<double>(total - done);
    line << ", about " << std::setprecision(0) << left << " s left" << (simulating ? "" : " to compile");
  }
  std::cerr << (terminal_ ? "\r" : "") << line.str() << (terminal_ ? "\033[K" : "\n") << std::flush;
}

} // namespace cachewise::cli
