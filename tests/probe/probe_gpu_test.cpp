// Runs the --quick probe on the local GPU and checks invariants every real cache hierarchy obeys
// (not the H200's numbers: any CUDA GPU must pass).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/probe.hpp"

namespace cachewise::probe {
namespace {

class QuickProbe : public testing::Test {
protected:
  static void SetUpTestSuite() {
    ProbeOptions options;
    options.quick = true;
    options.command_line = "probe_gpu_tests";
    profile_ = new DeviceProfile(run_probe(options, [](const ProbeProgress& progress) {
      stages_.push_back(progress.stage);
      steps_ = progress.steps;
    }));
  }
  static void TearDownTestSuite() { delete profile_; }
  static const DeviceProfile& profile() { return *profile_; }

  static inline DeviceProfile* profile_ = nullptr;
  static inline std::vector<std::string> stages_;
  static inline int steps_ = 0;
};

TEST_F(QuickProbe, ReportsEveryStep) {
  EXPECT_EQ(static_cast<int>(stages_.size()), steps_);
  EXPECT_GT(steps_, 10);
}

TEST_F(QuickProbe, ProfileSurvivesItsOwnValidation) {
  // profile_from_json applies every schema rule (powers of two, line multiple of sector, ...).
  EXPECT_EQ(profile_from_json(profile_to_json(profile())), profile());
}

TEST_F(QuickProbe, CapacitiesAreOrdered) {
  const DeviceProfile& p = profile();
  EXPECT_GT(p.l1.capacity_bytes.value, 0);
  EXPECT_LT(p.l1.capacity_bytes.value, p.l2.capacity_bytes.value);
  EXPECT_LE(p.l2.near_capacity_bytes.value, p.l2.capacity_bytes.value);
  EXPECT_LT(p.l2.capacity_bytes.value, static_cast<double>(p.device.global_memory_bytes));
  // A measured L2 holds no more than the driver reports (one sweep step of slack) and at least half.
  const auto reported = static_cast<double>(p.device.l2_bytes_reported);
  EXPECT_LE(p.l2.capacity_bytes.value, reported + 4.0 * 1024 * 1024);
  EXPECT_GE(p.l2.capacity_bytes.value, 0.5 * reported);
}

TEST_F(QuickProbe, LatenciesGrowDownTheHierarchy) {
  const DeviceProfile& p = profile();
  EXPECT_LT(p.l1.hit_latency_cycles.value, p.l2.near_hit_latency_cycles.value);
  EXPECT_LE(p.l2.near_hit_latency_cycles.value, p.l2.far_hit_latency_cycles.value);
  EXPECT_LT(p.l2.far_hit_latency_cycles.value, p.dram.latency_cycles.value);
}

TEST_F(QuickProbe, LinesAreWholeSectors) {
  const DeviceProfile& p = profile();
  EXPECT_EQ(std::fmod(p.l1.line_bytes.value, p.l1.sector_bytes.value), 0.0);
  EXPECT_EQ(std::fmod(p.l2.line_bytes.value, p.l2.sector_bytes.value), 0.0);
  EXPECT_GE(p.l1.sector_bytes.value, 16);
}

TEST_F(QuickProbe, BandwidthsAreOrdered) {
  const DeviceProfile& p = profile();
  ASSERT_TRUE(p.l1.read_bandwidth_gb_per_s && p.l2.read_bandwidth_gb_per_s);
  EXPECT_GT(p.l1.read_bandwidth_gb_per_s->value, p.l2.read_bandwidth_gb_per_s->value);
  EXPECT_GT(p.l2.read_bandwidth_gb_per_s->value, p.dram.read_bandwidth_gb_per_s.value);
  EXPECT_GT(p.dram.write_bandwidth_gb_per_s.value, 0);
}

TEST_F(QuickProbe, StoreBurstSlowdownsAreMeasuredForTwoFourAndEight) {
  // The same copy with 2, 4, 8 vectors per thread against 1: the same bytes either way, so
  // a ratio far from 1 would be a broken timing (the H200 measured 1.00-1.06).
  const DeviceProfile& p = profile();
  ASSERT_EQ(p.dram.store_burst_slowdown.size(), 3u);
  for (const std::int64_t burst : {2, 4, 8}) {
    ASSERT_TRUE(p.dram.store_burst_slowdown.contains(burst)) << burst;
    const Measured& slowdown = p.dram.store_burst_slowdown.at(burst);
    EXPECT_GT(slowdown.value, 0.8) << burst;
    EXPECT_LT(slowdown.value, 1.5) << burst;
    EXPECT_GT(slowdown.provenance.samples, 0);
    EXPECT_NE(slowdown.provenance.method.find(std::to_string(burst) + " 16-byte vectors per thread"),
              std::string::npos);
  }
}

TEST_F(QuickProbe, BlockWalkSlowdownsAreMeasuredForFourSixteenAndSixtyFourRounds) {
  const DeviceProfile& p = profile();
  ASSERT_EQ(p.dram.block_walk_slowdown.size(), 3u);
  for (const std::int64_t rounds : {4, 16, 64}) {
    ASSERT_TRUE(p.dram.block_walk_slowdown.contains(rounds)) << rounds;
    const Measured& slowdown = p.dram.block_walk_slowdown.at(rounds);
    EXPECT_GT(slowdown.value, 0.8) << rounds;
    EXPECT_LT(slowdown.value, 1.5) << rounds;
    EXPECT_NE(slowdown.provenance.method.find(std::to_string(rounds) + " rounds of 1 vector per thread"),
              std::string::npos);
  }
}

TEST_F(QuickProbe, SpreadWriteSlowdownsAreMeasuredForRunsOf128To512Bytes) {
  // The mirrored and the same tiled copy move the same bytes in the same batches: a ratio far
  // from 1 would be a broken timing (the H200 measured 1.10 / 1.05 / 1.02 at 32 KiB rows,
  // a standalone mirrored copy, docs/history.md), and shorter runs never cost less.
  const DeviceProfile& p = profile();
  ASSERT_EQ(p.dram.spread_write_slowdown.size(), 3u);
  for (const std::int64_t run_bytes : {128, 256, 512}) {
    ASSERT_TRUE(p.dram.spread_write_slowdown.contains(run_bytes)) << run_bytes;
    const Measured& slowdown = p.dram.spread_write_slowdown.at(run_bytes);
    EXPECT_GT(slowdown.value, 0.9) << run_bytes;
    EXPECT_LT(slowdown.value, 1.5) << run_bytes;
    EXPECT_NE(slowdown.provenance.method.find(std::to_string(run_bytes) + " contiguous bytes per row"),
              std::string::npos);
  }
  EXPECT_GT(p.dram.spread_write_slowdown.at(128).value, p.dram.spread_write_slowdown.at(512).value);
}

TEST_F(QuickProbe, StoresOfOneSectorPerLineAreSlowerPerSectorThanWholeLines) {
  // H200: 1.91x (a standalone scatter test, docs/history.md); never faster than whole lines.
  const DeviceProfile& p = profile();
  ASSERT_TRUE(p.l2.sparse_line_write_slowdown);
  EXPECT_GT(p.l2.sparse_line_write_slowdown->value, 0.95);
  EXPECT_LT(p.l2.sparse_line_write_slowdown->value, 8.0);
  EXPECT_NE(p.l2.sparse_line_write_slowdown->provenance.method.find("each lane of a warp store in its own line"),
            std::string::npos);
}

TEST_F(QuickProbe, APartitionedL2PlacesEveryBlockOfAWaveOnItsOwnSm) {
  // One block per SM is dealt to every SM once; on a partitioned L2 both partitions are near to
  // some SM (H200: 68 and 64 SMs), and the profile's own validation accepts the placement.
  const DeviceProfile& p = profile();
  if (p.l2.partitions < 2) GTEST_SKIP() << "one L2 partition: every SM near to all of it";
  ASSERT_TRUE(p.l2.sm_placement);
  const SmPlacement& placement = *p.l2.sm_placement;
  std::vector<int> ids = placement.dispatch_sm_ids;
  std::ranges::sort(ids);
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
  EXPECT_EQ(static_cast<int>(ids.size()), p.device.sm_count);
  const auto far_side = std::ranges::count(placement.near_partition_by_sm, 1);
  EXPECT_GT(far_side, 0);
  EXPECT_LT(far_side, static_cast<long>(placement.near_partition_by_sm.size()));
  EXPECT_EQ(placement.near_partition_by_sm[static_cast<std::size_t>(ids.front())], 0); // the home SM's side is 0
}

TEST_F(QuickProbe, SharedMemoryBanksSpanAWarpOfWords) {
  const DeviceProfile& p = profile();
  EXPECT_GE(p.shared_memory.banks.value * p.shared_memory.bank_width_bytes.value, 64);
  EXPECT_GT(p.shared_memory.per_sm_bytes, 0);
}

TEST_F(QuickProbe, EvictionSetsAndTlbReachAreConsistent) {
  const DeviceProfile& p = profile();
  // A minimal L1 eviction set holds at most one set's worth of lines: ways x line <= capacity.
  if (p.l1.ways) {
    EXPECT_GE(p.l1.ways->value, 1);
    EXPECT_LE(p.l1.ways->value * p.l1.line_bytes.value, p.l1.capacity_bytes.value) << p.l1.ways->provenance.method;
  } else {
    EXPECT_NE(p.l1.replacement.provenance.method.find("eviction"), std::string::npos);
  }
  // The quick sweep always writes a reach: the step, or the largest region as a lower bound.
  ASSERT_TRUE(p.tlb.reach_bytes);
  EXPECT_GE(p.tlb.reach_bytes->value, 16.0 * 1024 * 1024);
  EXPECT_GT(p.tlb.reach_bytes->provenance.samples, 0);
}

TEST_F(QuickProbe, EveryValueSaysHowItWasMeasured) {
  const DeviceProfile& p = profile();
  for (const Measured* value :
       {&p.l1.capacity_bytes, &p.l1.hit_latency_cycles, &p.l2.capacity_bytes, &p.l2.near_hit_latency_cycles,
        &p.dram.latency_cycles, &p.dram.read_bandwidth_gb_per_s, &p.shared_memory.banks}) {
    EXPECT_FALSE(value->provenance.method.empty());
    EXPECT_GT(value->provenance.samples, 0) << value->provenance.method;
  }
  EXPECT_NE(p.device.probed_at.find('T'), std::string::npos);
  EXPECT_GT(p.device.sm_clock_mhz_before, 0);
  EXPECT_FALSE(p.curves.empty());
  EXPECT_NO_THROW(latency_svg(p));
}

const Curve* curve_starting(const DeviceProfile& p, const std::string& prefix) {
  const auto found = std::ranges::find_if(p.curves, [&](const Curve& c) { return c.name.rfind(prefix, 0) == 0; });
  return found == p.curves.end() ? nullptr : &*found;
}

TEST_F(QuickProbe, FullCycleChaseRisesFromL2ToDram) {
  // Working sets from 2 MiB to 128 MiB: the smallest stays in L2, the largest is twice any L2
  // shipped so far, so its hops are slower than the smallest's and no faster than half of DRAM.
  const DeviceProfile& p = profile();
  const Curve* chase = curve_starting(p, "L2 full-cycle chase, SM ");
  ASSERT_NE(chase, nullptr);
  ASSERT_GE(chase->points.size(), 9u);
  EXPECT_LT(chase->points.front().second, chase->points.back().second);
  EXPECT_GT(chase->points.front().second, p.l1.hit_latency_cycles.value);
  EXPECT_GT(chase->points.back().second, 0.5 * p.dram.latency_cycles.value);
}

TEST_F(QuickProbe, FirstTouchLatenciesHaveTheEmptyFrameTakenOut) {
  // Every line was stored into L2 right before its one timed load: with the empty frame
  // subtracted, each load costs more than an L1 hit and less than twice a DRAM miss.
  const DeviceProfile& p = profile();
  const Curve* first_touch = curve_starting(p, "L2 first-touch latency per line");
  ASSERT_NE(first_touch, nullptr);
  ASSERT_FALSE(first_touch->points.empty());
  std::vector<double> latencies;
  for (const auto& point : first_touch->points) latencies.push_back(point.second);
  std::ranges::sort(latencies);
  const double median = latencies[latencies.size() / 2];
  EXPECT_GT(median, p.l1.hit_latency_cycles.value);
  EXPECT_LT(median, 2 * p.dram.latency_cycles.value);
}

TEST_F(QuickProbe, L1ReadKernelRanOneBlockOnEverySm) {
  const DeviceProfile& p = profile();
  ASSERT_TRUE(p.l1.read_bandwidth_gb_per_s);
  const std::string& method = p.l1.read_bandwidth_gb_per_s->provenance.method;
  const std::string sms = std::to_string(p.device.sm_count);
  EXPECT_NE(method.find("blocks ran on " + sms + " distinct SMs of " + sms), std::string::npos) << method;
}

TEST(Probe, StopRequestCancelsBeforeAnyMeasurement) {
  int calls = 0;
  EXPECT_THROW(run_probe(
                   {}, [&](const ProbeProgress&) { ++calls; }, [] { return true; }),
               ProbeCancelled);
  EXPECT_EQ(calls, 0);
}

TEST(Probe, MissingDeviceIsANoDeviceError) {
  ProbeOptions options;
  options.device = 4096;
  EXPECT_THROW(run_probe(options), NoDeviceError);
}

} // namespace
} // namespace cachewise::probe
