// The Range Profiler wrapper on the copy kernel, whose counts follow from the contract by hand:
// a warp-wide load of 32 f32 (vector=1) is one request of 4 sectors; vector=4 makes each
// request 16 sectors and a quarter as many requests. Needs a GPU with readable counters.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cachewise/cupti.hpp"
#include "cachewise/kernels.hpp"

namespace cachewise::cupti {
namespace {

constexpr std::int64_t kElements = std::int64_t{1} << 25; // 128 MiB per array: twice the H200's L2

const std::vector<std::string> kCopyMetrics = {
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "dram__bytes_read.sum"};

std::map<std::string, double> measure_copy(const std::string& config_text) {
  const ProblemSpec problem{"copy", kElements, 0, 0, DataType::f32};
  const Config config = Config::parse(config_text);
  kernels::Workload workload(problem, config);
  return measure(kCopyMetrics, [&] { kernels::launch_family_kernel(problem, config, workload); });
}

TEST(Cupti, CountsScalarCopyRequestsAndSectors) {
  const auto values = measure_copy("block=256,vector=1,ept=1,stride=1");
  const double warps = kElements / 32.0;
  EXPECT_EQ(values.at("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), warps);
  EXPECT_EQ(values.at("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 4 * warps);
  EXPECT_EQ(values.at("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"), warps);
  EXPECT_EQ(values.at("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), 4 * warps);
  // The input is read from DRAM once: 128 MiB, within 10% (refresh, page tables, other traffic).
  EXPECT_NEAR(values.at("dram__bytes_read.sum"), 4.0 * kElements, 0.1 * 4.0 * kElements);
}

TEST(Cupti, CountsVectorCopyRequestsAndSectors) {
  const auto values = measure_copy("block=256,vector=4,ept=2,stride=1");
  const double warp_instructions = kElements / 4.0 / 32.0;
  EXPECT_EQ(values.at("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), warp_instructions);
  EXPECT_EQ(values.at("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 16 * warp_instructions);
}

TEST(Cupti, UserReplayStartsEveryPassFromTheHook) {
  // 4 MiB in: the input fits in L2, so only an eviction before each pass makes every pass read
  // it from DRAM; the hook runs once per pass (at least once), never inside a range.
  const ProblemSpec problem{"copy", 1 << 20, 0, 0, DataType::f32};
  const Config config = Config::parse("block=256,vector=1,ept=1,stride=1");
  kernels::Workload workload(problem, config);
  int passes = 0;
  std::vector<std::string> metrics = kCopyMetrics;
  metrics.insert(metrics.end(), {"dram__bytes_write.sum", "lts__t_sectors_op_read.sum", "lts__t_sector_hit_rate.pct",
                                 "l1tex__t_sector_hit_rate.pct"});
  const auto values = measure(
      metrics, [&] { kernels::launch_family_kernel(problem, config, workload); }, 0,
      [&] {
        ++passes;
        kernels::evict_l2();
      });
  EXPECT_GE(passes, 1);
  EXPECT_EQ(values.at("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), (1 << 20) / 32.0);
  EXPECT_NEAR(values.at("dram__bytes_read.sum"), 4.0 * (1 << 20), 0.1 * 4.0 * (1 << 20));
}

TEST(Cupti, ProfilesEachKernelOfALaunchAsItsOwnRange) {
  const ProblemSpec problem{"copy", 1 << 20, 0, 0, DataType::f32};
  const Config scalar = Config::parse("block=256,vector=1,ept=1,stride=1");
  const Config vector = Config::parse("block=256,vector=2,ept=1,stride=1");
  kernels::Workload workload(problem, scalar);
  const auto ranges = measure_kernels({"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"}, [&] {
    kernels::launch_family_kernel(problem, scalar, workload);
    kernels::launch_family_kernel(problem, vector, workload);
  });
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].metrics.at("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), (1 << 20) / 32.0);
  EXPECT_EQ(ranges[1].metrics.at("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), (1 << 20) / 64.0);
  EXPECT_EQ(ranges[0].range_name, "0"); // auto range numbers the kernels (seen on the H200, CUDA 13.0)
  EXPECT_EQ(ranges[1].range_name, "1");
}

TEST(Cupti, NamesAnUnknownMetric) {
  const ProblemSpec problem{"copy", 1024, 0, 0, DataType::f32};
  const Config config = Config::parse("block=256,vector=1,ept=1,stride=1");
  kernels::Workload workload(problem, config);
  try {
    measure({"dram__bytes_read.sum", "no_such__counter.sum"},
            [&] { kernels::launch_family_kernel(problem, config, workload); });
    FAIL() << "an unknown metric was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'no_such__counter.sum'"), std::string::npos) << e.what();
  }
}

TEST(Cupti, RejectsAnEmptyMetricList) {
  EXPECT_THROW(measure({}, [] {}), InputError);
}

} // namespace
} // namespace cachewise::cupti
