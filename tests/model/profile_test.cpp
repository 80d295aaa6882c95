#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"
#include "example_profile_json.hpp"

namespace cachewise {
namespace {

using nlohmann::json;

using testing_support::example_json;
using testing_support::expect_rejected;

TEST(Profile, ExampleLoadsWithItsValues) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  EXPECT_EQ(profile.device.name, "Example Hopper GPU");
  EXPECT_EQ(profile.device.compute_capability_major, 9);
  EXPECT_EQ(profile.device.compute_capability_minor, 0);
  EXPECT_EQ(profile.l2.partitions, 2);
  EXPECT_DOUBLE_EQ(profile.l2.line_bytes.value, 128);
  EXPECT_DOUBLE_EQ(profile.l2.near_hit_latency_cycles.value, 265);
  EXPECT_EQ(profile.l2.replacement.policy, ReplacementPolicy::lru);
  EXPECT_TRUE(profile.l2.allocates_on_store.value);
  EXPECT_FALSE(profile.l1.allocates_on_store.value);
  EXPECT_EQ(profile.l1.capacity_bytes.provenance.confidence, Confidence::assumed);
  ASSERT_TRUE(profile.tlb.page_bytes.has_value());
  EXPECT_DOUBLE_EQ(profile.tlb.page_bytes->value, 2097152);
  EXPECT_FALSE(profile.tlb.entries.has_value());
}

TEST(Profile, RoundTripGivesAnEqualProfile) {
  DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  profile.curves.push_back({"l2_chase", "bytes", "cycles", {{1024, 34.5}, {2048, 35.25}, {1.0e9, 612.125}}});
  profile.l1.hit_latency_cycles.provenance = {"pointer chase", 15, 0.0123456789, Confidence::medium};
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "cachewise_roundtrip.json";
  save_profile(profile, path);
  const DeviceProfile again = load_profile(path);
  EXPECT_EQ(again, profile);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  std::filesystem::remove(path);
}

TEST(Profile, WriteThenReadJsonIsIdentity) {
  const json original = example_json();
  const json written = profile_to_json(profile_from_json(original));
  EXPECT_EQ(profile_from_json(written), profile_from_json(original));
}

TEST(Profile, RetiredCurvesFileIsReadAndIgnored) {
  // Profiles written before curves_file was dropped may still name one; they keep loading.
  json document = example_json();
  document["curves_file"] = "h200-curves.json";
  EXPECT_EQ(profile_from_json(document), profile_from_json(example_json()));
  EXPECT_FALSE(profile_to_json(profile_from_json(document)).contains("curves_file"));
}

TEST(Profile, StoreBurstSlowdownsRoundTripByBurst) {
  DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  profile.dram.store_burst_slowdown[8] = {1.06, {"copy, 8 per thread", 7, 0.004, Confidence::high}};
  profile.dram.store_burst_slowdown[2] = {1.01, {"copy, 2 per thread", 7, 0.002, Confidence::high}};
  profile.dram.block_walk_slowdown[16] = {1.03, {"copy, 16 rounds", 7, 0.003, Confidence::high}};
  profile.dram.spread_write_slowdown[128] = {1.10, {"mirrored tile copy, 128 B", 7, 0.002, Confidence::high}};
  const json written = profile_to_json(profile);
  EXPECT_DOUBLE_EQ(written["dram"]["store_burst_slowdown"]["8"]["value"].get<double>(), 1.06);
  EXPECT_DOUBLE_EQ(written["dram"]["spread_write_slowdown"]["128"]["value"].get<double>(), 1.10);
  EXPECT_EQ(profile_from_json(written), profile);
}

TEST(Profile, StoreBurstKeysAndValuesAreChecked) {
  json document = example_json();
  const json slowdown{{"value", 1.05}, {"method", "copy"}, {"samples", 7}, {"spread", 0.01}, {"confidence", "high"}};
  for (const char* key : {"1", "257", "4x", "-2", ""}) {
    document["dram"]["store_burst_slowdown"] = json{{key, slowdown}};
    expect_rejected(document, std::string("profile.dram.store_burst_slowdown.") + key +
                                  ": expected a store burst as the key, an integer in [2, 256]");
  }
  document["dram"]["store_burst_slowdown"] = json{{"4", slowdown}};
  document["dram"]["store_burst_slowdown"]["4"]["value"] = 0;
  expect_rejected(document, "profile.dram.store_burst_slowdown.4.value: expected a value in (0, 1000], got 0");
  document["dram"]["store_burst_slowdown"] = 3;
  expect_rejected(document, "profile.dram.store_burst_slowdown: expected an object, got a number");
  document = example_json();
  document["dram"]["block_walk_slowdown"] = json{{"1", slowdown}};
  expect_rejected(
      document, "profile.dram.block_walk_slowdown.1: expected rounds per block as the key, an integer in [2, 1048576]");
  document["dram"]["block_walk_slowdown"] = json{{"64", slowdown}};
  EXPECT_DOUBLE_EQ(profile_from_json(document).dram.block_walk_slowdown.at(64).value, 1.05);
  document["dram"]["spread_write_slowdown"] = json{{"2097152", slowdown}};
  expect_rejected(
      document,
      "profile.dram.spread_write_slowdown.2097152: expected run bytes as the key, an integer in [2, 1048576]");
  document["dram"]["spread_write_slowdown"] = json{{"256", slowdown}};
  EXPECT_DOUBLE_EQ(profile_from_json(document).dram.spread_write_slowdown.at(256).value, 1.05);
}

json placement_json(int sm_count, int partitions) {
  json placement{{"method", "per-SM near/far classes"}, {"samples", sm_count}, {"spread", 0.0}, {"confidence", "high"}};
  for (int sm = 0; sm < sm_count; ++sm) {
    placement["dispatch_sm_ids"].push_back(sm_count - 1 - sm);
    placement["near_partition_by_sm"].push_back(sm % partitions);
  }
  return placement;
}

TEST(Profile, SmPlacementRoundTripsAndIsChecked) {
  json document = example_json();
  const int sm_count = document["device"]["sm_count"].get<int>();
  document["l2"]["sm_placement"] = placement_json(sm_count, 2);
  const DeviceProfile profile = profile_from_json(document);
  ASSERT_TRUE(profile.l2.sm_placement);
  EXPECT_EQ(profile.l2.sm_placement->dispatch_sm_ids.front(), sm_count - 1);
  EXPECT_EQ(profile.l2.sm_placement->near_partition_by_sm[3], 1);
  EXPECT_EQ(profile_from_json(profile_to_json(profile)), profile);
  EXPECT_FALSE(profile_from_json(example_json()).l2.sm_placement); // optional: older profiles load

  json bad = document;
  bad["l2"]["sm_placement"]["near_partition_by_sm"][5] = 2;
  expect_rejected(bad, "profile.l2.sm_placement.near_partition_by_sm[5]: expected an integer in [0, 1], got 2");
  bad = document;
  bad["l2"]["sm_placement"]["dispatch_sm_ids"].erase(0);
  expect_rejected(bad, "profile.l2.sm_placement.dispatch_sm_ids: expected one SM id per SM (" +
                           std::to_string(sm_count) + "), got " + std::to_string(sm_count - 1));
  bad = document;
  bad["l2"]["sm_placement"]["dispatch_sm_ids"][1] = sm_count - 1;
  expect_rejected(bad,
                  "profile.l2.sm_placement.dispatch_sm_ids[1]: SM " + std::to_string(sm_count - 1) + " appears twice");
  bad = document;
  bad["l2"]["sm_placement"]["dispatch_sm_ids"][0] = sm_count;
  expect_rejected(bad, "profile.l2.sm_placement.dispatch_sm_ids[0]: expected an integer in [0, " +
                           std::to_string(sm_count - 1) + "], got " + std::to_string(sm_count));
  bad = document;
  bad["l2"]["sm_placement"]["near_partition_by_sm"] = "all near";
  expect_rejected(bad, "profile.l2.sm_placement.near_partition_by_sm: expected an array of integers, got a string");
  bad = document;
  bad["l2"]["sm_placement"]["near_partition_by_sm"] = json::array();
  expect_rejected(bad, "profile.l2.sm_placement.near_partition_by_sm: expected the near partition of at least one SM");
}

TEST(SmPlacement, NeighbouringBlocksOnOnePartitionAreCountedByPairs) {
  // SMs 0-3: sides 0, 1, 0, 1. Order 0,2,1,3: pairs (0,2) same, (2,1) differ, (1,3) same.
  const std::vector<int> side_by_sm{0, 1, 0, 1};
  EXPECT_EQ(neighbours_sharing_a_partition({{0, 2, 1, 3}, side_by_sm, {}}), 2);
  EXPECT_EQ(neighbours_sharing_a_partition({{0, 1, 2, 3}, side_by_sm, {}}), 0);
  EXPECT_EQ(neighbours_sharing_a_partition({{3}, side_by_sm, {}}), 0); // one block: no pairs
  // Block i of a wave is near the partition of SM dispatch_sm_ids[i mod SMs].
  const SmPlacement placement{{0, 2, 1, 3}, side_by_sm, {}};
  EXPECT_EQ(near_partition_of_block(placement, 2), 1);
  EXPECT_EQ(near_partition_of_block(placement, 6), 1);
  EXPECT_EQ(near_partition_of_block(placement, 5), 0);
}

TEST(Profile, LineSizeNotPowerOfTwoNamesThePath) {
  json document = example_json();
  document["l2"]["line_bytes"]["value"] = 100;
  expect_rejected(document, "profile.l2.line_bytes.value: expected a power of two in [1, 1024], got 100");
}

TEST(Profile, MissingFieldNamesThePath) {
  json document = example_json();
  document["l1"].erase("hit_latency_cycles");
  expect_rejected(document, "profile.l1.hit_latency_cycles: missing");
}

TEST(Profile, WrongTypeNamesThePath) {
  json document = example_json();
  document["dram"]["latency_cycles"]["value"] = "fast";
  expect_rejected(document, "profile.dram.latency_cycles.value: expected a number, got a string");
}

TEST(Profile, NonPositiveLatencyIsRejected) {
  json document = example_json();
  document["l2"]["far_hit_latency_cycles"]["value"] = 0;
  expect_rejected(document, "profile.l2.far_hit_latency_cycles.value: expected a value in (0, 1000000], got 0");
}

// The ranges docs/profile-format.md lists: past them the simulator would allocate a slot per
// way (bad_alloc at 1e18 ways), print infinite times (1e-300 GB/s) or hold a 1e30-byte L2.
TEST(Profile, ValuesOutsideTheirPhysicalRangeAreRejected) {
  json document = example_json();
  document["l1"]["ways"]["value"] = 1e18;
  expect_rejected(document, "profile.l1.ways.value: expected a value in [1, 65536], got 1e+18");
  document = example_json();
  document["dram"]["read_bandwidth_gb_per_s"]["value"] = 1e-300;
  expect_rejected(document,
                  "profile.dram.read_bandwidth_gb_per_s.value: expected a value in [0.001, 1000000], got 1e-300");
  document = example_json();
  document["l2"]["capacity_bytes"]["value"] = 1e30;
  expect_rejected(document, "profile.l2.capacity_bytes.value: expected a value in (0, 1073741824], got 1e+30");
  document = example_json();
  document["l1"]["line_bytes"]["value"] = 2048;
  expect_rejected(document, "profile.l1.line_bytes.value: expected a power of two in [1, 1024], got 2048");
  // The upper bounds themselves are accepted.
  document = example_json();
  document["l1"]["ways"]["value"] = 65536;
  document["dram"]["read_bandwidth_gb_per_s"]["value"] = 1e6;
  const DeviceProfile profile = profile_from_json(document);
  EXPECT_DOUBLE_EQ(profile.l1.ways->value, 65536);
  EXPECT_DOUBLE_EQ(profile.dram.read_bandwidth_gb_per_s.value, 1e6);
}

TEST(Profile, DuplicateKeyInTheFileIsRejected) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "cachewise_duplicate_key.json";
  std::string text = example_json().dump(1);
  // A second "ways" in l1, as a hand edit would leave it: the first would be silently dropped.
  const std::size_t l1 = text.find("\"l1\": {");
  ASSERT_NE(l1, std::string::npos);
  text.insert(
      l1 + 7,
      "\"ways\": {\"value\": 8, \"method\": \"guess\", \"samples\": 0, \"spread\": 0, \"confidence\": \"assumed\"},");
  std::ofstream(path) << text;
  try {
    load_profile(path);
    ADD_FAILURE() << "a duplicate key was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.what(), path.string() + ": duplicate key 'l1.ways'");
  }
  std::filesystem::remove(path);
}

TEST(Profile, DirectoryIsNotAProfile) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  try {
    load_profile(dir);
    ADD_FAILURE() << "a directory was read as a profile";
  } catch (const InputError& error) {
    EXPECT_EQ(error.what(), dir.string() + ": not a regular file (a profile file is a JSON file)");
  }
}

TEST(Profile, UnknownSchemaVersionIsRejected) {
  json document = example_json();
  document["schema_version"] = 7;
  expect_rejected(document, "profile.schema_version: unsupported schema version 7 (this build reads 1)");
}

TEST(Profile, LineMustBeAMultipleOfSector) {
  json document = example_json();
  document["l1"]["sector_bytes"]["value"] = 256;
  expect_rejected(document, "profile.l1.line_bytes: expected a multiple of sector_bytes (256.0), got 128.0");
}

TEST(Profile, NearPartitionCannotExceedTheWholeL2) {
  json document = example_json();
  document["l2"]["near_capacity_bytes"]["value"] = 1.0e9;
  expect_rejected(document,
                  "profile.l2.near_capacity_bytes: expected at most capacity_bytes (62914560.0), got 1000000000.0");
}

TEST(Profile, BadConfidenceAndPolicyAreNamed) {
  json document = example_json();
  document["l1"]["ways"]["confidence"] = "sure";
  expect_rejected(document, "profile.l1.ways.confidence: expected one of high, medium, low, assumed, got \"sure\"");
  document = example_json();
  document["l2"]["replacement"]["policy"] = "mru";
  expect_rejected(
      document,
      "profile.l2.replacement.policy: expected one of lru, plru, fifo, random, adaptive, unknown, got \"mru\"");
}

TEST(Profile, BadComputeCapabilityAndCurvePointsAreNamed) {
  json document = example_json();
  document["device"]["compute_capability"] = "nine";
  expect_rejected(document,
                  "profile.device.compute_capability: expected \"MAJOR.MINOR\" such as \"9.0\", got \"nine\"");
  document = example_json();
  document["curves"] = json::array({{{"name", "c"}, {"x_unit", "B"}, {"y_unit", "cycles"}, {"points", {{1, 2}, {3}}}}});
  expect_rejected(document, "profile.curves[0].points[1]: expected an [x, y] pair of numbers, got [3]");
}

TEST(Profile, IntegerOutOfRangeIsNamed) {
  json document = example_json();
  document["device"]["sm_count"] = -3;
  expect_rejected(document, "profile.device.sm_count: expected an integer in [1, 100000], got -3");
}

TEST(Profile, FileErrorsArePrefixedWithThePath) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "cachewise_malformed.json";
  {
    std::ofstream out(path);
    out << "{ \"schema_version\": 1, ";
  }
  try {
    load_profile(path);
    FAIL() << "malformed JSON accepted";
  } catch (const InputError& error) {
    EXPECT_TRUE(std::string(error.what()).starts_with(path.string() + ": malformed JSON")) << error.what();
  }
  std::filesystem::remove(path);
  EXPECT_THROW(load_profile(path), InputError);
}

TEST(Profile, BundledPathHonoursTheEnvironmentOverride) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "cachewise_profiles_env";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(CACHEWISE_EXAMPLE_PROFILE, dir / "nvidia-test-gpu.json",
                             std::filesystem::copy_options::overwrite_existing);
  setenv("CACHEWISE_PROFILE_DIR", dir.c_str(), 1);
  EXPECT_EQ(bundled_profile_path("NVIDIA Test GPU"), dir / "nvidia-test-gpu.json");
  unsetenv("CACHEWISE_PROFILE_DIR");
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace cachewise
