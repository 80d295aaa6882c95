// Starts a journaled tuning run as a subprocess, kill -9s it mid-run, runs it again, and
// checks that every candidate ends up measured, none that was journaled is measured again,
// and the result is the one an uninterrupted run gives.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

pid_t start_helper(const std::filesystem::path& journal, const std::filesystem::path& log,
                   const std::filesystem::path& results) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(CACHEWISE_TUNER_RESUME_HELPER, CACHEWISE_TUNER_RESUME_HELPER, journal.c_str(), log.c_str(), results.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

std::set<std::string> journaled_configs(const std::filesystem::path& journal, std::size_t& records) {
  std::set<std::string> configs;
  records = 0;
  const std::vector<std::string> lines = read_lines(journal);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const nlohmann::json record = nlohmann::json::parse(lines[i], nullptr, false);
    if (record.is_discarded()) continue; // a line cut by the kill
    ++records;
    configs.insert(record["config"].get<std::string>());
  }
  return configs;
}

TEST(ResumeAfterKill, NothingLostNothingMeasuredTwice) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("cachewise-resume-" + std::to_string(::getpid()));
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  const auto journal = directory / "tune.jsonl";
  const auto log = directory / "starts.log";
  const auto results = directory / "results.json";

  // Run 1: kill -9 once three candidates are journaled.
  const pid_t first = start_helper(journal, log, results);
  ASSERT_GT(first, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::size_t records = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    journaled_configs(journal, records);
    if (records >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(first, &status, 0), first);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the run finished before it could be killed";
  const std::set<std::string> done_before_kill = journaled_configs(journal, records);
  ASSERT_GE(done_before_kill.size(), 3u);
  ASSERT_LT(done_before_kill.size(), 11u);
  EXPECT_FALSE(std::filesystem::exists(results));

  // Run 2: resumes from the journal.
  const pid_t second = start_helper(journal, log, results);
  ASSERT_EQ(::waitpid(second, &status, 0), second);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  std::size_t final_records = 0;
  const std::set<std::string> all = journaled_configs(journal, final_records);
  EXPECT_EQ(all.size(), 11u);
  EXPECT_EQ(final_records, 11u) << "a candidate was journaled twice";

  // Starts logged after the second "run" marker are run 2's: none may be a journaled one.
  const std::vector<std::string> starts = read_lines(log);
  std::size_t runs_seen = 0;
  std::set<std::string> started_in_second_run;
  for (const std::string& line : starts) {
    if (line.rfind("run ", 0) == 0) {
      ++runs_seen;
    } else if (runs_seen == 2) {
      EXPECT_TRUE(started_in_second_run.insert(line).second) << line << " started twice in run 2";
    }
  }
  EXPECT_EQ(runs_seen, 2u);
  for (const std::string& config : started_in_second_run) EXPECT_FALSE(done_before_kill.contains(config)) << config;
  EXPECT_EQ(started_in_second_run.size() + done_before_kill.size(), 11u);

  std::ifstream in(results);
  const nlohmann::json json = nlohmann::json::parse(in);
  EXPECT_EQ(json["best"]["config"], "a=3,b=2");
  EXPECT_DOUBLE_EQ(json["best"]["median_ms"].get<double>(), 1.0);
  EXPECT_EQ(json["evaluations"].size(), 11u);
  std::filesystem::remove_all(directory);
}

} // namespace
