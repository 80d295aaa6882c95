#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/tuner.hpp"
#include "fake_workload.hpp"

namespace cachewise::tuner {
namespace {

class JournalTest : public ::testing::Test {
protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("cachewise-journal-" + std::to_string(::getpid()) + "-" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
    journal_ = directory_ / "tune.jsonl";
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  TuningResult run(std::map<std::string, int>& calls_per_config, ProblemSpec problem = testing::fake_problem()) {
    Tuner tuner(problem, testing::fake_space());
    tuner.set_measure([&](const Config& c, std::int64_t iteration) {
      if (iteration == 0) ++calls_per_config[c.to_string()];
      return testing::fake_time_ms(c);
    });
    Options options;
    options.isolation = Isolation::in_process;
    options.measurement.warmup_runs = 1;
    options.measurement.min_repeats = 4;
    options.journal = journal_;
    tuner.set_options(options);
    return tuner.tune();
  }

  std::vector<std::string> lines() const {
    std::ifstream in(journal_);
    std::vector<std::string> result;
    for (std::string line; std::getline(in, line);) result.push_back(line);
    return result;
  }

  std::filesystem::path directory_;
  std::filesystem::path journal_;
};

TEST_F(JournalTest, WritesAHeaderAndOneLinePerEvaluation) {
  std::map<std::string, int> calls;
  run(calls);
  const std::vector<std::string> written = lines();
  ASSERT_EQ(written.size(), 12u);
  EXPECT_EQ(nlohmann::json::parse(written[0])["run"]["family"], "fake");
  const nlohmann::json first = nlohmann::json::parse(written[1]);
  EXPECT_EQ(first["config"], "a=1,b=1");
  EXPECT_EQ(first["round"], 0);
  EXPECT_EQ(first["samples_ms"].size(), 6u); // the first count with a 95% interval
}

TEST_F(JournalTest, ACompleteJournalIsResumedWithoutMeasuring) {
  std::map<std::string, int> first_calls;
  const TuningResult first = run(first_calls);
  std::map<std::string, int> second_calls;
  const TuningResult second = run(second_calls);
  EXPECT_TRUE(second_calls.empty());
  EXPECT_EQ(results_to_json(second)["best"], results_to_json(first)["best"]);
  for (const Evaluation& e : second.evaluations) EXPECT_TRUE(e.from_journal);
  EXPECT_EQ(lines().size(), 12u);
}

TEST_F(JournalTest, ATruncatedLastLineIsDroppedAndItsCandidateMeasuredOnce) {
  std::map<std::string, int> calls;
  run(calls);
  // Keep the header and four records, then half of the fifth, as a kill mid-write leaves it.
  std::vector<std::string> written = lines();
  {
    std::ofstream out(journal_, std::ios::trunc);
    for (std::size_t i = 0; i < 5; ++i) out << written[i] << '\n';
    out << written[5].substr(0, written[5].size() / 2);
  }
  std::map<std::string, int> resumed_calls;
  const TuningResult resumed = run(resumed_calls);
  EXPECT_EQ(resumed_calls.size(), 7u); // 11 candidates - 4 journaled
  for (const auto& [config, count] : resumed_calls) EXPECT_EQ(count, 1) << config;
  for (std::size_t i = 1; i < 5; ++i) {
    EXPECT_FALSE(resumed_calls.contains(nlohmann::json::parse(written[i])["config"].get<std::string>()));
  }
  const std::vector<std::string> after = lines();
  ASSERT_EQ(after.size(), 12u);
  for (const std::string& line : after)
    EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << line;
  EXPECT_EQ(resumed.best_evaluation()->config, Config::parse("a=3,b=2"));
}

TEST_F(JournalTest, AJournalOfAnotherProblemIsRefused) {
  std::map<std::string, int> calls;
  run(calls);
  ProblemSpec other = testing::fake_problem();
  other.n = 2048;
  try {
    run(calls, other);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("journal belongs to another run"), std::string::npos) << e.what();
  }
}

TEST_F(JournalTest, AMalformedCompleteLineIsAnErrorNamingTheLine) {
  std::map<std::string, int> calls;
  run(calls);
  std::vector<std::string> written = lines();
  {
    std::ofstream out(journal_, std::ios::trunc);
    out << written[0] << '\n' << written[1] << '\n' << "{not json\n" << written[3] << '\n';
  }
  try {
    run(calls);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tune.jsonl:3: malformed journal line"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace cachewise::tuner
