// Tuning on several (fake) GPUs at once: every device measures a share, the journal names the
// device of each round, contenders are re-measured on the first device, and the pick is the
// serial run's.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/tuner.hpp"
#include "fake_gpus.hpp"
#include "fake_workload.hpp"

namespace cachewise::tuner {
namespace {

/// Three fake GPUs of one model with fake_workload's times, except a=2,b=2 at 1.0 ms, tying
/// the best (a=3,b=2): noise-free samples make point intervals, so only the tie overlaps the
/// leader and both are re-measured.
FakeDevices three_fakes() {
  FakeDevices fakes;
  for (int i = 0; i < 3; ++i)
    fakes.devices.push_back({{i, "Fake H200", "GPU-fake-" + std::to_string(i), 90, {}, -1}, 1.0, {}});
  for (const Config& config : testing::fake_space().enumerate())
    fakes.times_ms[config.to_string()] = testing::fake_time_ms(config);
  fakes.times_ms["a=2,b=2"] = 1.0;
  fakes.sleep_ms = 2.0; // rounds overlap
  return fakes;
}

Options options_on(std::vector<MeasuringDevice> devices, const std::filesystem::path& journal = {}) {
  Options options;
  options.measurement.warmup_runs = 1;
  options.measurement.min_repeats = 5;
  options.candidate_timeout = std::chrono::seconds(20);
  options.devices = std::move(devices);
  options.journal = journal;
  return options;
}

std::vector<MeasuringDevice> devices_of(const FakeDevices& fakes) {
  std::vector<MeasuringDevice> devices;
  for (const FakeDevice& fake : fakes.devices) devices.push_back(fake.device);
  return devices;
}

TuningResult tune_on(const std::vector<MeasuringDevice>& devices, const std::filesystem::path& journal = {}) {
  Tuner tuner(testing::fake_problem(), testing::fake_space());
  tuner.set_measure(fake_measure(three_fakes()));
  tuner.set_options(options_on(devices, journal));
  return tuner.tune();
}

std::filesystem::path scratch(const std::string& name) {
  const auto directory =
      std::filesystem::temp_directory_path() / ("cachewise-multi-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  return directory;
}

TEST(MultiDevice, EveryDeviceMeasuresAndThePickIsTheSerialOne) {
  const TuningResult serial = tune_on({});
  const TuningResult parallel = tune_on(devices_of(three_fakes()));
  // Exhaustive visits the space in order; a=2,b=2 comes first of the two 1.0 ms ties.
  ASSERT_NE(serial.best_evaluation(), nullptr);
  ASSERT_NE(parallel.best_evaluation(), nullptr);
  EXPECT_EQ(serial.best_evaluation()->config, Config::parse("a=2,b=2"));
  EXPECT_EQ(parallel.best_evaluation()->config, Config::parse("a=2,b=2"));
  ASSERT_EQ(parallel.evaluations.size(), 11u);
  std::set<int> measured_on;
  for (std::size_t i = 0; i < parallel.evaluations.size(); ++i) {
    const Evaluation& e = parallel.evaluations[i];
    EXPECT_EQ(e.config, serial.evaluations[i].config) << "visiting order kept";
    EXPECT_DOUBLE_EQ(e.time_ms.median, serial.evaluations[i].time_ms.median) << e.config.to_string();
    EXPECT_EQ(e.device.name, "Fake H200");
    measured_on.insert(e.device.index);
  }
  EXPECT_EQ(measured_on, (std::set<int>{0, 1, 2}));
}

TEST(MultiDevice, JournalNamesTheDeviceAndContendersUseTheFirst) {
  const auto directory = scratch("journal");
  const TuningResult result = tune_on(devices_of(three_fakes()), directory / "tune.jsonl");
  std::ifstream in(directory / "tune.jsonl");
  std::string line;
  std::getline(in, line); // header
  std::set<std::string> first_round_uuids;
  std::set<std::string> contenders;
  while (std::getline(in, line)) {
    const nlohmann::json record = nlohmann::json::parse(line);
    ASSERT_TRUE(record.contains("device")) << line;
    EXPECT_EQ(record["device"]["name"], "Fake H200");
    if (record["round"] == 0) {
      first_round_uuids.insert(record["device"]["uuid"].get<std::string>());
    } else {
      EXPECT_EQ(record["device"]["index"], 0) << "a contender re-measured off the referee: " << line;
      contenders.insert(record["config"].get<std::string>());
    }
  }
  EXPECT_EQ(first_round_uuids, (std::set<std::string>{"GPU-fake-0", "GPU-fake-1", "GPU-fake-2"}));
  EXPECT_EQ(contenders, (std::set<std::string>{"a=2,b=2", "a=3,b=2"}));
  // The contenders' times now come from the referee alone.
  for (const Evaluation& e : result.evaluations) {
    if (e.rounds > 1) EXPECT_EQ(e.device.index, 0) << e.config.to_string();
  }
  std::filesystem::remove_all(directory);
}

TEST(MultiDevice, AJournalOfAnotherModelIsNotReused) {
  const auto directory = scratch("model");
  tune_on(devices_of(three_fakes()), directory / "tune.jsonl");
  std::vector<MeasuringDevice> other = devices_of(three_fakes());
  for (MeasuringDevice& device : other) device.name = "Fake B200";
  const TuningResult again = tune_on(other, directory / "tune.jsonl");
  for (const Evaluation& e : again.evaluations) {
    EXPECT_FALSE(e.from_journal) << e.config.to_string();
    EXPECT_EQ(e.device.name, "Fake B200");
  }
  const TuningResult resumed = tune_on(other, directory / "tune.jsonl");
  for (const Evaluation& e : resumed.evaluations) EXPECT_TRUE(e.from_journal) << e.config.to_string();
  std::filesystem::remove_all(directory);
}

TEST(MultiDevice, ACrashStaysInItsChild) {
  FakeDevices fakes = three_fakes();
  fakes.crash_configs = {"a=1,b=1"};
  Tuner tuner(testing::fake_problem(), testing::fake_space());
  tuner.set_measure(fake_measure(fakes));
  tuner.set_options(options_on(devices_of(fakes)));
  const TuningResult result = tuner.tune();
  ASSERT_EQ(result.evaluations.size(), 11u);
  EXPECT_FALSE(result.evaluations[0].ok);
  EXPECT_EQ(result.evaluations[0].failure.rfind("killed by signal 6", 0), 0u) << result.evaluations[0].failure;
  EXPECT_EQ(result.best_evaluation()->config, Config::parse("a=2,b=2"));
}

TEST(MultiDevice, MixedModelsAreTunedSeparately) {
  std::vector<MeasuringDevice> devices = devices_of(three_fakes());
  devices[1].name = "Fake A100";
  Tuner tuner(testing::fake_problem(), testing::fake_space());
  tuner.set_measure(fake_measure(three_fakes()));
  tuner.set_options(options_on(devices));
  try {
    tuner.tune();
    FAIL() << "mixed models were tuned together";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "tuner: devices of different models (Fake H200, Fake A100) in one run: tune each model on its own "
                 "(group_by_model)");
  }
}

} // namespace
} // namespace cachewise::tuner
