// Simulates two transpose layouts against the bundled H200 profile and prints what the
// model predicts for each: the smallest complete use of the cachewise libraries.
#include <cstdio>
#include <filesystem>

#include "cachewise/advisor.hpp"

int main() {
  const auto profile = cachewise::load_profile(std::filesystem::path(CACHEWISE_PROFILE_DIR) / "h200.json");
  const cachewise::ProblemSpec problem{.family = "transpose", .n = 4096};
  for (const char* text : {"smem=0,tile=32,block_x=32,block_y=8,pad=0", "smem=1,tile=32,block_x=32,block_y=8,pad=1"}) {
    const auto pattern = cachewise::build_pattern(problem, cachewise::Config::parse(text));
    const auto prediction = cachewise::simulate(pattern, profile);
    std::printf("%-45s %8.1f us  %6.0f GB/s  store sectors/request %.1f\n", text, prediction.time_us,
                prediction.achieved_bandwidth_gb_per_s,
                prediction.metric("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") /
                    prediction.metric("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"));
  }
  return 0;
}
