#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "cachewise/tuner.hpp"

namespace cachewise::tuner {
namespace {

constexpr std::chrono::milliseconds kTimeout{5000};

TEST(RunInChildProcess, ReturnsTheChildsString) {
  const ChildOutcome outcome =
      run_in_child_process([] { return std::string("pid ") + std::to_string(::getpid()); }, kTimeout);
  ASSERT_TRUE(outcome.ok) << outcome.failure;
  EXPECT_NE(outcome.output, "pid " + std::to_string(::getpid())); // it really ran elsewhere
}

TEST(RunInChildProcess, ReportsAnException) {
  const ChildOutcome outcome =
      run_in_child_process([]() -> std::string { throw std::runtime_error("no such kernel"); }, kTimeout);
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.failure, "threw: no such kernel");
}

TEST(RunInChildProcess, ReportsASignal) {
  // SIG_DFL first: a sanitizer's handler would otherwise turn the signal into exit(1).
  const ChildOutcome outcome = run_in_child_process(
      []() -> std::string {
        std::signal(SIGSEGV, SIG_DFL);
        std::raise(SIGSEGV);
        return "unreachable";
      },
      kTimeout);
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.failure.rfind("killed by signal 11", 0), 0u) << outcome.failure;
}

TEST(RunInChildProcess, ReportsANonzeroExit) {
  const ChildOutcome outcome = run_in_child_process([]() -> std::string { ::_exit(3); }, kTimeout);
  EXPECT_EQ(outcome.failure, "exited with code 3");
}

TEST(RunInChildProcess, ReportsAnExitWithoutResult) {
  const ChildOutcome outcome = run_in_child_process([]() -> std::string { ::_exit(0); }, kTimeout);
  EXPECT_EQ(outcome.failure, "exited without a result");
}

TEST(RunInChildProcess, KillsAHangingChildAtTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const ChildOutcome outcome = run_in_child_process(
      []() -> std::string {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return "late";
      },
      std::chrono::milliseconds(200));
  EXPECT_EQ(outcome.failure, "timed out after 200 ms");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RunInChildProcess, CarriesLargeOutputs) {
  const ChildOutcome outcome = run_in_child_process([] { return std::string(1 << 20, 'x'); }, kTimeout);
  ASSERT_TRUE(outcome.ok) << outcome.failure;
  EXPECT_EQ(outcome.output.size(), std::size_t{1} << 20);
}

} // namespace
} // namespace cachewise::tuner
