// cachewise::SummarisedLoop — a loop whose trips the trace jumped ahead instead of interpreting
// (the front end's loop summaries, docs/ptx-extraction.md "Loop summaries").
#pragma once

#include <cstdint>
#include <string>

namespace cachewise {

struct SummarisedLoop {
  std::string location;               ///< "gemm.cu:31": the loop's first instruction
  std::int64_t runs = 0;              ///< a warp's runs of the loop that jumped
  std::int64_t trips_interpreted = 0; ///< over those runs
  std::int64_t trips_skipped = 0;     ///< extrapolated, over those runs
};

} // namespace cachewise
