// Prints the built-in kernels' cross-check table of measurements/frontend-crosscheck.md: per family,
// config and counter, the hand-built pattern's simulate() against the front end's
// simulate_traced() of the compiled kernel, on the H200 profile with the default sampling.
// Usage: builtin_crosscheck_table [PROFILE [PTX_DIR]]
#include <cstdio>
#include <exception>
#include <string>

#include "crosscheck.hpp"

int main(int argc, char** argv) {
  using namespace cachewise::frontend::builtin;
  const std::string profile_path = argc > 1 ? argv[1] : CACHEWISE_H200_PROFILE;
  const std::string ptx_dir = argc > 2 ? argv[2] : CACHEWISE_TEST_PTX_DIR;
  try {
    const cachewise::DeviceProfile profile = cachewise::load_profile(profile_path);
    std::printf("| family | config | counter | pattern | front end | diff %% |\n|---|---|---|---:|---:|---:|\n");
    for (const auto& cases : {copy_cases(), transpose_cases(), stencil2d_cases(), stencil3d_cases(), gemm_cases()}) {
      for (const CrossCase& c : cases) {
        const char* known = deviation_reason(c).empty() ? "" : " (known deviation)";
        for (const CounterRow& row : cross_check(c, profile, ptx_dir)) {
          std::printf("| %s | %s%s | %s | %.6g | %.6g | %.3f%s |\n", c.problem.family.c_str(), c.label.c_str(), known,
                      row.counter.c_str(), row.pattern, row.frontend, row.diff_pct(), row.diff_pct() > 1 ? " **" : "");
        }
      }
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "builtin_crosscheck_table: %s\n", error.what());
    return 2;
  }
  return 0;
}
