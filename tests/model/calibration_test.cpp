// The profile's calibration section (docs/calibration.md): parsing, its errors, the defaults
// without one, and the architectural throughput facts taken from the compute capability.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"
#include "cachewise/model/families/device_pattern.hpp"
#include "example_profile_json.hpp"

namespace cachewise {
namespace {

using nlohmann::json;

using testing_support::example_json;
using testing_support::expect_rejected;

TEST(Calibration, ExampleProfileCarriesItsNamedValuesWithSources) {
  const DeviceProfile profile = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  const Calibration& calibration = profile.calibration;
  EXPECT_EQ(calibration.name, "example-h200-run21");
  EXPECT_EQ(calibration.memory_levels_combine_exponent.value, 16.0);
  EXPECT_EQ(calibration.loaded_dram_latency_factor.value, 3.0);
  EXPECT_EQ(calibration.gemm_overhead.inner_step_instructions_by_thread_tile.at("8x8"), 15.8);
  EXPECT_FALSE(calibration.launch_overhead_us.source.empty());
  EXPECT_EQ(profile_from_json(profile_to_json(profile)), profile);
}

TEST(Calibration, ProfileWithoutOneGetsTheNamedDefaults) {
  json document = example_json();
  document.erase("calibration");
  const DeviceProfile profile = profile_from_json(document);
  EXPECT_EQ(profile.calibration, default_calibration());
  EXPECT_EQ(profile.calibration.name, "defaults");
  EXPECT_FALSE(profile_to_json(profile).contains("calibration")); // nothing to write back
}

TEST(Calibration, DefaultsAddNoFittedCost) {
  // Without a calibration a launch costs no overhead and gemm declares no overhead instructions:
  // the default launch term is 0, and the pattern's overhead is 0 (the fitted one is not).
  json document = example_json();
  const DeviceProfile fitted = profile_from_json(document);
  document.erase("calibration");
  const DeviceProfile plain = profile_from_json(document);
  const ProblemSpec gemm{"gemm", 256};
  const Config config = Config::parse("bm=64,bn=32,bk=32,tm=2,tn=2,pad=1");
  EXPECT_EQ(build_pattern(gemm, config, plain.calibration).overhead_instructions, 0.0);
  EXPECT_GT(build_pattern(gemm, config, fitted.calibration).overhead_instructions, 0.0);
  const Prediction prediction =
      simulate(build_pattern({"copy", 1 << 16}, Config::parse("block=256,vector=4,ept=1")), plain);
  EXPECT_EQ(prediction.time_terms_us.at("launch"), 0.0);
}

TEST(Calibration, MalformedValuesNameTheirPath) {
  json document = example_json();
  document["calibration"]["combine_exponent"]["value"] = 0.5;
  expect_rejected(document, "profile.calibration.combine_exponent.value: expected a value >= 1, got 0.5");
  document = example_json();
  document["calibration"]["screening_refine_margin"] = {{"value", 0.5}, {"source", "chosen"}};
  expect_rejected(document, "profile.calibration.screening_refine_margin.value: expected a value >= 1, got 0.5");
  document = example_json();
  document["calibration"]["barrier_cycles"]["value"] = -1;
  expect_rejected(document, "profile.calibration.barrier_cycles.value: expected a value >= 0, got -1");
  document = example_json();
  document["calibration"]["launch_overhead_us"].erase("source");
  expect_rejected(document, "profile.calibration.launch_overhead_us.source: missing");
  document = example_json();
  document["calibration"]["launch_overhead_us"]["source"] = "";
  expect_rejected(
      document,
      "profile.calibration.launch_overhead_us.source: expected where the value came from, got an empty string");
  document = example_json();
  document["calibration"]["write_run_neighbour_blocks"]["value"] = 2.5;
  expect_rejected(
      document,
      "profile.calibration.write_run_neighbour_blocks.value: expected a whole number up to 1000000000, got 2.5");
  document = example_json();
  document["calibration"]["gemm_overhead"]["inner_step_instructions"]["by_thread_tile"]["3x3"] = 1.0;
  expect_rejected(document,
                  "profile.calibration.gemm_overhead.inner_step_instructions.by_thread_tile.3x3: expected a thread "
                  "tile TMxTN with TM, TN in 1, 2, 4, 8");
  document = example_json();
  document["calibration"]["loaded_cache_latency_factor"] = "2";
  expect_rejected(document, "profile.calibration.loaded_cache_latency_factor: expected an object, got a string");
  document = example_json();
  document["calibration"]["name"] = "";
  expect_rejected(document, "profile.calibration.name: expected a name, got an empty string");
  document = example_json();
  document["calibration"] = json::array();
  expect_rejected(document, "profile.calibration: expected an object, got an array");
}

TEST(Calibration, ErrorBandsAreCheckedAndFallBackToAllFamilies) {
  json document = example_json();
  const json band = {{"low_ratio", 0.9}, {"high_ratio", 1.1}, {"residuals", 40}, {"source", "test"}};
  document["calibration"]["time_error_bands"] = {
      {"copy", band}, {"all", {{"low_ratio", 0.8}, {"high_ratio", 1.3}, {"residuals", 9}, {"source", "t"}}}};
  const Calibration calibration = profile_from_json(document).calibration;
  EXPECT_EQ(time_error_band(calibration, "copy")->high_ratio, 1.1);
  EXPECT_EQ(time_error_band(calibration, "my_kernel")->high_ratio, 1.3); // a custom kernel: all families
  EXPECT_FALSE(time_error_band(default_calibration(), "copy").has_value());
  document["calibration"]["time_error_bands"]["copy"]["high_ratio"] = 0.5;
  expect_rejected(document,
                  "profile.calibration.time_error_bands.copy.high_ratio: expected a ratio >= low_ratio, got 0.5");
  document["calibration"]["time_error_bands"]["copy"]["high_ratio"] = 1.1;
  document["calibration"]["time_error_bands"]["copi"] = band;
  expect_rejected(document,
                  "profile.calibration.time_error_bands.copi: unknown pattern 'copi' (valid: copy, gemm, stencil2d, "
                  "stencil3d, transpose)");
}

TEST(Calibration, Fp32ThroughputAndSchedulersFollowTheComputeCapability) {
  // CUDA Programming Guide: 64 FP32 FMA results per cycle per SM on 7.x and 8.0, 128 on 8.6 and
  // 9.0; an FMA is 2 flops.
  EXPECT_EQ(f32_flops_per_sm_cycle(8, 0), 128.0);
  EXPECT_EQ(f32_flops_per_sm_cycle(8, 6), 256.0);
  EXPECT_EQ(f32_flops_per_sm_cycle(9, 0), 256.0);
  EXPECT_EQ(f32_flops_per_sm_cycle(7, 0), 128.0);
  EXPECT_EQ(f32_flops_per_sm_cycle(3, 5), 0.0);
  EXPECT_EQ(warp_schedulers_per_sm(9, 0), 4);
  EXPECT_EQ(warp_schedulers_per_sm(6, 0), 2);
}

TEST(Calibration, ComputeTermHalvesOnAnSm90AgainstAnSm80) {
  // The same flops on the same SMs and clock: sm_80 has half sm_90's FP32 lanes.
  DeviceProfile sm90 = load_profile(CACHEWISE_EXAMPLE_PROFILE);
  DeviceProfile sm80 = sm90;
  sm80.device.compute_capability_major = 8;
  sm80.device.compute_capability_minor = 0;
  KernelPattern pattern = build_pattern({"copy", 1 << 16}, Config::parse("block=256,vector=4,ept=1"));
  pattern.flops = 1.0e9;
  EXPECT_DOUBLE_EQ(simulate(pattern, sm80).time_terms_us.at("compute"),
                   2.0 * simulate(pattern, sm90).time_terms_us.at("compute"));
  sm80.device.compute_capability_major = 3;
  EXPECT_THROW(simulate(pattern, sm80), InputError);
}

} // namespace
} // namespace cachewise
