// Devices: --gpus selection, grouping by model, CUDA_VISIBLE_DEVICES pinning, the fake device
// list, and several children at once.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/tuner.hpp"
#include "fake_gpus.hpp"

namespace cachewise::tuner {
namespace {

std::vector<MeasuringDevice> three_devices() {
  return {{0, "NVIDIA H200", "GPU-a", 90, {}, -1},
          {1, "NVIDIA A100", "GPU-b", 80, {}, -1},
          {2, "NVIDIA H200", "GPU-c", 90, {}, -1}};
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SelectDevices, AllOrIndexes) {
  EXPECT_EQ(select_devices("all", three_devices()).size(), 3u);
  const std::vector<MeasuringDevice> chosen = select_devices("2,0", three_devices());
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0].uuid, "GPU-c");
  EXPECT_EQ(chosen[1].uuid, "GPU-a");
}

TEST(SelectDevices, NamesWhatIsWrong) {
  EXPECT_EQ(error_of([] { select_devices("0,5", three_devices()); }), "--gpus 0,5: no device 5 (this host has 0-2)");
  EXPECT_EQ(error_of([] { select_devices("1,1", three_devices()); }), "--gpus 1,1: device 1 is given twice");
  EXPECT_EQ(error_of([] { select_devices("one", three_devices()); }),
            "--gpus one: 'one' is not a device index (give all or indexes like 0,2,3)");
  EXPECT_EQ(error_of([] { select_devices("-1", three_devices()); }),
            "--gpus -1: '-1' is not a device index (give all or indexes like 0,2,3)");
  EXPECT_EQ(error_of([] { select_devices("all", {}); }), "--gpus all: this host has no GPU");
}

TEST(GroupByModel, OneGroupPerModelInOrderOfFirstAppearance) {
  const auto groups = group_by_model(three_devices());
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_EQ(groups[0].size(), 2u);
  EXPECT_EQ(groups[0][0].uuid, "GPU-a");
  EXPECT_EQ(groups[0][1].uuid, "GPU-c");
  ASSERT_EQ(groups[1].size(), 1u);
  EXPECT_EQ(groups[1][0].name, "NVIDIA A100");
}

TEST(SameDevice, ByUuidElseByPlace) {
  EXPECT_TRUE(same_device({0, "X", "GPU-a", 0, {}, -1}, {3, "X", "GPU-a", 0, {}, -1}));
  EXPECT_FALSE(same_device({0, "X", "GPU-a", 0, {}, -1}, {0, "X", "GPU-b", 0, {}, -1}));
  EXPECT_TRUE(same_device({1, "X", "", 0, "node1", 2}, {1, "X", "", 0, "node1", 2}));
  EXPECT_FALSE(same_device({1, "X", "", 0, "node1", 2}, {1, "X", "", 0, "node1", 3}));
}

TEST(VisibleDevices, TheInheritedListIsIndexedNotReplaced) {
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(visible_devices_value(2), "2");
  ::setenv("CUDA_VISIBLE_DEVICES", "3,5,7", 1);
  EXPECT_EQ(visible_devices_value(1), "5");
  ::unsetenv("CUDA_VISIBLE_DEVICES");
}

TEST(DeviceJson, RoundTrips) {
  const MeasuringDevice device{1, "NVIDIA H200", "GPU-c", 90, "node7", 3};
  const MeasuringDevice back = device_from_json(device_to_json(device));
  EXPECT_EQ(back.index, 1);
  EXPECT_EQ(back.name, "NVIDIA H200");
  EXPECT_EQ(back.uuid, "GPU-c");
  EXPECT_EQ(back.compute_capability, 90);
  EXPECT_EQ(back.host, "node7");
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(describe(device), "rank 3 on node7: 1 (NVIDIA H200, GPU-c)");
}

std::filesystem::path write_fakes(const std::string& name, const std::string& text) {
  const auto path =
      std::filesystem::temp_directory_path() / ("cachewise-fakes-" + name + "-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << text;
  return path;
}

TEST(FakeDevices, TimesFromTheDevicesTableThenTheSharedOneThenTheDefault) {
  const auto path = write_fakes("times", R"({"devices": [{"name": "Fake H200", "uuid": "GPU-f0"},
      {"name": "Fake H200", "uuid": "GPU-f1", "scale": 2.0, "times_ms": {"b=1,a=2": 0.25}}],
    "times_ms": {"a=2,b=1": 0.5}, "default_ms": 3.0})");
  const FakeDevices fakes = load_fake_devices(path);
  ASSERT_EQ(fakes.devices.size(), 2u);
  EXPECT_EQ(fakes.devices[1].device.index, 1);
  EXPECT_EQ(fakes.devices[1].device.compute_capability, 90);
  EXPECT_DOUBLE_EQ(fake_time_ms(fakes, 0, Config::parse("a=2,b=1")), 0.5);
  EXPECT_DOUBLE_EQ(fake_time_ms(fakes, 1, Config::parse("a=2,b=1")), 0.5); // its own 0.25 times its scale 2
  EXPECT_DOUBLE_EQ(fake_time_ms(fakes, 0, Config::parse("a=9,b=9")), 3.0);
  EXPECT_DOUBLE_EQ(fake_time_ms(fakes, 1, Config::parse("a=9,b=9")), 6.0);
  std::filesystem::remove(path);
}

TEST(FakeDevices, BadFilesAreInputErrors) {
  EXPECT_EQ(error_of([] { load_fake_devices("/nonexistent.json"); }),
            "/nonexistent.json: cannot open the fake device list");
  const auto empty = write_fakes("empty", R"({"devices": []})");
  EXPECT_EQ(error_of([&] { load_fake_devices(empty); }),
            empty.string() + ": fake device list: devices: give a non-empty list");
  std::filesystem::remove(empty);
}

TEST(FakeMeasure, ReadsThePinnedDeviceAsACudaProgramWould) {
  FakeDevices fakes;
  fakes.devices = {{{0, "Fake", "", 90, {}, -1}, 1.0, {}}, {{1, "Fake", "", 90, {}, -1}, 4.0, {}}};
  const Measure measure = fake_measure(fakes);
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_DOUBLE_EQ(measure(Config::parse("a=1"), 0), 1.0);
  pin_to_device({1, "Fake", "", 90, {}, -1});
  EXPECT_DOUBLE_EQ(measure(Config::parse("a=1"), 0), 4.0);
  pin_to_device({7, "Fake", "", 90, {}, -1});
  EXPECT_EQ(error_of([&] { measure(Config::parse("a=1"), 0); }), "fake device 7 is not in the list");
  ::unsetenv("CUDA_VISIBLE_DEVICES");
}

/// Each child waits for the other's file: both finish only if they run at the same time.
TEST(ChildProcesses, RunSideBySide) {
  const auto directory = std::filesystem::temp_directory_path() / ("cachewise-side-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  const auto meet = [directory](const std::string& mine, const std::string& other) {
    return [=] {
      std::ofstream(directory / mine) << "here";
      for (int i = 0; i < 400 && !std::filesystem::exists(directory / other); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return std::string(std::filesystem::exists(directory / other) ? "met" : "alone");
    };
  };
  ChildProcesses children;
  const std::uint64_t a = children.start(meet("a", "b"), std::chrono::seconds(10));
  const std::uint64_t b = children.start(meet("b", "a"), std::chrono::seconds(10));
  EXPECT_EQ(children.running(), 2u);
  std::map<std::uint64_t, ChildOutcome> outcomes;
  for (int i = 0; i < 2; ++i) outcomes.insert(children.wait_any());
  EXPECT_EQ(children.running(), 0u);
  EXPECT_EQ(outcomes.at(a).output, "met");
  EXPECT_EQ(outcomes.at(b).output, "met");
  std::filesystem::remove_all(directory);
}

TEST(ChildProcesses, OneTimesOutWhileTheOtherFinishes) {
  ChildProcesses children;
  const std::uint64_t slow = children.start(
      [] {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return std::string("late");
      },
      std::chrono::milliseconds(300));
  const std::uint64_t quick = children.start([] { return std::string("done"); }, std::chrono::seconds(10));
  const auto first = children.wait_any();
  EXPECT_EQ(first.first, quick);
  EXPECT_EQ(first.second.output, "done");
  const auto second = children.wait_any();
  EXPECT_EQ(second.first, slow);
  EXPECT_EQ(second.second.failure, "timed out after 300 ms");
}

TEST(DeviceTargetName, MacroSpellingOfADeviceName) {
  EXPECT_EQ(device_target_name("NVIDIA H200"), "H200");
  EXPECT_EQ(device_target_name("NVIDIA GeForce RTX 4090"), "GEFORCE_RTX_4090");
  EXPECT_EQ(device_target_name("NVIDIA A100-SXM4-80GB"), "A100_SXM4_80GB");
  EXPECT_EQ(device_target_name("Fake H200 "), "FAKE_H200");
  EXPECT_EQ(device_target_name("8800 GT"), "GPU_8800_GT"); // an identifier cannot start with a digit
}

} // namespace
} // namespace cachewise::tuner
