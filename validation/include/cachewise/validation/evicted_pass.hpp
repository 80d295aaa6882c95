// cachewise::validation evicted passes: one CUPTI counter pass of a launch as the model predicts it: L2 evicted before
// (user replay), and the DRAM writes of the dirty lines the launch leaves in L2 counted as its own. Shared by the
// validation of a built-in family and of a user kernel.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cachewise::validation {

/// What a pass writes to DRAM when its first range dirties nothing (an eviction, then the
/// eviction that follows every launch): writes that are not the launch's.
double pass_baseline_dram_write_bytes();

/// `counters` of one `launch` from an evicted L2; dram__bytes_write.sum is the launch's range
/// plus the eviction right after it (which writes back what the launch left dirty) less
/// `baseline_bytes`, at least 0.
std::map<std::string, double> measure_evicted_pass(const std::vector<std::string>& counters,
                                                   const std::function<void()>& launch, double baseline_bytes);

} // namespace cachewise::validation
