// The probe's stages: each runs microbenchmarks (benchmarks.hpp), turns the raw timings into
// values with the CPU analysis (analysis.hpp), and fills its part of the profile. Every value
// carries its method, sample count, spread and confidence; the raw curves go into the profile.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <memory>
#include <numeric>
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
/// The full probe's TLB sweep goes this far (the 8 GiB of the shared buffer showed no TLB step on
/// an H200).
constexpr std::uint64_t kTlbLargestRegion = 32 * kGiB;

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

  /// Latency of a cyclic chase through N lines exactly `stride` apart, for N = 1..max_lines.
  std::vector<Point> same_set_curve(std::uint64_t first, std::uint64_t stride, int max_lines, int step, CacheOp op) {
    std::vector<Point> curve;
    for (int n = std::max(step, 2); n <= max_lines; n += step) {
      Offsets order;
      for (int i = 0; i < n; ++i) order.push_back(first + static_cast<std::uint64_t>(i) * stride);
      gpu::write_chain(*buffer_, order);
      gpu::ChaseOptions chase;
      chase.op = op;
      chase.warm_hops = 2 * n;
      chase.timed_hops = std::max(8 * n, 512);
      curve.emplace_back(n, gpu::chase_mean_cycles(*buffer_, first, chase));
    }
    return curve;
  }

  /// Runs the same-set test over power-of-two strides; returns (ways, set stride) when a knee
  /// shows, and records the knees in `method`.
  std::optional<std::pair<double, std::uint64_t>> ways_test(const std::vector<std::uint64_t>& strides, int max_lines,
                                                            int step, CacheOp op, const std::string& label,
                                                            std::ostringstream& method) {
    std::optional<std::pair<double, std::uint64_t>> best;
    method << "same-set test: cyclic chase through N lines one power-of-two stride apart; ways = smallest N before "
              "the latency step, over strides. Knees:";
    for (std::uint64_t stride : strides) {
      const std::vector<Point> curve = same_set_curve(0, stride, max_lines, step, op);
      add_curve(label + " same-set test, stride " + format_bytes(static_cast<double>(stride)), "lines", kLatencyUnit,
                curve);
      const std::optional<double> ways = ways_from_same_set_curve(curve);
      method << ' ' << format_bytes(static_cast<double>(stride)) << "->" << (ways ? format_number(*ways, 0) : "none");
      if (ways && (!best || *ways < best->first)) best = std::make_pair(*ways, stride);
    }
    return best;
  }

  /// The eviction fingerprint for one set: `ways` lines `stride` apart, re-touch line 0, insert one.
  ReplacementGuess replacement_test(double ways, std::uint64_t stride, CacheOp op, int trials) {
    const auto w = static_cast<std::uint64_t>(ways);
    const std::uint64_t region = 4 * kGiB + kMiB;
    const gpu::Op load = op == CacheOp::ca ? gpu::Op::load_ca : gpu::Op::load_cg;
    int kept[2] = {0, 0};
    for (int target = 0; target < 2; ++target) {
      for (int t = 0; t < trials; ++t) {
        const std::uint64_t base = region + static_cast<std::uint64_t>(t) * 4 * kNode;
        buffer_->zero(base, (w + 1) * stride + kNode);
        std::vector<gpu::ScriptStep> steps;
        auto line = [&](std::uint64_t i) { return base + i * stride; };
        if (op == CacheOp::ca) {
          for (std::uint64_t i = 0; i <= w; ++i) steps.push_back({gpu::Op::load_cg, line(i), false});
        }
        for (std::uint64_t i = 0; i < w; ++i) steps.push_back({load, line(i), false});
        steps.push_back({load, line(0), false});
        steps.push_back({load, line(w), false});
        steps.push_back({load, line(static_cast<std::uint64_t>(target)), true});
        const double cycles = gpu::run_script(*buffer_, steps, home_sm_).at(0);
        const double threshold = op == CacheOp::ca ? l1_miss_threshold_in_script() : l2_miss_threshold_in_script();
        if (cycles < threshold) ++kept[target];
      }
    }
    return classify_replacement(kept[0], kept[1], trials);
  }

  void l1_ways() {
    const std::vector<std::uint64_t> strides =
        quick() ? std::vector<std::uint64_t>{16 * kKiB, 64 * kKiB}
                : std::vector<std::uint64_t>{4 * kKiB, 8 * kKiB, 16 * kKiB, 32 * kKiB, 64 * kKiB, 128 * kKiB};
    std::ostringstream method;
    const auto found = ways_test(strides, 48, quick() ? 2 : 1, CacheOp::ca, "L1", method);
    if (!found) {
      profile_.l1.replacement = {ReplacementPolicy::unknown, "no same-set conflict found (set index hashed?)",
                                 low(method.str())};
      return;
    }
    const auto [ways, stride] = *found;
    const double sets = static_cast<double>(stride) / profile_.l1.line_bytes.value;
    const double implied = ways * static_cast<double>(stride);
    const bool consistent = std::abs(implied - profile_.l1.capacity_bytes.value) <= 0.15 * implied;
    method << "; set stride " << format_bytes(static_cast<double>(stride)) << " = " << format_number(sets, 0)
           << " sets of " << format_number(profile_.l1.line_bytes.value, 0) << " B lines; ways x set stride = "
           << format_bytes(implied) << (consistent ? " matches" : " does not match") << " the measured capacity";
    profile_.l1.ways = measured(ways, {method.str(), static_cast<std::int64_t>(strides.size()), 0.0,
                                       consistent ? Confidence::high : Confidence::low});
    const ReplacementGuess guess = replacement_test(ways, stride, CacheOp::ca, quick() ? 8 : 16);
    profile_.l1.replacement = {guess.policy, guess.fingerprint,
                               {"eviction fingerprint with ld.global.ca in one set (ways and set stride above)",
                                2 * (quick() ? 8 : 16), 0.0,
                                guess.policy == ReplacementPolicy::unknown ? Confidence::low : Confidence::medium}};
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

    // The same addresses from other SMs: an SM in the other partition sees near and far swapped.
    std::ostringstream other_sms;
    const std::size_t compared = std::min<std::size_t>(addresses.size(), 1024);
    const Offsets head(addresses.begin(), addresses.begin() + static_cast<std::ptrdiff_t>(compared));
    double most_flipped = 0;
    const std::size_t others = quick() ? 3 : 7;
    for (std::size_t k = 1; k <= others && sm_ids_.size() > others; ++k) {
      const int sm = sm_ids_[k * sm_ids_.size() / (others + 1)];
      const std::vector<double> theirs = gpu::self_loop_latencies(*buffer_, head, sm);
      std::size_t flipped = 0;
      for (std::size_t i = 0; i < compared; ++i) flipped += (theirs[i] <= clusters.threshold ? 0 : 1) != classes[i];
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
                                    "when timed from other SMs: " + other_sms.str();
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
    std::optional<Summary> by_hits; ///< hit fraction x working set beyond the knee
  };

  /// Latency vs working set, refined near the knee.
  L2Sweep l2_sweep(Warm warm) {
    const std::vector<double> coarse_mib =
        quick() ? std::vector<double>{4, 16, 32, 48, 64, 96, 128, 256}
                : std::vector<double>{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 192, 256};
    L2Sweep sweep;
    auto measure_at = [&](double mib) {
      const auto bytes = static_cast<std::uint64_t>(mib * kMiB);
      const HopStats stats = l2_point(bytes, warm);
      sweep.latency.emplace_back(static_cast<double>(bytes), stats.mean);
      sweep.hits.emplace_back(static_cast<double>(bytes), stats.hit_fraction);
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
    sweep.by_hits = capacity_from_hit_fractions(sweep.hits, sweep.rise ? sweep.rise->first_risen_x * 1.2 : 0);
    return sweep;
  }

  double l2_step_mib() const { return quick() ? 4 : 1; }

  void l2_capacity() {
    // Stores put each line in L2 once; reads from every SM also leave copies of far lines in the
    // readers' near partitions, so less distinct data fits. The first is the capacity.
    const L2Sweep stored = l2_sweep(Warm::stores);
    const L2Sweep read = l2_sweep(Warm::reads);
    add_curve("L2 chase, one SM (warmed by stores)", kWorkingSetUnit, kLatencyUnit, stored.latency);
    add_curve("L2 chase, one SM (warmed by reads from all SMs)", kWorkingSetUnit, kLatencyUnit, read.latency);
    add_curve("L2 hit fraction, one SM (warmed by stores)", "bytes (working set)", "fraction", stored.hits);
    add_curve("L2 hit fraction, one SM (warmed by reads from all SMs)", "bytes (working set)", "fraction", read.hits);

    const L2Sweep& primary = stored.rise ? stored : read;
    const L2Sweep& other = stored.rise ? read : stored;
    const std::string primary_warm = stored.rise ? "cudaMemset of the working set (stores)" :
                                                   "every SM streaming the working set with ld.global.cg (stores showed no knee)";
    std::ostringstream method;
    method << "working-set sweep: warm by " << primary_warm << ", then time " << gpu::kMaxTimedHops
           << " random lines of it one by one from one pinned SM with ld.global.cg; refined in "
           << format_number(l2_step_mib(), 0) << " MiB steps; capacity = last working set on the hit plateau";
    if (primary.by_hits) {
      method << "; second method, hit fraction x working set beyond the knee: " << format_bytes(primary.by_hits->median)
             << " (spread " << format_number(100 * primary.by_hits->spread) << "%)";
    }
    if (other.rise) {
      method << "; warmed the other way the knee is at " << format_bytes(other.rise->last_flat_x);
      if (other.by_hits) method << " (hit fraction x working set " << format_bytes(other.by_hits->median) << ")";
    }
    if (!primary.rise) {
      const double fallback = primary.by_hits ? primary.by_hits->median : static_cast<double>(l2_reported());
      profile_.l2.capacity_bytes = measured(fallback, low(method.str() + "; no latency knee found"));
    } else {
      const double knee = primary.rise->last_flat_x;
      Confidence confidence = quick() ? Confidence::medium : Confidence::high;
      if (!primary.by_hits || std::abs(primary.by_hits->median - knee) > 0.1 * knee) {
        confidence = weakest(confidence, Confidence::medium);
      }
      profile_.l2.capacity_bytes = measured(
          knee, {method.str(), static_cast<std::int64_t>(primary.latency.size()), l2_step_mib() * kMiB / knee, confidence});
    }
    // Near partition: the share of addresses an SM sees as near, of the capacity.
    const double near = std::round(profile_.l2.capacity_bytes.value * near_fraction_ / kMiB * 2) / 2 * kMiB;
    profile_.l2.near_capacity_bytes = measured(
        near, {"capacity x share of addresses near to the home SM (" + format_number(100 * near_fraction_) +
                   "%, per-address test), rounded to 0.5 MiB",
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
    std::ostringstream method;
    const auto found = ways_test({256 * kKiB, 1 * kMiB, 4 * kMiB, 16 * kMiB}, 64, 2, CacheOp::cg, "L2", method);
    if (!found) {
      profile_.l2.replacement = {ReplacementPolicy::unknown,
                                 "no same-set conflict up to 64 lines at power-of-two strides (hashed set index)",
                                 low(method.str())};
      return;
    }
    const auto [ways, stride] = *found;
    profile_.l2.ways = measured(ways, {method.str(), 4, 0.0, Confidence::low});
    const ReplacementGuess guess = replacement_test(ways, stride, CacheOp::cg, 8);
    profile_.l2.replacement = {guess.policy, guess.fingerprint,
                               low("eviction fingerprint with ld.global.cg in one set (ways and stride above)", 16)};
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

  void tlb() {
    std::uint64_t largest = quick() ? 2 * kGiB : kTlbLargestRegion;
    if (largest + kGiB > buffer_->bytes()) {
      // Regions beyond the shared buffer: swap it for a larger one (same fixed regions, zeroed),
      // or stay within the shared buffer when the device has no room for it.
      buffer_.reset();
      try {
        buffer_ = std::make_unique<DeviceBuffer>(largest + kGiB);
      } catch (const std::runtime_error&) {
        buffer_ = std::make_unique<DeviceBuffer>(kBufferBytes);
        largest = 8 * kGiB;
      }
    }
    std::vector<Point> curve;
    for (std::uint64_t region = 16 * kMiB; region <= largest; region *= 2) {
      curve.emplace_back(static_cast<double>(region), tlb_point(region, 2 * kMiB));
    }
    add_curve("TLB: chase one line per 2 MiB vs region", "bytes (region)", kLatencyUnit, curve);
    const std::optional<Rise> rise = find_rise(curve, 0.25, 1.1);
    if (!rise) return;
    const double reach = rise->last_flat_x;
    profile_.tlb.reach_bytes = measured(
        reach, {"chase ld.global.cg through one random line per 2 MiB over growing regions (nodes stay in L2): "
                "reach = last region before the latency step (" + format_number(rise->base_level) + " -> " +
                    format_number(rise->top_level) + " cycles); power-of-two steps",
                static_cast<std::int64_t>(curve.size()), 0.0, Confidence::medium});
    profile_.tlb.miss_penalty_cycles = measured(
        rise->top_level - rise->base_level,
        {"latency after the reach step minus before it (same curve)", static_cast<std::int64_t>(curve.size()), 0.0,
         Confidence::medium});
    if (quick()) return;
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
    std::ostringstream method;
    method << "block test: random aligned blocks of B bytes (a node every 64 KiB), footprint at the TLB knee grows "
              "with B until B reaches the page. Knees:";
    for (const auto& [block, knee] : knees) method << ' ' << format_bytes(block) << "->" << format_bytes(knee);
    profile_.tlb.page_bytes = measured(*page, {method.str(), static_cast<std::int64_t>(knees.size()), 0.0,
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
  int home_sm_ = 0;         ///< the SM the per-SM latency tests run on
};

} // namespace

DeviceProfile run_probe(const ProbeOptions& options, const ProgressCallback& progress,
                        const StopRequested& stop_requested) {
  return Probe(options, progress, stop_requested).run();
}

} // namespace cachewise::probe
