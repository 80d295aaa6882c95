// The probe's stage list: the order in which the stages (probe_stages.hpp, one group per file)
// run, each from its own fixed seed, with progress and a stop check between them.
#include <chrono>
#include <stdexcept>

#include "cachewise/kernels.hpp"
#include "probe_stages.hpp"

namespace cachewise::probe {
namespace detail {
namespace {

struct Stage {
  const char* name;
  void (Probe::*run)();
  /// The stage's seed is kSeed + this: fixed per stage, so its chains and eviction targets do not
  /// depend on how many draws earlier stages made, nor on stages added later.
  int seed_offset;
};

} // namespace

DeviceProfile Probe::run() {
  kernels::require_device(options_.device);
  const std::vector<Stage> stages{
      {"device identity and clocks", &Probe::identity, 0},
      {"L1 hit latency", &Probe::l1_latency, 1},
      {"L2 near/far latency and partition interleave", &Probe::l2_near_far, 2},
      {"SM placement (near partition per SM, block dispatch order)", &Probe::sm_placement, 3},
      {"DRAM latency", &Probe::dram_latency, 4},
      {"L2 latency plateaus (full-cycle chase from SMs of both sides)", &Probe::l2_chase, 20},
      {"L1 capacity (default carveout)", &Probe::l1_capacity_default, 5},
      {"L1 capacity (max L1 carveout)", &Probe::l1_capacity_max_carveout, 6},
      {"L1 bandwidth and bandwidth knee", &Probe::l1_bandwidth, 7},
      {"L1 sector and line size", &Probe::l1_line, 8},
      {"L1 ways and replacement", &Probe::l1_ways, 9},
      {"L2 capacity (latency sweep)", &Probe::l2_capacity, 10},
      {"L2 bandwidth and bandwidth knee", &Probe::l2_bandwidth, 11},
      {"L2 fill granularity and line size", &Probe::l2_line, 12},
      {"L2 ways and replacement", &Probe::l2_ways, 13},
      {"DRAM bandwidth", &Probe::dram_bandwidth, 14},
      {"DRAM spread writes (mirrored tile copies)", &Probe::spread_writes, 15},
      {"shared memory banks", &Probe::shared_banks, 16},
      {"TLB reach and page size", &Probe::tlb, 17},
      {"write policy (store allocation)", &Probe::store_allocation, 18},
      {"clocks after", &Probe::clocks_after, 19},
  };
  const auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (stop_requested_ && stop_requested_()) throw ProbeCancelled("probe interrupted");
    if (progress_) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      progress_({stages[i].name, static_cast<int>(i + 1), static_cast<int>(stages.size()), elapsed});
    }
    random_.seed(static_cast<std::uint64_t>(kSeed + stages[i].seed_offset));
    try {
      (this->*stages[i].run)();
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("probe stage '") + stages[i].name + "': " + e.what());
    }
  }
  buffer_.reset();
  return std::move(profile_);
}

} // namespace detail

DeviceProfile run_probe(const ProbeOptions& options, const ProgressCallback& progress,
                        const StopRequested& stop_requested) {
  return detail::Probe(options, progress, stop_requested).run();
}

} // namespace cachewise::probe
