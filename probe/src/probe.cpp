// The probe's stages: each runs microbenchmarks (benchmarks.hpp), turns the raw timings into
// values with the CPU analysis (analysis.hpp), and fills its part of the profile. Every value
// carries its method, sample count, spread and confidence; the raw curves go into the profile.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <unordered_set>

#include "analysis.hpp"
#include "benchmarks.hpp"
#include "cachewise/kernels.hpp"
#include "cachewise/probe.hpp"
#include "device_info.hpp"

namespace cachewise::probe {
namespace {

using gpu::CacheOp;
using gpu::DeviceBuffer;
using Offsets = std::vector<std::uint64_t>;

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;
constexpr std::uint64_t kGiB = 1024 * kMiB;
/// Node spacing of the capacity chases: one node per 128 B keeps one node per line for any line
/// size up to 128 B (the line-size stage checks that choice).
constexpr std::uint64_t kNode = 128;
constexpr std::uint64_t kSector = 32;
constexpr int kSeed = 20261129; // fixed: two probes build the same chains
/// The probe's one device buffer: sweeps and the TLB test use [0, 8 GiB); single-purpose regions
/// sit at fixed offsets above 2 GiB (named where used); the L2 flush streams [7 GiB, 7.5 GiB).
constexpr std::uint64_t kBufferBytes = 9 * kGiB;
constexpr std::uint64_t kFlushRegion = 7 * kGiB;
constexpr std::uint64_t kScriptCalibrationRegion = 6 * kGiB + 256 * kMiB;
/// Eviction-set candidates: L1 in the first 64 MiB, L2 in the 768 MiB after.
constexpr std::uint64_t kEvictionSetRegion = 3 * kGiB;

std::string format_bytes(double bytes) {
  std::ostringstream out;
  out << std::setprecision(4);
  if (bytes >= kGiB) {
    out << bytes / kGiB << " GiB";
  } else if (bytes >= kMiB) {
    out << bytes / kMiB << " MiB";
  } else if (bytes >= kKiB) {
    out << bytes / kKiB << " KiB";
  } else {
    out << bytes << " B";
  }
  return out.str();
}

std::string format_number(double value, int precision = 1) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::ostringstream out;
  out << std::put_time(&utc, "%Y-%m-%dT%H:%M:%SZ");
  return out.str();
}

Measured measured(double value, const Provenance& provenance) { return {value, provenance}; }

/// A value that could not be measured well: written with low confidence, never as fact.
Provenance low(std::string method, std::int64_t samples = 0, double spread = 0.0) {
  return {std::move(method), samples, spread, Confidence::low};
}

double median(std::vector<double> values) { return summarize(std::move(values)).median; }

class Probe {
public:
  Probe(const ProbeOptions& options, const ProgressCallback& progress, const StopRequested& stop_requested)
      : options_(options), progress_(progress), stop_requested_(stop_requested), random_(kSeed) {}

  DeviceProfile run() {
    kernels::require_device(options_.device);
    const std::vector<std::pair<const char*, void (Probe::*)()>> stages{
        {"device identity and clocks", &Probe::identity},
        {"L1 hit latency", &Probe::l1_latency},
        {"L2 near/far latency and partition interleave", &Probe::l2_near_far},
        {"SM placement (near partition per SM, block dispatch order)", &Probe::sm_placement},
        {"DRAM latency", &Probe::dram_latency},
        {"L1 capacity (default carveout)", &Probe::l1_capacity_default},
        {"L1 capacity (max L1 carveout)", &Probe::l1_capacity_max_carveout},
        {"L1 bandwidth and bandwidth knee", &Probe::l1_bandwidth},
        {"L1 sector and line size", &Probe::l1_line},
        {"L1 ways and replacement", &Probe::l1_ways},
        {"L2 capacity (latency sweep)", &Probe::l2_capacity},
        {"L2 bandwidth and bandwidth knee", &Probe::l2_bandwidth},
        {"L2 fill granularity and line size", &Probe::l2_line},
        {"L2 ways and replacement", &Probe::l2_ways},
        {"DRAM bandwidth", &Probe::dram_bandwidth},
        {"DRAM spread writes (mirrored tile copies)", &Probe::spread_writes},
        {"shared memory banks", &Probe::shared_banks},
        {"TLB reach and page size", &Probe::tlb},
        {"write policy (store allocation)", &Probe::store_allocation},
        {"clocks after", &Probe::clocks_after},
    };
    const auto started = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < stages.size(); ++i) {
      if (stop_requested_ && stop_requested_()) throw ProbeCancelled("probe interrupted");
      if (progress_) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        progress_({stages[i].first, static_cast<int>(i + 1), static_cast<int>(stages.size()), elapsed});
      }
      // Each stage draws from its own fixed seed: its chains and eviction targets do not depend on
      // how many draws earlier stages made (refinements follow the measured knees).
      random_.seed(kSeed + i);
      try {
        (this->*stages[i].second)();
      } catch (const std::exception& e) {
        throw std::runtime_error(std::string("probe stage '") + stages[i].first + "': " + e.what());
      }
    }
    buffer_.reset();
    return std::move(profile_);
  }

private:
  // ----- sizes and repeats ------------------------------------------------------------------
  bool quick() const { return options_.quick; }
  int repeats() const { return quick() ? 3 : 7; }
  std::uint64_t l2_reported() const { return static_cast<std::uint64_t>(profile_.device.l2_bytes_reported); }
  int sm_count() const { return profile_.device.sm_count; }

  // ----- chains -----------------------------------------------------------------------------

  /// Offsets [first, first + bytes) every `spacing` bytes.
  static Offsets contiguous(std::uint64_t first, std::uint64_t bytes, std::uint64_t spacing) {
    Offsets offsets;
    for (std::uint64_t offset = first; offset + spacing <= first + bytes; offset += spacing) offsets.push_back(offset);
    return offsets;
  }

  Offsets shuffled(Offsets offsets) {
    std::shuffle(offsets.begin(), offsets.end(), random_);
    return offsets;
  }

  /// `count` distinct entries of `offsets`, in random order.
  Offsets sample(const Offsets& offsets, std::size_t count) {
    if (count >= offsets.size()) return shuffled(offsets);
    std::unordered_set<std::size_t> chosen;
    Offsets picked;
    std::uniform_int_distribution<std::size_t> pick(0, offsets.size() - 1);
    while (picked.size() < count) {
      const std::size_t index = pick(random_);
      if (chosen.insert(index).second) picked.push_back(offsets[index]);
    }
    return picked;
  }

  /// M aligned blocks of `block` bytes at random, well spread positions of [first, first + span):
  /// the span is cut into M equal slots and each slot holds one block at a random aligned place.
  Offsets random_blocks(std::uint64_t first, std::uint64_t span, std::uint64_t block, std::uint64_t count,
                        std::uint64_t node_spacing) {
    Offsets offsets;
    const std::uint64_t slot = span / count / block * block;
    if (slot < block) throw std::runtime_error("random_blocks: span too small");
    std::uniform_int_distribution<std::uint64_t> place(0, slot / block - 1);
    for (std::uint64_t m = 0; m < count; ++m) {
      const std::uint64_t start = first + m * slot + place(random_) * block;
      for (std::uint64_t offset = 0; offset < block; offset += node_spacing) offsets.push_back(start + offset);
    }
    return offsets;
  }

  /// Mean cycles per hop of a full-cycle chase through `order` (one warm traversal, then at least
  /// two timed ones); the median over `runs` runs of the same chain.
  double chase_cycle(const Offsets& order, CacheOp op, int runs = 1, int carveout = -1) {
    gpu::write_chain(*buffer_, order);
    gpu::ChaseOptions chase;
    chase.op = op;
    chase.warm_hops = static_cast<std::int64_t>(order.size());
    chase.timed_hops = std::max<std::int64_t>(2 * static_cast<std::int64_t>(order.size()), 2048);
    chase.l1_carveout_percent = carveout;
    std::vector<double> values;
    for (int r = 0; r < runs; ++r) values.push_back(gpu::chase_mean_cycles(*buffer_, order.front(), chase));
    return median(values);
  }

  /// Evicts L2 by streaming several times its size of unrelated data through it.
  void flush_l2() {
    gpu::stream_through_l2(*buffer_, kFlushRegion, std::min<std::uint64_t>(4 * l2_reported(), 512 * kMiB));
  }

  void add_curve(std::string name, std::string x_unit, std::string y_unit, std::vector<Point> points) {
    std::ranges::sort(points, {}, &Point::first);
    profile_.curves.push_back({std::move(name), std::move(x_unit), std::move(y_unit), std::move(points)});
  }

  // ----- stages -----------------------------------------------------------------------------

  void identity() {
    DeviceIdentity& device = profile_.device;
    read_device_identity(options_.device, device, profile_.shared_memory);
    device.probed_at = utc_now();
    device.probe_command = options_.command_line;
    device.probe_version = std::string("cachewise probe 1") + (quick() ? " (quick)" : "");
    // One buffer for every stage, laid out in fixed regions (see kBufferBytes).
    buffer_ = std::make_unique<DeviceBuffer>(kBufferBytes);
    // A 2 ms spin first, so the clocks read are those of a busy GPU.
    const double spun_clock_mhz = gpu::measured_sm_clock_mhz();
    sm_ids_ = gpu::sm_ids();
    home_sm_ = sm_ids_.front();
    const std::optional<ObservedClocks> clocks = read_clocks_nvml(options_.device);
    device.sm_clock_mhz_before = clocks ? clocks->sm_mhz : static_cast<int>(std::lround(spun_clock_mhz));
    device.memory_clock_mhz = clocks ? clocks->memory_mhz : 0;
  }

  void l1_latency() {
    const Offsets order = shuffled(contiguous(0, 4 * kKiB, kNode));
    gpu::write_chain(*buffer_, order);
    gpu::ChaseOptions chase;
    chase.op = CacheOp::ca;
    chase.warm_hops = 256;
    chase.timed_hops = 4096;
    std::vector<double> samples;
    for (int r = 0; r < 2 * repeats(); ++r) samples.push_back(gpu::chase_mean_cycles(*buffer_, order.front(), chase));
    const Summary summary = summarize(samples);
    l1_hit_ = summary.median;
    profile_.l1.hit_latency_cycles = measured(
        l1_hit_, provenance_from("pointer chase, ld.global.ca, 4 KiB working set of 128 B nodes in random cyclic "
                                 "order, clock64 over 4096 dependent loads; median of runs",
                                 summary));
  }

  /// Latency vs working set with ld.global.ca, refined near the knee; returns (capacity, curve).
  std::pair<Measured, std::vector<Point>> l1_sweep(int carveout) {
    const std::vector<double> coarse_kib =
        quick() ? std::vector<double>{16, 64, 128, 160, 192, 224, 256, 320, 512}
                : std::vector<double>{8, 16, 32, 64, 96, 128, 160, 176, 192, 208, 224, 240, 256, 288, 320, 384, 512};
    const int runs = quick() ? 1 : 3;
    std::vector<Point> curve;
    auto measure_at = [&](double kib) {
      const Offsets order = shuffled(contiguous(0, static_cast<std::uint64_t>(kib * kKiB), kNode));
      curve.emplace_back(kib * kKiB, chase_cycle(order, CacheOp::ca, runs, carveout));
    };
    for (double kib : coarse_kib) measure_at(kib);
    const double step = quick() ? 8.0 * kKiB : 4.0 * kKiB;
    std::optional<Rise> rise = find_rise(curve);
    if (!rise) {
      return {measured(curve.back().first, low("no L1 knee found up to the largest working set")), curve};
    }
    for (double x : grid(rise->last_flat_x + step, rise->first_risen_x - step, step)) measure_at(x / kKiB);
    std::ranges::sort(curve, {}, &Point::first);
    rise = find_rise(curve);
    const double capacity = rise->last_flat_x;
    std::ostringstream method;
    method << "working-set sweep, pointer chase ld.global.ca over 128 B nodes in random cyclic order (one warm "
              "traversal, then >= 2 timed), refined in "
           << step / kKiB << " KiB steps; capacity = last working set on the hit plateau ("
           << format_number(rise->base_level) << " cycles; first point above: " << format_bytes(rise->first_risen_x)
           << " at " << format_number(curve[rise->last_flat_index + 1].second) << " cycles)";
    const Confidence confidence = quick() ? Confidence::medium : Confidence::high;
    return {measured(capacity, {method.str(), static_cast<std::int64_t>(curve.size()),
                                step / capacity, confidence}),
            curve};
  }

  void l1_capacity_default() {
    auto [capacity, curve] = l1_sweep(-1);
    profile_.l1.capacity_bytes = capacity;
    add_curve("L1 chase (default carveout)", kWorkingSetUnit, kLatencyUnit, curve);
  }

  void l1_capacity_max_carveout() {
    auto [capacity, curve] = l1_sweep(0);
    capacity.provenance.method = "carveout 0 (max L1): " + capacity.provenance.method;
    profile_.l1.capacity_max_carveout_bytes = capacity;
    add_curve("L1 chase (max L1 carveout)", kWorkingSetUnit, kLatencyUnit, curve);
  }

  static double gb_per_s(std::uint64_t bytes, double seconds) { return static_cast<double>(bytes) / seconds / 1e9; }

  /// Bandwidth samples (GB/s) of one configuration.
  Summary bandwidth(const gpu::BandwidthRun& run) {
    const std::uint64_t moved = gpu::bandwidth_bytes_moved(run);
    std::vector<double> rates;
    for (double seconds : gpu::bandwidth_seconds(*buffer_, run)) rates.push_back(gb_per_s(moved, seconds));
    return summarize(rates);
  }

  /// Passes so that one launch moves about `target` bytes.
  static int passes_for(std::uint64_t bytes_per_pass, double target) {
    return std::max(1, static_cast<int>(target / static_cast<double>(bytes_per_pass)));
  }

  void l1_bandwidth() {
    // Two blocks per SM, each re-reading its own range with plain 16-byte loads: L1 hits while
    // both ranges fit, then the SM's share of L2 bandwidth.
    constexpr double kBlocksPerSm = 2;
    const double blocks = kBlocksPerSm * sm_count();
    const double target = quick() ? 4e9 : 16e9;
    gpu::BandwidthRun run;
    run.sharing = gpu::Sharing::per_block;
    run.op = CacheOp::plain;
    run.repeats = repeats();
    run.bytes = 16 * kKiB;
    run.passes = passes_for(static_cast<std::uint64_t>(static_cast<double>(run.bytes) * blocks), target);
    const Summary value = bandwidth(run);
    profile_.l1.read_bandwidth_gb_per_s = measured(
        value.median, provenance_from("2 blocks x 1024 threads per SM, each block re-reading its own 16 KiB with plain "
                                      "16-byte loads (4 in flight per thread); whole chip, CUDA events; median of "
                                      "launches",
                                      value));
    // Cross-check of the L1 capacity: per-SM bandwidth falls once the SM's data leaves L1.
    std::vector<Point> curve;
    const std::vector<double> per_sm_kib = quick() ? std::vector<double>{64, 128, 192, 256, 320, 384}
                                                   : std::vector<double>{32, 64, 96, 128, 160, 176, 192, 208, 224, 240,
                                                                         256, 288, 320, 384, 512};
    run.repeats = quick() ? 1 : 3;
    for (double kib : per_sm_kib) {
      run.bytes = static_cast<std::uint64_t>(kib * kKiB / kBlocksPerSm);
      run.passes = passes_for(static_cast<std::uint64_t>(static_cast<double>(run.bytes) * blocks), target / 2);
      curve.emplace_back(kib * kKiB, bandwidth(run).median);
    }
    add_curve("L1 read bandwidth vs per-SM working set", "bytes (per-SM working set)", "GB/s", curve);
    cross_check_capacity(profile_.l1.capacity_bytes, find_drop(curve), "bandwidth knee (plain 16-byte loads)");
  }

  /// Folds a second method's knee into a capacity's provenance: agreement within one bracket of
  /// the coarser sweep keeps the confidence, disagreement lowers it.
  static void cross_check_capacity(Measured& capacity, const std::optional<Rise>& knee, const std::string& what) {
    if (!knee) {
      capacity.provenance.method += "; cross-check by " + what + ": no knee found";
      capacity.provenance.confidence = weakest(capacity.provenance.confidence, Confidence::medium);
      return;
    }
    const bool agrees = capacity.value >= knee->last_flat_x * 0.9 && capacity.value <= knee->first_risen_x * 1.1;
    capacity.provenance.method += "; cross-check by " + what + ": knee between " + format_bytes(knee->last_flat_x) +
                                  " and " + format_bytes(knee->first_risen_x) + (agrees ? " (agrees)" : " (DISAGREES)");
    if (!agrees) capacity.provenance.confidence = weakest(capacity.provenance.confidence, Confidence::low);
  }

  /// Script-measured latencies of the second of two loads at offsets 0 and d of fresh lines.
  std::vector<Point> partial_line_curve(std::uint64_t region, const std::vector<double>& offsets, bool through_l1,
                                        int lines) {
    std::vector<Point> curve;
    std::uint64_t line_base = region;
    for (double d : offsets) {
      std::vector<gpu::ScriptStep> steps;
      for (int i = 0; i < lines; ++i, line_base += 4 * kKiB) {
        const auto offset = static_cast<std::uint64_t>(d);
        if (through_l1) {
          steps.push_back({gpu::Op::load_cg, line_base, false});           // bring the line into L2
          steps.push_back({gpu::Op::load_cg, line_base + offset, false});  // and the tested part too
          steps.push_back({gpu::Op::load_ca, line_base, false});           // L1 miss: fills from L2
          steps.push_back({gpu::Op::load_ca, line_base + offset, true});   // hit iff it came with the fill
        } else {
          steps.push_back({gpu::Op::load_cg, line_base, false});           // L2 miss: fills from DRAM
          steps.push_back({gpu::Op::load_cg, line_base + offset, true});   // hit iff it came with the fill
        }
      }
      const std::vector<std::uint32_t> cycles = gpu::run_script(*buffer_, steps, home_sm_);
      curve.emplace_back(d, median(std::vector<double>(cycles.begin(), cycles.end())));
    }
    return curve;
  }

  /// Nodes of the block test: `fraction` of `capacity` as random aligned blocks of `block` bytes in
  /// [0, span), a node every 32 B. Returns (footprint in bytes, nodes).
  std::pair<double, Offsets> block_test_nodes(double capacity, double fraction, double block, std::uint64_t span) {
    const auto footprint = static_cast<std::uint64_t>(capacity * fraction);
    const std::uint64_t count = std::max<std::uint64_t>(1, footprint / static_cast<std::uint64_t>(block));
    return {static_cast<double>(count) * block,
            random_blocks(0, span, static_cast<std::uint64_t>(block), count, kSector)};
  }

  /// The line size from the block test's knees (see smallest_saturating_block); `method` describes
  /// the test and gets the knees appended.
  static Measured line_from_block_test(const std::vector<Point>& knees, std::size_t blocks_tried, double sector,
                                       std::string method) {
    for (const auto& [block, knee] : knees) {
      method += ' ';
      method += format_number(block, 0);
      method += " B->";
      method += format_bytes(knee);
    }
    const std::optional<double> line = smallest_saturating_block(knees);
    if (!line || std::fmod(*line, sector) != 0.0) return measured(128, low(method + "; inconclusive, 128 B written"));
    return measured(*line, {method, static_cast<std::int64_t>(knees.size()), 0.0,
                            knees.size() == blocks_tried ? Confidence::high : Confidence::medium});
  }

  void l1_line() {
    // Sector: touch offset 0 of an L2-resident line through L1, then time offset d.
    const std::uint64_t region = 2 * kGiB;
    buffer_->zero(region, 64 * kMiB);
    const std::vector<double> offsets{8, 16, 32, 64, 96};
    const std::vector<Point> fill = partial_line_curve(region, offsets, true, 16);
    add_curve("L1 partial-line test (second load at offset d)", "bytes (offset)", kLatencyUnit, fill);
    const std::optional<double> sector = fill_granularity(fill, l1_miss_threshold_in_script());
    if (sector) {
      l1_sector_ = *sector;
      profile_.l1.sector_bytes =
          measured(*sector, {"partial-line test: load offset 0 of an L2-resident line with ld.global.ca, then time "
                             "offset d; offsets below the first L1 miss came with the fill (16 lines per offset, "
                             "median)",
                             16 * static_cast<std::int64_t>(offsets.size()), 0.0, Confidence::high});
    } else {
      l1_sector_ = kSector;
      profile_.l1.sector_bytes = measured(kSector, low("partial-line test inconclusive; 32 B assumed"));
    }

    // Line: the block test (see smallest_saturating_block).
    const double capacity = profile_.l1.capacity_bytes.value;
    const std::vector<double> blocks = quick() ? std::vector<double>{32, 64, 128, 256}
                                               : std::vector<double>{32, 64, 128, 256, 512};
    const std::vector<double> fractions = quick() ? std::vector<double>{0.125, 0.25, 0.375, 0.5, 0.75, 1, 1.25, 2}
                                                  : std::vector<double>{0.0625, 0.125, 0.1875, 0.25, 0.3125, 0.375, 0.5,
                                                                        0.625, 0.75, 0.875, 1, 1.125, 1.25, 1.5, 2};
    std::vector<Point> knees;
    for (double block : blocks) {
      std::vector<Point> curve;
      for (double fraction : fractions) {
        const auto [footprint, nodes] = block_test_nodes(capacity, fraction, block, 64 * kMiB);
        curve.emplace_back(footprint, chase_cycle(shuffled(nodes), CacheOp::ca));
      }
      add_curve("L1 block test, " + format_number(block, 0) + " B blocks", "bytes (footprint)", kLatencyUnit, curve);
      const std::optional<Rise> rise = find_rise(curve);
      if (rise) knees.emplace_back(block, rise->last_flat_x);
    }
    profile_.l1.line_bytes = line_from_block_test(
        knees, blocks.size(), l1_sector_,
        "block test: random aligned blocks of B bytes, every 32 B of each chased with ld.global.ca; the footprint at "
        "the capacity knee grows with B until B reaches the line. Knees:");
  }

  /// One level's eviction-set search (see reduce_eviction_set).
  struct EvictionLevel {
    const char* label = "L1";
    CacheOp op = CacheOp::ca;
    std::uint64_t region = 0;   ///< candidates and targets are random 128 B lines of [region, region + span)
    std::uint64_t span = 0;
    double capacity_bytes = 0;  ///< candidates: 2x it, then 4x if that does not evict
    std::string capacity_source; ///< where capacity_bytes comes from (method text)
    bool parallel_walk = false; ///< kMaxWalkers threads walk the candidates (else one thread, in order)
    bool flush_l2_first = false; ///< evict L2 after writing the chains (L2: the writes filled it)
    int targets = 1;            ///< at most this many targets, in a fixed order
    std::size_t enough_agreeing = 3; ///< stop once this many minimal sets share one size
    double budget_s = 1;        ///< for the whole level; targets left when it runs out are skipped
    std::size_t max_calls_per_target = 1;
  };

  /// One target's search: its calibration and reduction.
  struct EvictionTarget {
    std::uint64_t line = 0;
    std::size_t candidates = 0;
    EvictionThreshold calibration;
    EvictionSetResult result;
  };

  struct EvictionFindings {
    std::vector<EvictionTarget> targets; ///< the targets tried, in order
    std::optional<WaysVote> ways;
    ReplacementGuess replacement;
    int fingerprint_trials = 0; ///< per probed line
    std::string method;
  };

  std::size_t chain_length_for(const EvictionLevel& level, std::size_t lines) const {
    if (!level.parallel_walk) return std::max<std::size_t>(lines, 1);
    return std::max<std::size_t>(1, (lines + gpu::kMaxWalkers - 1) / gpu::kMaxWalkers);
  }

  /// Cycles of the probe load after (optionally) loading `target` and walking `lines` `walks` times.
  std::uint32_t eviction_probe(const EvictionLevel& level, const Offsets& lines, std::size_t chain_length,
                               std::optional<std::uint64_t> target, std::uint64_t probe, int walks) {
    gpu::write_chains(*buffer_, lines, chain_length);
    if (level.flush_l2_first) flush_l2();
    gpu::EvictionTest test;
    test.op = level.op;
    test.has_target = target.has_value();
    test.target = target.value_or(0);
    test.probe = probe;
    test.chain_length = chain_length;
    test.walks = walks;
    test.sm = home_sm_;
    return gpu::eviction_test_cycles(*buffer_, lines, test);
  }

  /// The probe's word in a line: in the first sector, apart from the chain words (0 and 8).
  static constexpr std::uint64_t kProbeWord = 16;
  /// Calibration runs per target: probe after just loading it, and after walking all candidates.
  static constexpr int kCalibrationRuns = 5;

  /// The oracle's cycles for `target` after walking `lines` (twice, as in the reduction).
  std::uint32_t eviction_oracle_cycles(const EvictionLevel& level, std::uint64_t target, const Offsets& lines) {
    return eviction_probe(level, lines, chain_length_for(level, lines.size()), target, target + kProbeWord, 2);
  }

  /// Threshold of one target from its own hit and evicted probe times (see eviction_threshold).
  EvictionThreshold calibrate_target(const EvictionLevel& level, std::uint64_t target, const Offsets& candidates,
                                     std::vector<Point>& calibration_curve, double x) {
    std::vector<double> hits;
    std::vector<double> evicted;
    for (int r = 0; r < kCalibrationRuns; ++r) {
      hits.push_back(eviction_oracle_cycles(level, target, {}));
      evicted.push_back(eviction_oracle_cycles(level, target, candidates));
      calibration_curve.emplace_back(x, hits.back());
      calibration_curve.emplace_back(x + 0.5, evicted.back());
    }
    return eviction_threshold(hits, evicted);
  }

  /// Minimal eviction sets for up to `level.targets` targets (stopping once enough agree), then
  /// the replacement fingerprint on them.
  EvictionFindings find_eviction_sets(const EvictionLevel& level) {
    EvictionFindings findings;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(level.budget_s));
    const auto out_of_time = [deadline] { return std::chrono::steady_clock::now() > deadline; };
    const std::string label = level.label;
    const auto largest_count = static_cast<std::size_t>(4 * level.capacity_bytes / kNode);
    const Offsets pool = sample(contiguous(level.region, level.span, kNode),
                                largest_count + static_cast<std::size_t>(level.targets));
    const Offsets target_lines(pool.end() - level.targets, pool.end());
    const Offsets all_candidates(pool.begin(), pool.end() - level.targets);

    EvictionSetOptions options;
    options.max_oracle_calls = level.max_calls_per_target;
    options.out_of_time = out_of_time;
    std::vector<Point> calibration;
    std::vector<Point> sizes;
    std::vector<std::size_t> minimal_sizes;
    auto enough = [&] {
      const std::optional<WaysVote> vote = ways_from_minimal_sets(minimal_sizes);
      return vote && vote->agreeing >= level.enough_agreeing;
    };
    for (std::size_t t = 0; t < target_lines.size() && !out_of_time() && !enough(); ++t) {
      EvictionTarget target;
      target.line = target_lines[t];
      Offsets candidates;
      for (double factor : {2.0, 4.0}) {
        target.candidates = static_cast<std::size_t>(factor * level.capacity_bytes / kNode);
        candidates = sample(all_candidates, target.candidates);
        target.calibration = calibrate_target(level, target.line, candidates, calibration, static_cast<double>(t));
        if (target.calibration.separated) break; // else 4x the capacity, once
      }
      if (target.calibration.separated) {
        const double threshold = target.calibration.threshold;
        const EvictionOracle oracle = [&](std::uint64_t line, const Offsets& lines) {
          return eviction_oracle_cycles(level, line, lines) > threshold;
        };
        target.result = reduce_eviction_set(target.line, candidates, oracle, options);
        add_curve(label + " eviction-set reduction, target " + std::to_string(t) + ": lines left vs oracle calls",
                  "oracle calls", "lines", target.result.progress);
      } else {
        target.result.stopped = "the candidate set does not evict the target (probe p25 after walking it under 1.3x "
                                "the just-loaded p75)";
      }
      if (target.result.minimal) minimal_sizes.push_back(target.result.lines.size());
      sizes.emplace_back(static_cast<double>(t), target.result.minimal ? static_cast<double>(target.result.lines.size()) : 0.0);
      findings.targets.push_back(std::move(target));
    }
    add_curve(label + " eviction test calibration: probe cycles per target (x = target: line just loaded; target + "
                      "0.5: after walking the whole candidate set)",
              "target", "cycles (probe load, timing overhead included)", calibration);
    add_curve(label + " minimal eviction set size per target (0: none found)", "target", "lines", sizes);

    std::ostringstream method;
    method << "minimal eviction sets by group testing (hash-agnostic): random 128 B lines of a "
           << format_bytes(static_cast<double>(level.span)) << " region, 2x " << level.capacity_source << " ("
           << format_bytes(level.capacity_bytes) << ") as candidates (4x when 2x does not evict); oracle = one block on "
           << "SM " << home_sm_ << ": " << (level.op == CacheOp::ca ? "ld.global.ca" : "ld.global.cg")
           << " of the target, the candidates walked twice by "
           << (level.parallel_walk ? "1024 threads (one pointer cycle each)" : "one thread (one pointer cycle)")
           << (level.flush_l2_first ? " after evicting L2" : "")
           << ", then the target's line timed; threshold per target midway between its probe just loaded and the p25 "
              "after walking all candidates ("
           << kCalibrationRuns << " runs each); answers = majority of 3; groups dropped while the rest still evicts, "
           << "doubling the group count when none can go, until no single line can go; a target is given up when a "
              "pass over more than "
           << options.max_ways << " groups drops too few for a set of at most " << options.max_ways
           << " lines; targets in a fixed order until " << level.enough_agreeing << " minimal sets agree (at most "
           << level.targets << "). Per target (hit / evicted cycles; candidates -> result, oracle calls):";
    for (const EvictionTarget& target : findings.targets) {
      const EvictionSetResult& result = target.result;
      method << " [" << format_number(target.calibration.hit.median, 0) << " / "
             << format_number(target.calibration.evicted.p25, 0) << "; " << target.candidates << "->"
             << (result.minimal ? std::to_string(result.lines.size()) : "none (" + result.stopped + ")") << ", "
             << result.oracle_calls << (result.backtracks > 0 ? ", " + std::to_string(result.backtracks) + " backtracks" : "")
             << "]";
    }
    if (out_of_time() && !enough()) {
      method << "; time budget (" << format_number(level.budget_s, 0) << " s) ran out";
    }
    findings.ways = ways_from_minimal_sets(minimal_sizes);
    if (!findings.ways) {
      method << "; no size shared by at least 2 minimal sets and more than half of them (" << minimal_sizes.size()
             << " minimal sets): ways not written";
    }
    findings.method = method.str();
    if (findings.ways) findings.replacement = replacement_fingerprint(level, findings);
    return findings;
  }

  /// The eviction fingerprint on the minimal sets of the ways found: lines 0..W-1 = a minimal set,
  /// line W = its target (all in one set); fill 0..W-1, re-touch 0, insert W, then time line 0 or 1.
  ReplacementGuess replacement_fingerprint(const EvictionLevel& level, EvictionFindings& findings) {
    std::vector<const EvictionTarget*> usable;
    for (const EvictionTarget& target : findings.targets) {
      if (target.result.minimal && static_cast<double>(target.result.lines.size()) == findings.ways->ways) {
        usable.push_back(&target);
      }
    }
    const int trials = quick() ? 4 : 8;
    findings.fingerprint_trials = trials;
    int kept[2] = {0, 0};
    std::vector<Point> probes[2];
    for (int line = 0; line < 2; ++line) {
      for (int trial = 0; trial < trials; ++trial) {
        const EvictionTarget& target = *usable[static_cast<std::size_t>(trial) % usable.size()];
        const Offsets& set = target.result.lines;
        Offsets sequence = set;
        sequence.push_back(set[0] + 8); // the re-touch: another word of line 0, so the cycle stays simple
        sequence.push_back(target.line);
        const std::uint32_t cycles = eviction_probe(level, sequence, sequence.size(), std::nullopt,
                                                    set[static_cast<std::size_t>(line)] + kProbeWord, 1);
        if (cycles < target.calibration.threshold) ++kept[line];
        probes[line].emplace_back(trial, cycles);
      }
      add_curve(std::string(level.label) + " replacement fingerprint: probe cycles of line " + std::to_string(line) +
                    " per trial",
                "trial", "cycles (probe load, timing overhead included)", probes[line]);
    }
    return classify_replacement(kept[0], kept[1], trials);
  }

  /// Writes ways and replacement from the eviction-set findings (or says why there are none).
  static void record_eviction_findings(const EvictionFindings& findings, std::optional<Measured>& ways,
                                       Replacement& replacement) {
    if (!findings.ways) {
      replacement = {ReplacementPolicy::unknown, "no associativity found", low(findings.method)};
      return;
    }
    const WaysVote& vote = *findings.ways;
    // High: at least 3 sets, and every target tried gave that size; medium: a majority of at least 2.
    Confidence confidence = vote.agreeing >= 3 && vote.agreeing == findings.targets.size() ? Confidence::high
                                                                                            : Confidence::medium;
    // Random replacement needs more lines than ways to evict reliably: the set size overstates them.
    if (findings.replacement.policy == ReplacementPolicy::random) confidence = Confidence::low;
    std::ostringstream method;
    method << findings.method << "; ways = most common minimal size (" << vote.agreeing << " of " << vote.sets
           << " minimal sets, " << findings.targets.size() << " targets tried), the associativity for LRU/FIFO-like "
           << "policies";
    ways = measured(vote.ways, {method.str(), static_cast<std::int64_t>(vote.sets), 0.0, confidence});
    replacement = {findings.replacement.policy, findings.replacement.fingerprint,
                   {"eviction fingerprint on the minimal eviction sets (lines 0..W-1 = a minimal set, line W = its "
                    "target): fill, re-touch line 0, insert line W, time line 0 or line 1 with the same oracle kernel "
                    "and the target's threshold",
                    2 * findings.fingerprint_trials, 0.0,
                    findings.replacement.policy == ReplacementPolicy::unknown ? Confidence::low : Confidence::medium}};
  }

  void l1_ways() {
    EvictionLevel level;
    level.label = "L1";
    level.op = CacheOp::ca;
    level.region = kEvictionSetRegion;
    level.span = 64 * kMiB;
    level.capacity_bytes = profile_.l1.capacity_bytes.value;
    level.capacity_source = "the measured capacity";
    level.targets = quick() ? 4 : 6;
    level.enough_agreeing = quick() ? 2 : 3;
    level.budget_s = quick() ? 3 : 10;
    level.max_calls_per_target = quick() ? 3000 : 8000;
    const EvictionFindings findings = find_eviction_sets(level);
    record_eviction_findings(findings, profile_.l1.ways, profile_.l1.replacement);
  }

  void l2_near_far() {
    // Per-address latency from the home SM at 32 B spacing; two clusters = near and far partition.
    const std::uint64_t region = 5 * kGiB;
    const std::uint64_t span = quick() ? 256 * kKiB : 1 * kMiB;
    const Offsets addresses = contiguous(region, span, kSector);
    gpu::write_self_loops(*buffer_, addresses);
    const std::vector<double> latencies = gpu::self_loop_latencies(*buffer_, addresses, home_sm_);
    add_curve("L2 per-address latency from the home SM", "bytes (offset)", kLatencyUnit, [&] {
      std::vector<Point> points;
      for (std::size_t i = 0; i < latencies.size() && i < 2048; ++i) {
        points.emplace_back(static_cast<double>(addresses[i] - region), latencies[i]);
      }
      return points;
    }());
    const TwoClusters clusters = split_two_clusters(latencies);
    l2_near_ = clusters.low.median;
    l2_far_ = clusters.high.median;
    std::vector<int> classes;
    for (double latency : latencies) classes.push_back(latency <= clusters.threshold ? 0 : 1);
    near_far_addresses_ = addresses;
    near_far_classes_ = classes;

    // The same addresses from other SMs: an SM in the other partition sees near and far swapped.
    std::ostringstream other_sms;
    const std::size_t compared = std::min<std::size_t>(addresses.size(), 1024);
    const Offsets head(addresses.begin(), addresses.begin() + static_cast<std::ptrdiff_t>(compared));
    double most_flipped = 0;
    const std::size_t others = quick() ? 3 : 7;
    for (std::size_t k = 1; k <= others && sm_ids_.size() > others; ++k) {
      const int sm = sm_ids_[k * sm_ids_.size() / (others + 1)];
      const std::optional<std::vector<int>> theirs = near_far_classes_from(sm, head);
      std::size_t flipped = 0;
      for (std::size_t i = 0; theirs && i < compared; ++i) flipped += (*theirs)[i] != classes[i];
      const double share = static_cast<double>(flipped) / static_cast<double>(compared);
      most_flipped = std::max(most_flipped, share);
      other_sms << (k > 1 ? ", " : "") << "SM " << sm << ": " << format_number(100 * share, 0) << "%";
    }
    // Two partitions when the split is real: the classes are stable and an SM elsewhere sees them
    // swapped (the near/far gap of ld.global.cg hits is small, so the separation alone is weak).
    const bool two_groups = clusters.separation > 1.5;
    const bool swapped_elsewhere = most_flipped > 0.7;
    const std::string base_method = "per-address timing from SM " + std::to_string(home_sm_) + " (block pinned by %smid): each of " +
                                    std::to_string(latencies.size()) + " addresses 32 B apart holds a self-pointer, "
                                    "16 dependent ld.global.cg after 2 warming loads; two-means split into near/far at " +
                                    format_number(clusters.threshold) + " cycles (separation " +
                                    format_number(clusters.separation) + "); share of addresses whose class flips "
                                    "when timed from other SMs (each split at its own threshold): " + other_sms.str();
    auto provenance_of = [&](const Summary& summary) {
      Provenance provenance = provenance_from(base_method, summary);
      if (!two_groups || !swapped_elsewhere) {
        provenance.confidence = Confidence::low;
      } else if (clusters.separation < 3.0) {
        provenance.confidence = weakest(provenance.confidence, Confidence::medium);
      }
      return provenance;
    };
    profile_.l2.near_hit_latency_cycles = measured(l2_near_, provenance_of(clusters.low));
    profile_.l2.far_hit_latency_cycles = measured(l2_far_, provenance_of(clusters.high));
    near_fraction_ = clusters.low_fraction;
    profile_.l2.partitions = two_groups && swapped_elsewhere ? 2 : 1;

    const std::optional<double> granularity = interleave_granularity(classes, kSector);
    std::vector<Point> agreement;
    for (std::size_t d = 1; d <= classes.size() / 16; d *= 2) {
      agreement.emplace_back(static_cast<double>(d * kSector), pair_agreement(classes, d));
    }
    add_curve("L2 near/far class agreement of address pairs", "bytes (pair distance)", "fraction agreeing", agreement);
    if (granularity && profile_.l2.partitions == 2) {
      profile_.l2.slice_interleave_bytes = measured(
          *granularity, {"address-pair test on the near/far classes above: pairs (a, a+d), a a multiple of 2d, "
                         "always agree below the interleave granularity; value = smallest d with agreement < 90% "
                         "(partition hash granularity as seen from one SM)",
                         static_cast<std::int64_t>(classes.size()), 0.0,
                         clusters.separation < 3.0 ? Confidence::low : Confidence::medium});
    }
  }

  /// Near (0) / far (1) class of each address as timed from `sm`, split at that SM's own
  /// two-means threshold: both groups' latencies shift by up to ~20 cycles from SM to SM (H200,
  /// docs/history.md, "The probe"), enough to misclassify at another SM's threshold.
  /// nullopt when all its latencies are equal.
  std::optional<std::vector<int>> near_far_classes_from(int sm, const Offsets& addresses) {
    const std::vector<double> latencies = gpu::self_loop_latencies(*buffer_, addresses, sm);
    if (std::ranges::min(latencies) == std::ranges::max(latencies)) return std::nullopt;
    const double threshold = split_two_clusters(latencies).threshold;
    std::vector<int> classes;
    for (double latency : latencies) classes.push_back(latency <= threshold ? 0 : 1);
    return classes;
  }

  /// Every SM times the head of the near/far addresses and splits them at its own threshold; its
  /// classes against the home SM's give its near partition. One block per SM records where the
  /// hardware deals the blocks of a wave. Together: the partition the i-th block of a wave sees
  /// as near (the model's placement of blocks on partitions).
  void sm_placement() {
    if (profile_.l2.partitions < 2 || near_far_classes_.empty()) return; // one partition: all near
    const std::size_t compared = std::min<std::size_t>(near_far_addresses_.size(), quick() ? 256 : 512);
    const Offsets head(near_far_addresses_.begin(), near_far_addresses_.begin() + static_cast<std::ptrdiff_t>(compared));
    const std::vector<int> home_classes(near_far_classes_.begin(), near_far_classes_.begin() + static_cast<std::ptrdiff_t>(compared));
    std::vector<std::vector<int>> classes_by_sm;
    for (int sm : sm_ids_) {
      std::optional<std::vector<int>> classes = near_far_classes_from(sm, head);
      // No near/far split to read on an SM: no map at all (the model keeps its default
      // placement) rather than a guessed side.
      if (!classes) return;
      classes_by_sm.push_back(std::move(*classes));
    }
    const PartitionSides sides = partition_sides(home_classes, classes_by_sm);
    SmPlacement placement;
    placement.near_partition_by_sm.assign(static_cast<std::size_t>(sm_ids_.back()) + 1, 0);
    for (std::size_t i = 0; i < sm_ids_.size(); ++i) {
      placement.near_partition_by_sm[static_cast<std::size_t>(sm_ids_[i])] = sides.side[i];
    }
    // The first block's SM rotates from launch to launch; the order around the cycle is what the
    // model uses, so the first launch is kept and the others say how alike they are.
    const auto one_per_sm = [&](std::vector<int> order) {
      std::ranges::sort(order);
      return std::unique(order.begin(), order.end()) == order.end() && static_cast<int>(order.size()) == sm_count() &&
             order.front() >= 0 && order.back() <= sm_ids_.back();
    };
    std::vector<double> same_side_shares;
    for (int launch = 0; launch < repeats(); ++launch) {
      SmPlacement this_launch{gpu::block_dispatch_order(), placement.near_partition_by_sm, {}};
      if (!one_per_sm(this_launch.dispatch_sm_ids)) return; // blocks shared an SM: no order to read, the model keeps its default
      const std::size_t pairs = this_launch.dispatch_sm_ids.size() - 1;
      same_side_shares.push_back(pairs == 0 ? 1.0 : neighbours_sharing_a_partition(this_launch) / static_cast<double>(pairs));
      if (launch == 0) placement.dispatch_sm_ids = std::move(this_launch.dispatch_sm_ids);
    }
    const Summary same_side = summarize(same_side_shares);
    const std::int64_t others = static_cast<std::int64_t>(sm_ids_.size());
    placement.provenance = {
        "per-SM near/far classes of the first " + std::to_string(compared) + " near/far addresses (self-pointers 32 B apart, "
        "16 dependent ld.global.cg each after 2 warming loads, every SM split at its own two-means threshold): an SM "
        "whose classes differ from SM " + std::to_string(home_sm_) + "'s on more than half is near to the other "
        "partition (" + std::to_string(std::ranges::count(sides.side, 1)) + " of " + std::to_string(others) +
        " SMs; largest share of addresses against an SM's own side " + format_number(100 * sides.ambiguity) +
        "%); dispatch order: %smid of each block of a launch of one block per SM (the block takes the most "
        "dynamic shared memory allowed), the first of " + std::to_string(repeats()) + " launches; consecutive blocks "
        "on the same near partition: " + format_number(100 * same_side.median) + "% (median of the launches)",
        others, same_side.spread,
        sides.ambiguity < 0.2 ? Confidence::high : sides.ambiguity < 0.35 ? Confidence::medium : Confidence::low};
    profile_.l2.sm_placement = std::move(placement);
  }

  /// Latency of loads that all miss L2: chase fresh random lines right after evicting everything.
  void dram_latency() {
    const std::uint64_t region = 6 * kGiB;
        const std::uint64_t flush_bytes = std::min<std::uint64_t>(4 * l2_reported(), 512 * kMiB);
    const Offsets lines = contiguous(region, 64 * kMiB, kNode);
    std::vector<double> samples;
    for (int r = 0; r < repeats(); ++r) {
      const Offsets order = sample(lines, 4096);
      gpu::write_chain(*buffer_, order);
      gpu::stream_through_l2(*buffer_, kFlushRegion, flush_bytes);
      gpu::ChaseOptions chase;
      chase.op = CacheOp::cg;
      chase.timed_hops = 4096;
      samples.push_back(gpu::chase_mean_cycles(*buffer_, order.front(), chase));
    }
    const Summary summary = summarize(samples);
    dram_ = summary.median;
    profile_.dram.latency_cycles = measured(
        dram_, provenance_from("pointer chase ld.global.cg over 4096 random lines of a 64 MiB region (within TLB "
                               "reach) right after streaming " + format_bytes(static_cast<double>(flush_bytes)) +
                               " of other data through L2; every hop misses L2; median of runs",
                               summary));
    // Per-hop timing adds a shared store and a clock read to each load: calibrate on L2 hits.
    const Offsets resident = sample(contiguous(0, 1 * kMiB, kNode), 2048);
    gpu::write_chain(*buffer_, resident);
    gpu::stream_through_l2(*buffer_, 0, 1 * kMiB);
    const std::vector<std::uint32_t> hops = gpu::chase_per_hop(*buffer_, resident.front(), 2048, home_sm_);
    const double per_hop_mean = std::accumulate(hops.begin(), hops.end(), 0.0) / static_cast<double>(hops.size());
    overhead_ = std::max(0.0, per_hop_mean - (near_fraction_ * l2_near_ + (1 - near_fraction_) * l2_far_));
    calibrate_script_overhead();
  }

  /// Cycles a script's timed load adds over the same load in a plain chase (loop, shared store,
  /// clock reads), measured on L1 hits.
  void calibrate_script_overhead() {
    const std::uint64_t line = kScriptCalibrationRegion;
    buffer_->zero(line, kNode);
    std::vector<gpu::ScriptStep> steps{{gpu::Op::load_ca, line, false}};
    for (int i = 0; i < 16; ++i) steps.push_back({gpu::Op::load_ca, line, true});
    const std::vector<std::uint32_t> cycles = gpu::run_script(*buffer_, steps, home_sm_);
    script_overhead_ = std::max(0.0, median(std::vector<double>(cycles.begin(), cycles.end())) - l1_hit_);
  }
  double l1_miss_threshold_in_script() const { return 0.5 * (l1_hit_ + l2_near_) + script_overhead_; }
  double l2_miss_threshold_in_script() const { return 0.5 * (l2_far_ + dram_) + script_overhead_; }

  struct HopStats {
    double mean = 0;
    double hit_fraction = 0;
  };

  HopStats classify_hops(const std::vector<std::uint32_t>& hops) const {
    HopStats stats;
    const double hit_miss = 0.5 * (l2_far_ + dram_) + overhead_;
    for (std::uint32_t cycles : hops) {
      stats.mean += cycles;
      if (cycles < hit_miss) stats.hit_fraction += 1;
    }
    const auto count = static_cast<double>(hops.size());
    stats.mean /= count;
    stats.hit_fraction /= count;
    return stats;
  }

  /// How the working set is brought into L2 before the timed sample.
  enum class Warm {
    stores, ///< cudaMemset of the range: every line written once, by whichever SM
    reads,  ///< every SM streams the range twice with ld.global.cg
  };

  /// Warms [0, working_set), then times random lines of it from the home SM, one hop at a time.
  HopStats l2_point(std::uint64_t working_set, Warm warm) {
    const Offsets order = sample(contiguous(0, working_set, kNode), gpu::kMaxTimedHops);
    if (warm == Warm::stores) {
      buffer_->zero(0, working_set);
      gpu::write_chain(*buffer_, order);
    } else {
      gpu::write_chain(*buffer_, order);
      gpu::stream_through_l2(*buffer_, 0, working_set);
      gpu::stream_through_l2(*buffer_, 0, working_set);
    }
    return classify_hops(gpu::chase_per_hop(*buffer_, order.front(), static_cast<int>(order.size()), home_sm_));
  }

  struct L2Sweep {
    std::vector<Point> latency;
    std::vector<Point> hits;
    std::optional<Rise> rise;
    std::optional<HitCapacity> by_hits; ///< W x hit fraction / plateau fraction beyond the knee
  };

  /// Latency vs working set, refined near the knee. Each point averages l2_point_repeats() samples
  /// of 4096 lines (fresh warm-up and lines each): the hit-fraction capacity rests on these.
  L2Sweep l2_sweep(Warm warm) {
    const std::vector<double> coarse_mib =
        quick() ? std::vector<double>{4, 16, 32, 48, 64, 96, 128, 256}
                : std::vector<double>{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 192, 256};
    L2Sweep sweep;
    auto measure_at = [&](double mib) {
      const auto bytes = static_cast<std::uint64_t>(mib * kMiB);
      HopStats mean;
      for (int r = 0; r < l2_point_repeats(); ++r) {
        const HopStats stats = l2_point(bytes, warm);
        mean.mean += stats.mean / l2_point_repeats();
        mean.hit_fraction += stats.hit_fraction / l2_point_repeats();
      }
      sweep.latency.emplace_back(static_cast<double>(bytes), mean.mean);
      sweep.hits.emplace_back(static_cast<double>(bytes), mean.hit_fraction);
    };
    for (double mib : coarse_mib) measure_at(mib);
    sweep.rise = find_rise(sweep.latency, 0.05);
    if (sweep.rise) {
      for (double x : grid(sweep.rise->last_flat_x / kMiB + l2_step_mib(), sweep.rise->first_risen_x / kMiB - l2_step_mib(),
                           l2_step_mib())) {
        measure_at(x);
      }
      sweep.rise = find_rise(sweep.latency, 0.05);
    }
    std::ranges::sort(sweep.latency, {}, &Point::first);
    std::ranges::sort(sweep.hits, {}, &Point::first);
    // Plateau: the points up to half the knee (half the reported size without one).
    const double plateau_end = 0.5 * (sweep.rise ? sweep.rise->last_flat_x : static_cast<double>(l2_reported()));
    sweep.by_hits = capacity_from_hit_curve(sweep.hits, plateau_end);
    return sweep;
  }

  double l2_step_mib() const { return quick() ? 4 : 1; }
  int l2_point_repeats() const { return quick() ? 2 : 4; }
  /// The reported capacity's step: the hit-fraction estimate moves by about 0.3 MiB between runs
  /// (H200: 39.41 and 39.47 MiB), too close to a 1 MiB rounding boundary to repeat.
  double l2_capacity_step_bytes() const { return (quick() ? 4.0 : 2.0) * kMiB; }

  void l2_capacity() {
    // Stores put each line in L2 once; reads from every SM also leave copies of far lines in the
    // readers' near partitions, so less distinct data fits. The first is the capacity.
    const L2Sweep stored = l2_sweep(Warm::stores);
    const L2Sweep read = l2_sweep(Warm::reads);
    add_curve("L2 chase, one SM (warmed by stores)", kWorkingSetUnit, kLatencyUnit, stored.latency);
    add_curve("L2 chase, one SM (warmed by reads from all SMs)", kWorkingSetUnit, kLatencyUnit, read.latency);
    add_curve("L2 hit fraction, one SM (warmed by stores)", "bytes (working set)", "fraction", stored.hits);
    add_curve("L2 hit fraction, one SM (warmed by reads from all SMs)", "bytes (working set)", "fraction", read.hits);

    const L2Sweep& primary = stored.by_hits || !read.by_hits ? stored : read;
    const L2Sweep& other = &primary == &stored ? read : stored;
    const std::string primary_warm = &primary == &stored ? "cudaMemset of the working set (stores)" :
                                                           "every SM streaming the working set with ld.global.cg "
                                                           "(the store-warmed hit fractions gave no estimate)";
    const double step = l2_capacity_step_bytes();
    std::ostringstream method;
    method << "working-set sweep 1..256 MiB: warm by " << primary_warm << ", then time " << gpu::kMaxTimedHops
           << " random lines of it one by one from one pinned SM with ld.global.cg (" << l2_point_repeats()
           << " samples per point, fresh lines each); capacity = W x hit fraction / plateau hit fraction for the "
              "points past the knee (relative hit fraction 0.1..0.8; a random line of W > C hits with probability "
              "C / W), median over those points, rounded to "
           << format_bytes(step);
    auto describe = [&](const L2Sweep& sweep) {
      std::ostringstream text;
      if (sweep.by_hits) {
        text << format_bytes(sweep.by_hits->capacity.median) << " (plateau hit fraction "
             << format_number(sweep.by_hits->plateau_hit_fraction, 3) << ", " << sweep.by_hits->capacity.samples
             << " points, spread " << format_number(100 * sweep.by_hits->capacity.spread) << "%)";
      } else {
        text << "no estimate";
      }
      text << "; latency knee (last point on the plateau, " << format_number(l2_step_mib(), 0) << " MiB refinement): "
           << (sweep.rise ? format_bytes(sweep.rise->last_flat_x) : "none");
      return text.str();
    };
    method << ": " << describe(primary) << "; warmed the other way: " << describe(other);
    if (!primary.by_hits) {
      const double fallback = primary.rise ? primary.rise->last_flat_x : static_cast<double>(l2_reported());
      profile_.l2.capacity_bytes = measured(
          fallback, low(method.str() + "; no hit-fraction estimate, " +
                            (primary.rise ? "the latency knee written" : "the reported size written")));
    } else {
      const Summary& estimate = primary.by_hits->capacity;
      const double capacity = std::max(step, std::round(estimate.median / step) * step);
      Confidence confidence = weakest(confidence_from_spread(estimate.spread), quick() ? Confidence::medium : Confidence::high);
      // The latency knee should sit at or a little below the estimate (eviction starts before W = C).
      if (!primary.rise || primary.rise->last_flat_x > capacity + step || primary.rise->last_flat_x < 0.8 * capacity) {
        method << "; the knee does not bracket the estimate";
        confidence = weakest(confidence, Confidence::medium);
      }
      profile_.l2.capacity_bytes = measured(capacity, {method.str(), estimate.samples, estimate.spread, confidence});
    }
    // Near partition: the share of addresses an SM sees as near, of the capacity. A share within
    // 5 points of an even split is taken as one: capacity x 47-49% straddles a rounding boundary
    // (18 or 20 MiB of 40 on the H200 from run to run), capacity / partitions does not.
    const double partitions = std::max(1, profile_.l2.partitions);
    const bool even_split = std::abs(near_fraction_ - 1.0 / partitions) <= 0.05;
    const double near = even_split ? std::round(profile_.l2.capacity_bytes.value / partitions / step) * step
                                   : std::round(profile_.l2.capacity_bytes.value * near_fraction_ / step) * step;
    profile_.l2.near_capacity_bytes = measured(
        near, {std::string(even_split ? "capacity / partitions: the share of addresses near to the home SM ("
                                      : "capacity x share of addresses near to the home SM (") +
                   format_number(100 * near_fraction_) + "%, per-address test)" +
                   (even_split ? " is an even split within 5 points" : "") + ", rounded to " + format_bytes(step),
               static_cast<std::int64_t>(primary.latency.size()), 0.0,
               profile_.l2.partitions == 2 ? Confidence::medium : Confidence::low});
  }

  void l2_bandwidth() {
    const double target = quick() ? 2e9 : 8e9;
    gpu::BandwidthRun run;
    run.repeats = quick() ? 1 : 3;
    std::vector<Point> curve;
    const std::vector<double> sizes_mib = quick() ? std::vector<double>{8, 32, 64, 128, 256}
                                                  : std::vector<double>{4, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 128,
                                                                        192, 256};
    for (double mib : sizes_mib) {
      run.bytes = static_cast<std::uint64_t>(mib * kMiB);
      run.passes = passes_for(run.bytes, target);
      curve.emplace_back(static_cast<double>(run.bytes), bandwidth(run).median);
    }
    add_curve("L2 read bandwidth vs working set", kWorkingSetUnit, "GB/s", curve);
    cross_check_capacity(profile_.l2.capacity_bytes, find_drop(curve), "read-bandwidth knee (plain 16-byte loads)");

    run.bytes = 8 * kMiB;
    run.passes = passes_for(run.bytes, target);
    run.repeats = repeats();
    const Summary read = bandwidth(run);
    run.op = CacheOp::cg;
    const Summary read_cg = bandwidth(run);
    profile_.l2.read_bandwidth_gb_per_s = measured(
        read.median, provenance_from("all SMs (2 blocks x 1024 threads each, 4 loads in flight per thread) re-read an "
                                     "8 MiB L2-resident range with plain 16-byte loads; CUDA events; with ld.global.cg "
                                     "instead: " + format_number(read_cg.median, 0) + " GB/s",
                                     read));
    run.store = true;
    run.op = CacheOp::plain;
    const Summary write = bandwidth(run);
    profile_.l2.write_bandwidth_gb_per_s =
        measured(write.median, provenance_from("all SMs re-write an 8 MiB L2-resident range with plain 16-byte "
                                               "stores; CUDA events",
                                               write));
    // The same range written one sector per line: 4 bytes per lane, each lane its own line (a
    // transpose without shared memory stores so); time per sector over the whole-line stores'.
    const double whole_sectors_per_s = write.median * 1e9 / 32;
    const auto sparse_sectors = static_cast<double>(gpu::sparse_line_stores(run));
    std::vector<double> slowdowns;
    for (double seconds : gpu::sparse_line_store_seconds(*buffer_, run)) {
      slowdowns.push_back(whole_sectors_per_s / (sparse_sectors / seconds));
    }
    const Summary sparse = summarize(slowdowns);
    profile_.l2.sparse_line_write_slowdown = measured(
        sparse.median, provenance_from("all SMs re-write the same 8 MiB L2-resident range 4 bytes per lane, each lane "
                                       "of a warp store in its own line (one sector of each of 32 lines, 4 stores in "
                                       "flight per thread): time per sector over the 16-byte stores' (" +
                                           format_number(write.median, 0) + " GB/s, whole lines); CUDA events",
                                       sparse));
  }

  void l2_line() {
    // Fill granularity: an L2 miss brings some bytes from DRAM; a second load at offset d hits
    // inside them.
    const std::uint64_t region = 5 * kGiB + 512 * kMiB;
    buffer_->zero(region, 64 * kMiB);
    flush_l2();
    const std::vector<double> offsets{8, 16, 32, 64, 96, 128};
    const std::vector<Point> fill = partial_line_curve(region, offsets, false, 16);
    add_curve("L2 partial-line test (second load at offset d, first missed to DRAM)", "bytes (offset)", kLatencyUnit,
              fill);
    const std::optional<double> granularity = fill_granularity(fill, l2_miss_threshold_in_script());
    const std::string fill_method =
        "partial-line test: after evicting L2, load offset 0 of a line with ld.global.cg (DRAM miss), then time "
        "offset d; offsets below the first miss came with the fill (16 lines per offset, median)";
    if (granularity) {
      profile_.l2.fill_granularity_bytes =
          measured(*granularity, {fill_method, 16 * static_cast<std::int64_t>(offsets.size()), 0.0, Confidence::high});
      profile_.dram.fetch_granularity_bytes = measured(
          *granularity, {"same test as l2.fill_granularity_bytes: the bytes one DRAM access brings into L2",
                         16 * static_cast<std::int64_t>(offsets.size()), 0.0, Confidence::medium});
    }
    // L2 serves L1 misses in sectors: the L1 partial-line test measures that unit.
    profile_.l2.sector_bytes = measured(
        l1_sector_, {"unit in which L2 serves an L1 miss (the L1 partial-line test); L2 valid bits are at most the "
                     "fill granularity apart",
                     profile_.l1.sector_bytes.provenance.samples, 0.0, Confidence::medium});

    // Line: the block test with L2 (warm by gathering every node, then sample).
    const double capacity = profile_.l2.capacity_bytes.value;
    const std::vector<double> blocks = quick() ? std::vector<double>{64, 128, 256}
                                               : std::vector<double>{32, 64, 128, 256, 512};
    const std::vector<double> fractions = quick() ? std::vector<double>{0.5, 1, 2} : std::vector<double>{0.25, 0.5, 1, 2, 4};
    std::vector<Point> knees;
    for (double block : blocks) {
      std::vector<Point> hit_curve;
      for (double fraction : fractions) {
        const auto [footprint, nodes] = block_test_nodes(capacity, fraction, block, 2 * kGiB);
        const Offsets order = sample(nodes, gpu::kMaxTimedHops);
        gpu::write_chain(*buffer_, order);
        gpu::gather_through_l2(*buffer_, nodes);
        gpu::gather_through_l2(*buffer_, nodes);
        const HopStats stats =
            classify_hops(gpu::chase_per_hop(*buffer_, order.front(), static_cast<int>(order.size()), home_sm_));
        hit_curve.emplace_back(footprint, stats.hit_fraction);
      }
      add_curve("L2 block test, " + format_number(block, 0) + " B blocks", "bytes (footprint)", "hit fraction",
                hit_curve);
      if (const std::optional<Summary> effective = capacity_from_hit_fractions(hit_curve, 0)) {
        knees.emplace_back(block, effective->median);
      }
    }
    profile_.l2.line_bytes = line_from_block_test(
        knees, blocks.size(), profile_.l2.sector_bytes.value,
        "block test: random aligned blocks of B bytes, every 32 B of each loaded into L2 (ld.global.cg gather), then "
        "random nodes timed from one pinned SM; effective capacity (hit fraction x footprint) grows with B until B "
        "reaches the line. Effective capacities:");
  }

  void l2_ways() {
    if (quick()) {
      profile_.l2.replacement = {ReplacementPolicy::unknown, "not tested in --quick mode", low("skipped (--quick)")};
      return;
    }
    EvictionLevel level;
    level.label = "L2";
    level.op = CacheOp::cg;
    level.region = kEvictionSetRegion + 64 * kMiB;
    level.span = 768 * kMiB;
    // The reported size, not the measured one: above the single-SM capacity the sweep sees, so 2x
    // it overfills every set, and the candidates do not move with that measurement.
    level.capacity_bytes = static_cast<double>(l2_reported());
    level.capacity_source = "the driver-reported size";
    level.parallel_walk = true;
    level.flush_l2_first = true;
    level.targets = 6;
    level.enough_agreeing = 3;
    level.budget_s = 18;
    level.max_calls_per_target = 6000;
    EvictionFindings findings = find_eviction_sets(level);
    // Two partitions may each hold a copy of a far line: say so where the reduction fails.
    if (!findings.ways) {
      findings.method += "; L2 has " + std::to_string(profile_.l2.partitions) +
                         " partitions (a line far from the SM may also be copied into its near one, so eviction from "
                         "one SM's view need not follow one set)";
    }
    record_eviction_findings(findings, profile_.l2.ways, profile_.l2.replacement);
  }

  void dram_bandwidth() {
    const std::uint64_t bytes = quick() ? 1 * kGiB : 4 * kGiB;
    gpu::BandwidthRun run;
    run.bytes = bytes;
    run.repeats = repeats();
    const Summary read = bandwidth(run);
    profile_.dram.read_bandwidth_gb_per_s = measured(
        read.median, provenance_from("all SMs read " + format_bytes(static_cast<double>(bytes)) +
                                         " once with plain 16-byte loads (2 blocks x 1024 threads per SM, 4 in "
                                         "flight per thread); CUDA events; median of launches",
                                     read));
    run.store = true;
    const Summary write = bandwidth(run);
    profile_.dram.write_bandwidth_gb_per_s = measured(
        write.median, provenance_from("all SMs write " + format_bytes(static_cast<double>(bytes)) +
                                          " once with plain 16-byte stores; CUDA events; median of launches",
                                      write));
    // The copy ceiling the kernels component holds kernels to: each sample is its median of 15 copies.
    const std::uint64_t copy_bytes = bytes / 2;
    std::vector<double> rates;
    for (int r = 0; r < repeats(); ++r) {
      rates.push_back(kernels::measure_copy_bandwidth_gb_per_s(static_cast<std::int64_t>(copy_bytes)));
    }
    const Summary copy = summarize(rates);
    profile_.dram.copy_bandwidth_gb_per_s = measured(
        copy.median, provenance_from("kernels::measure_copy_bandwidth_gb_per_s: cudaMemcpyAsync device-to-device of " +
                                         format_bytes(static_cast<double>(copy_bytes)) +
                                         ", bytes read + written over CUDA-event time, median of 15 copies; median "
                                         "of those medians",
                                     copy));
    copy_shape_slowdowns(bytes / 4);
  }

  /// The same copy of `copy_bytes` in other shapes, each against its one-vector form: 2, 4, 8
  /// vectors per thread (a thread's loads, then its stores: the model's store_burst), and walks
  /// of 4, 16, 64 vectors per thread one after another (blocks that live that many times
  /// longer: the model's block_walk_slowdown by load rounds). Each repeat times every shape back
  /// to back and contributes its ratios, so clock drift cancels.
  void copy_shape_slowdowns(std::uint64_t copy_bytes) {
    constexpr int kTimesPerPoint = 5;
    const std::vector<int> bursts{2, 4, 8};
    const std::vector<int> walks{4, 16, 64};
    std::map<int, std::vector<double>> burst_ratios;
    std::map<int, std::vector<double>> walk_ratios;
    const auto burst_seconds = [&](int burst) {
      return summarize(gpu::burst_copy_seconds(*buffer_, copy_bytes, burst, kTimesPerPoint)).median;
    };
    const auto walk_seconds = [&](int rounds) {
      return summarize(gpu::copy_walk_seconds(*buffer_, copy_bytes, rounds, kTimesPerPoint)).median;
    };
    for (int r = 0; r < repeats(); ++r) {
      const double one = burst_seconds(1);
      for (int burst : bursts) burst_ratios[burst].push_back(burst_seconds(burst) / one);
      const double one_round = walk_seconds(1);
      for (int rounds : walks) walk_ratios[rounds].push_back(walk_seconds(rounds) / one_round);
    }
    const std::string against = ", time over the same copy with 1 vector per thread; median of " +
                                std::to_string(kTimesPerPoint) + " launches each, median of the repeats' ratios";
    for (int burst : bursts) {
      const Summary slowdown = summarize(burst_ratios[burst]);
      profile_.dram.store_burst_slowdown[burst] = measured(
          slowdown.median,
          provenance_from("copy of " + format_bytes(static_cast<double>(copy_bytes)) + " with " + std::to_string(burst) +
                              " 16-byte vectors per thread (its loads, then its stores; 128-thread blocks, a block's "
                              "vectors contiguous)" + against,
                          slowdown));
    }
    for (int rounds : walks) {
      const Summary slowdown = summarize(walk_ratios[rounds]);
      profile_.dram.block_walk_slowdown[rounds] = measured(
          slowdown.median,
          provenance_from("copy of " + format_bytes(static_cast<double>(copy_bytes)) +
                              " (128-thread blocks, a block's 16-byte vectors contiguous) with " + std::to_string(rounds) +
                              " rounds of 1 vector per thread, one after another" + against,
                          slowdown));
    }
  }

  /// A transpose's stores: rows a warp writes a run of S bytes of while the blocks dispatched
  /// around it write other rows. The tiled copy of an 8192 x 8192 f32 matrix (rows 32 KiB apart,
  /// 256 MiB each way) to the mirrored tile over the same copy to the same tile, S = 4 x tile
  /// (docs/model.md, "DRAM factors"). Each repeat times both of every tile back to back.
  void spread_writes() {
    constexpr std::uint64_t kMatrixWords = 8192;
    constexpr int kTimesPerPoint = 5;
    const std::vector<int> tiles{32, 64, 128};
    std::map<int, std::vector<double>> ratios;
    const auto seconds = [&](int tile, bool mirrored) {
      return summarize(gpu::tile_copy_seconds(*buffer_, kMatrixWords, tile, mirrored, kTimesPerPoint)).median;
    };
    for (int r = 0; r < repeats(); ++r) {
      for (int tile : tiles) ratios[tile].push_back(seconds(tile, true) / seconds(tile, false));
    }
    for (int tile : tiles) {
      const Summary slowdown = summarize(ratios[tile]);
      profile_.dram.spread_write_slowdown[4 * tile] = measured(
          slowdown.median,
          provenance_from("tiled copy of an 8192 x 8192 f32 matrix (rows 32 KiB apart), " + std::to_string(tile) + " x " +
                              std::to_string(tile) + " tiles per 32x8-thread block, each warp storing " +
                              std::to_string(4 * tile) +
                              " contiguous bytes per row (4 loads, then 4 stores per batch): time to the mirrored tile "
                              "(tile (x, y) to (y, x), untransposed) over the time to the same tile; median of " +
                              std::to_string(kTimesPerPoint) + " launches each, median of the repeats' ratios",
                          slowdown));
    }
  }

  void shared_banks() {
    std::vector<Point> curve;
    std::vector<double> spreads;
    for (int stride = 4; stride <= 1024; stride *= 2) {
      std::vector<double> samples;
      for (int r = 0; r < 3; ++r) samples.push_back(gpu::shared_load_cycles(stride, 4096));
      const Summary summary = summarize(samples);
      spreads.push_back(summary.spread);
      curve.emplace_back(stride, summary.median);
    }
    add_curve("shared memory: cycles per dependent load vs lane stride", "bytes (lane stride)", kLatencyUnit, curve);
    const std::optional<BankAnalysis> banks = analyze_banks(curve, profile_.device.warp_size);
    const double spread = *std::ranges::max_element(spreads);
    const std::string method = "one warp, lane i loads the 4-byte word at i x stride with a dependent chain "
                               "(ld.shared via inline PTX), cycles per load vs stride 4..1024 B: conflict-free up to "
                               "the bank width, saturating at banks x width";
    if (!banks) {
      profile_.shared_memory.banks = measured(32, low(method + "; no conflicts seen, 32 written"));
      profile_.shared_memory.bank_width_bytes = measured(4, low(method + "; no conflicts seen, 4 written"));
      return;
    }
    const Provenance provenance{method, static_cast<std::int64_t>(3 * curve.size()), spread,
                                confidence_from_spread(spread)};
    profile_.shared_memory.banks = measured(banks->banks, provenance);
    profile_.shared_memory.bank_width_bytes = measured(banks->width_bytes, provenance);
    profile_.shared_memory.extra_wavefront_cycles =
        measured(banks->extra_wavefront_cycles,
                 {"(cycles at full conflict - conflict-free cycles) / (conflict degree - 1), same curve", provenance.samples,
                  spread, confidence_from_spread(spread)});
  }

  /// Chase through one node per `stride` (at a random line inside each stride) over `region` bytes.
  double tlb_point(std::uint64_t region, std::uint64_t stride) {
    Offsets nodes;
    std::uniform_int_distribution<std::uint64_t> line(0, stride / kNode - 1);
    for (std::uint64_t page = 0; page + stride <= region; page += stride) nodes.push_back(page + line(random_) * kNode);
    return chase_cycle(shuffled(nodes), CacheOp::cg);
  }

  /// Swaps the shared buffer for the largest one the device has room for (leaving headroom for the
  /// runtime), at least kBufferBytes (same fixed regions, zeroed). Returns its size.
  std::uint64_t grow_buffer_for_tlb() {
    buffer_.reset();
    const std::uint64_t free_bytes = gpu::free_device_memory_bytes();
    const std::uint64_t headroom = std::max<std::uint64_t>(2 * kGiB, free_bytes / 20);
    std::uint64_t bytes = free_bytes > headroom ? (free_bytes - headroom) / kGiB * kGiB : 0;
    while (bytes > kBufferBytes) {
      try {
        buffer_ = std::make_unique<DeviceBuffer>(bytes);
        return bytes;
      } catch (const std::runtime_error&) {
        bytes = std::max(kBufferBytes, bytes / 4 * 3 / kGiB * kGiB);
      }
    }
    buffer_ = std::make_unique<DeviceBuffer>(kBufferBytes);
    return kBufferBytes;
  }

  void tlb() {
    // Regions up to most of the device memory: the H200 showed no step within 32 GiB at 2 MiB.
    const std::uint64_t buffer_bytes = quick() ? buffer_->bytes() : grow_buffer_for_tlb();
    const std::uint64_t largest = quick() ? 2 * kGiB : buffer_bytes / (512 * kMiB) * (512 * kMiB);
    // A node per stride s: with s at most the page the step sits at entries x page for every s;
    // larger strides step at entries x s, so the strides also bound the page size.
    const std::vector<std::uint64_t> strides =
        quick() ? std::vector<std::uint64_t>{2 * kMiB}
                : std::vector<std::uint64_t>{2 * kMiB, 32 * kMiB, 64 * kMiB, 128 * kMiB, 256 * kMiB, 512 * kMiB};
    std::vector<StrideCurve> curves;
    for (std::uint64_t stride : strides) {
      StrideCurve curve{static_cast<double>(stride), {}};
      // Doubling to 8 GiB, then 8 GiB steps: an H200 exploration saw the step between 64 and 128 GiB.
      std::uint64_t last = 0;
      for (std::uint64_t region = std::max(16 * kMiB, 8 * stride); region <= largest;
           region = region < 8 * kGiB ? 2 * region : region + 8 * kGiB) {
        curve.region_to_latency.emplace_back(static_cast<double>(region), tlb_point(region, stride));
        last = region;
      }
      if (last != 0 && last < largest) {
        curve.region_to_latency.emplace_back(static_cast<double>(largest), tlb_point(largest, stride));
      }
      if (curve.region_to_latency.empty()) continue;
      add_curve("TLB: chase one line per " + format_bytes(static_cast<double>(stride)) + " vs region", "bytes (region)",
                kLatencyUnit, curve.region_to_latency);
      curves.push_back(std::move(curve));
    }
    const TlbReach found = tlb_reach(curves);
    std::ostringstream method;
    method << "chase ld.global.cg through one random line per stride s over growing regions (nodes stay in L2), "
              "regions up to "
           << format_bytes(static_cast<double>(largest)) << " (device buffer " << format_bytes(static_cast<double>(buffer_bytes))
           << "); steps found by find_rise (25% of the rise, top/base >= 1.1):";
    for (std::size_t i = 0; i < curves.size(); ++i) {
      method << ' ' << format_bytes(curves[i].stride_bytes) << ": ";
      if (const std::optional<Rise>& step = found.steps[i]) {
        method << "step after " << format_bytes(step->last_flat_x) << " (" << format_number(step->base_level) << " -> "
               << format_number(step->top_level) << " cycles, "
               << format_number(step->last_flat_x / curves[i].stride_bytes, 0) << " strides)";
      } else {
        method << "no step up to " << format_bytes(curves[i].region_to_latency.back().first);
      }
      method << (i + 1 < curves.size() ? ";" : "");
    }
    if (found.entry_covers_at_least_bytes > curves.front().stride_bytes) {
      method << "; larger strides step at the same region, so one entry covers at least "
             << format_bytes(found.entry_covers_at_least_bytes) << " (about "
             << format_number(found.reach_bytes / found.entry_covers_at_least_bytes, 0) << " entries or fewer)";
    }
    if (found.entry_covers_less_than_bytes > 0) {
      method << "; the " << format_bytes(found.entry_covers_less_than_bytes)
             << " stride steps later or not at all (a node per entry), so one entry covers less than that";
    }
    const auto samples = static_cast<std::int64_t>(curves.front().region_to_latency.size());
    if (found.lower_bound) {
      profile_.tlb.reach_bytes = measured(
          found.reach_bytes, low("LOWER BOUND: no step at the smallest stride up to " + format_bytes(found.reach_bytes) +
                                     "; " + method.str(),
                                 samples));
      return;
    }
    const double reach = found.reach_bytes;
    profile_.tlb.reach_bytes = measured(
        reach, {"reach = last region before the smallest stride's latency step (power-of-two regions); " + method.str(),
                samples, 0.0, Confidence::medium});
    profile_.tlb.miss_penalty_cycles = measured(
        found.miss_penalty_cycles,
        {"latency after the reach step minus before it (same curve)", samples, 0.0, Confidence::medium});
    // Neighbouring power-of-two strides on both sides of the coverage pin it: that is the page
    // (translation granule) a TLB entry maps, and the reach holds reach / page of them.
    if (found.entry_covers_less_than_bytes > 0 &&
        found.entry_covers_less_than_bytes == 2 * found.entry_covers_at_least_bytes) {
      const double page = found.entry_covers_at_least_bytes;
      profile_.tlb.page_bytes = measured(
          page, {"stride test (same curves): strides up to " + format_bytes(page) + " step at the reach, " +
                     format_bytes(2 * page) + " does not, so one entry covers " + format_bytes(page) +
                     " (power-of-two granules)",
                 samples, 0.0, Confidence::medium});
      profile_.tlb.entries = measured(reach / page, {"reach / page size", samples, 0.0, Confidence::medium});
      return;
    }
    // The block test needs footprints up to twice the reach at half the buffer's density.
    if (quick() || reach > static_cast<double>(largest) / 4) return;
    // Page size: blocks of B bytes with a node every 64 KiB; the footprint at the knee grows with B
    // until B reaches the page.
    std::vector<Point> knees;
    for (std::uint64_t block = 256 * kKiB; block <= 8 * kMiB; block *= 2) {
      std::vector<Point> block_curve;
      for (double fraction : {1.0 / 32, 1.0 / 16, 1.0 / 8, 0.25, 0.5, 1.0, 2.0}) {
        const std::uint64_t count = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(reach * fraction) / block, 1,
                                                              largest / (2 * block));
        const Offsets nodes = random_blocks(0, largest, block, count, std::min<std::uint64_t>(block, 64 * kKiB));
        block_curve.emplace_back(static_cast<double>(count * block), chase_cycle(shuffled(nodes), CacheOp::cg));
      }
      add_curve("TLB block test, " + format_bytes(static_cast<double>(block)) + " blocks", "bytes (footprint)",
                kLatencyUnit, block_curve);
      if (const std::optional<Rise> knee = find_rise(block_curve, 0.25, 1.1)) knees.emplace_back(block, knee->last_flat_x);
    }
    const std::optional<double> page = smallest_saturating_block(knees, 0.3);
    if (!page) return;
    std::ostringstream page_method;
    page_method << "block test: random aligned blocks of B bytes (a node every 64 KiB), footprint at the TLB knee "
                   "grows with B until B reaches the page. Knees:";
    for (const auto& [block, knee] : knees) page_method << ' ' << format_bytes(block) << "->" << format_bytes(knee);
    profile_.tlb.page_bytes = measured(*page, {page_method.str(), static_cast<std::int64_t>(knees.size()), 0.0,
                                               Confidence::medium});
    profile_.tlb.entries = measured(reach / *page, {"reach / page size", 0, 0.0, Confidence::medium});
  }

  /// Runs a store-then-load script and turns its timed loads into a flag: set when most hit.
  MeasuredFlag store_then_load(const std::vector<gpu::ScriptStep>& steps, double threshold, int lines,
                               const std::string& test, const char* level) {
    const std::vector<std::uint32_t> cycles = gpu::run_script(*buffer_, steps, home_sm_);
    const auto hits = static_cast<int>(std::ranges::count_if(cycles, [&](std::uint32_t c) { return c < threshold; }));
    return {hits * 2 > lines,
            {"store-then-load test: " + test + ": " + std::to_string(hits) + "/" + std::to_string(lines) + " " + level +
                 " hits (threshold " + format_number(threshold) + " cycles)",
             lines, 0.0, hits == 0 || hits == lines ? Confidence::high : Confidence::low}};
  }

  void store_allocation() {
    const std::uint64_t region = 6 * kGiB + 512 * kMiB;
    constexpr int kLines = 16;
    buffer_->zero(region, 2 * kMiB);
    // L1: the line is in L2 only; store to it, then load it through L1.
    std::vector<gpu::ScriptStep> l1_steps;
    for (int i = 0; i < kLines; ++i) {
      const std::uint64_t line = region + static_cast<std::uint64_t>(i) * 4 * kKiB;
      l1_steps.push_back({gpu::Op::load_cg, line, false});
      l1_steps.push_back({gpu::Op::store_wb, line, false});
      l1_steps.push_back({gpu::Op::load_ca, line, true});
    }
    profile_.l1.allocates_on_store =
        store_then_load(l1_steps, l1_miss_threshold_in_script(), kLines,
                        "line resident in L2 only, st.global.wb 8 B, then time ld.global.ca of the same bytes", "L1");

    // L2: evict everything, store whole sectors (4 x 8 B) to cold lines, then load them back. A
    // partial sector would need a DRAM fill before it can be read, hiding the allocation.
    flush_l2();
    std::vector<gpu::ScriptStep> l2_steps;
    for (int i = 0; i < kLines; ++i) {
      const std::uint64_t line = region + kMiB + static_cast<std::uint64_t>(i) * 4 * kKiB;
      for (std::uint64_t word = 0; word < kSector; word += 8) l2_steps.push_back({gpu::Op::store_cg, line + word, false});
      l2_steps.push_back({gpu::Op::load_cg, line, true});
    }
    profile_.l2.allocates_on_store = store_then_load(
        l2_steps, l2_miss_threshold_in_script(), kLines,
        "after evicting L2, st.global.cg of a whole 32 B sector of a cold line, then time ld.global.cg of it", "L2");
  }

  void clocks_after() {
    const std::optional<ObservedClocks> clocks = read_clocks_nvml(options_.device);
    profile_.device.sm_clock_mhz_after =
        clocks ? clocks->sm_mhz : static_cast<int>(std::lround(gpu::measured_sm_clock_mhz()));
    if (clocks && profile_.device.memory_clock_mhz == 0) profile_.device.memory_clock_mhz = clocks->memory_mhz;
  }

  // ----- state ------------------------------------------------------------------------------
  ProbeOptions options_;
  ProgressCallback progress_;
  StopRequested stop_requested_;
  std::mt19937_64 random_;
  std::unique_ptr<DeviceBuffer> buffer_;
  DeviceProfile profile_;
  // Levels later stages classify against (cycles).
  double l1_hit_ = 0;
  double l1_sector_ = kSector;
  double l2_near_ = 0;
  double l2_far_ = 0;
  double dram_ = 0;
  double overhead_ = 0;       ///< extra cycles of per-hop timing over a plain chase
  double script_overhead_ = 0; ///< extra cycles of a script's timed load over a plain chase
  double near_fraction_ = 0.5;
  std::vector<int> sm_ids_; ///< SM ids blocks ran on
  Offsets near_far_addresses_; ///< the near/far test's addresses, timed from the home SM
  std::vector<int> near_far_classes_; ///< their classes there: 0 near, 1 far
  int home_sm_ = 0;         ///< the SM the per-SM latency tests run on
};

} // namespace

DeviceProfile run_probe(const ProbeOptions& options, const ProgressCallback& progress,
                        const StopRequested& stop_requested) {
  return Probe(options, progress, stop_requested).run();
}

} // namespace cachewise::probe
