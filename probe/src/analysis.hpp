// Curve analysis for the probe: plain C++ (no CUDA), so every rule that turns raw timings into
// profile values is unit-tested on the CPU with synthetic and noisy curves.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/model.hpp"

namespace cachewise::probe {

/// Units of the latency-vs-working-set curves: the ones the SVG plot draws.
inline constexpr const char* kWorkingSetUnit = "bytes (working set)";
inline constexpr const char* kLatencyUnit = "cycles per load";

/// One (x, y) sample of a curve: working set or stride in bytes -> latency or bandwidth.
using Point = std::pair<double, double>;

/// Robust summary of repeated samples. `spread` is (p75 - p25) / median, as in Provenance.
struct Summary {
  double median = 0.0;
  double p25 = 0.0;
  double p75 = 0.0;
  double spread = 0.0;
  std::int64_t samples = 0;
};

/// Throws std::invalid_argument on an empty sample set.
Summary summarize(std::vector<double> samples);

/// high when spread <= high_max, medium when <= medium_max, else low.
Confidence confidence_from_spread(double spread, double high_max = 0.03, double medium_max = 0.10);

/// The lower of two confidences.
Confidence weakest(Confidence a, Confidence b);

/// Provenance for a value summarised from samples; confidence follows the spread.
Provenance provenance_from(const std::string& method, const Summary& summary);

/// Where a flat-then-rising curve (latency vs working set) leaves its first plateau.
struct Rise {
  std::size_t last_flat_index = 0; ///< last point still on the first plateau
  double last_flat_x = 0.0;
  double first_risen_x = 0.0; ///< first point of the sustained rise
  double base_level = 0.0;    ///< median of the first plateau
  double top_level = 0.0;     ///< median of the points after the rise
};

/// Finds the first sustained rise: the first point from which `confirm` consecutive points all
/// exceed base + threshold_fraction * (top - base), where base is the level of the first points
/// and top the level of the last ones. A single noisy spike does not count as a rise.
/// nullopt when the curve never rises by at least min_ratio (top / base).
std::optional<Rise> find_rise(const std::vector<Point>& curve, double threshold_fraction = 0.1, double min_ratio = 1.15,
                              std::size_t confirm = 2);

/// Where a flat-then-falling curve (bandwidth vs working set) leaves its first plateau: the rise of
/// the reciprocal curve.
std::optional<Rise> find_drop(const std::vector<Point>& curve, double threshold_fraction = 0.1, double min_ratio = 1.15,
                              std::size_t confirm = 2);

/// One flat run of a latency-vs-working-set curve.
struct Plateau {
  double level = 0.0; ///< median y of its points
  double first_x = 0.0;
  double last_x = 0.0; ///< the largest x still on it (a capacity when the plateau is a cache level)
  std::size_t points = 0;
};

/// Where the curve leaves one plateau for the next: last_flat_x is the last point on the lower
/// plateau, first_risen_x the next point of the curve (the step lies between them).
struct Step {
  double last_flat_x = 0.0;
  double first_risen_x = 0.0;
};

/// The plateaus of a rising staircase (e.g. near L2, far L2, DRAM), ascending in x and level.
struct Plateaus {
  std::vector<Plateau> levels;
  std::vector<Step> steps;       ///< steps[k] leads from levels[k] to levels[k + 1]
  std::vector<double> outlier_x; ///< single points off their plateau, ignored
};

/// Plateau detection on a curve with noise. Scanning in x, a point belongs to the current run
/// while it lies within `tolerance` (relative) of the run's median; a single point off an
/// established run (at least min_points) whose next point is back on it is an outlier; any other
/// point off the run starts a new one. Runs of fewer than min_points points are transitions
/// (gradual rises), not plateaus. Neighbouring plateaus whose levels differ by less than
/// min_step_ratio are one; beyond max_levels, the closest neighbours are merged first. nullopt
/// when no run has min_points points. Points need y > 0.
std::optional<Plateaus> find_plateaus(const std::vector<Point>& curve, double tolerance = 0.06,
                                      std::size_t min_points = 2, double min_step_ratio = 1.15,
                                      std::size_t max_levels = 3);

/// x values from `low` to `high` (inclusive) in steps of `step`; empty when step <= 0.
std::vector<double> grid(double low, double high, double step);

/// Capacity from a "warm everything, then sample" curve: after warming a working set W larger than
/// the cache C, a random line hits with probability C / W, so C = hit_fraction * W. Averages the
/// points with W >= min_working_set whose hit fraction lies inside (0.05, 0.95).
std::optional<Summary> capacity_from_hit_fractions(const std::vector<Point>& working_set_to_hit_fraction,
                                                   double min_working_set);

/// Capacity from a warm-then-sample hit-fraction curve whose plateau lies below 1 (the hit/miss
/// classifier misses some hits, e.g. 89..93% on the H200): with p0 the plateau's hit fraction,
/// a random line of a working set W > C is classified a hit with probability p0 * C / W, so
/// C = W * h / p0. p0 = median fraction of the points with W <= plateau_end; estimates from the
/// points with h / p0 in [min_relative_hit, max_relative_hit] (clearly past the gradual knee,
/// not yet lost in the noise). nullopt without plateau points or estimates.
struct HitCapacity {
  Summary capacity;                ///< of the per-point estimates W * h / p0
  double plateau_hit_fraction = 0; ///< p0
};
std::optional<HitCapacity> capacity_from_hit_curve(const std::vector<Point>& working_set_to_hit_fraction,
                                                   double plateau_end, double min_relative_hit = 0.1,
                                                   double max_relative_hit = 0.8);

/// Near-partition capacity from the same store-warmed sweep: lines stored once live in their
/// home partition, so past the whole cache's knee a random line is resident with probability
/// C / W and near to the sampling SM with probability C_near / W; C_near = W x near / p0 over the
/// points (matched by x) whose relative hit fraction h / p0 lies in [min, max]. nullopt without
/// such points or with p0 <= 0.
std::optional<Summary> near_capacity_from_hit_curves(const std::vector<Point>& working_set_to_hit_fraction,
                                                     const std::vector<Point>& working_set_to_near_fraction,
                                                     double plateau_hit_fraction, double min_relative_hit = 0.1,
                                                     double max_relative_hit = 0.8);

/// Splits samples into a low and a high group (two-means on one axis).
struct TwoClusters {
  Summary low;
  Summary high;
  double threshold = 0.0;    ///< midway between the two groups' medians
  double low_fraction = 0.0; ///< share of samples in the low group
  double separation = 0.0;   ///< (high.median - low.median) / larger group IQR; > 3 means clearly two groups
};

/// Throws std::invalid_argument with fewer than two distinct values.
TwoClusters split_two_clusters(const std::vector<double>& samples);

/// Which L2 partition each SM sees as near, from the near (0) / far (1) class every SM gave the
/// same addresses: an SM whose classes differ from the home SM's on more than half of them is in
/// the other partition (1), the rest in the home SM's (0). `ambiguity` is the largest share of
/// addresses an SM disagrees with its own side on (0 when every class agrees; near 0.5 means the
/// split says little). Throws std::invalid_argument when an SM's classes differ in length.
struct PartitionSides {
  std::vector<int> side; ///< per SM, in the order given
  double ambiguity = 0.0;
};
PartitionSides partition_sides(const std::vector<int>& home_classes,
                               const std::vector<std::vector<int>>& classes_by_sm);

/// Line (or page) size from the block test: M random aligned blocks of B bytes, every sector of
/// each touched. A cache of C bytes in L-byte lines holds C / L lines, so the footprint M * B at the
/// capacity knee is C * B / L while B < L and C once B >= L. Returns the smallest block size whose
/// next larger block's knee is not more than `tolerance` above its own (the footprint stopped
/// growing; knees beyond it may scatter, e.g. 117.5, 94, 117.5 KiB on the H200's L1). Input:
/// (block bytes, knee footprint bytes), any order. nullopt when even the smallest block saturates
/// (the line is no larger than it) or the knees do not level off.
std::optional<double> smallest_saturating_block(std::vector<Point> block_to_knee, double tolerance = 0.2);

/// Smallest offset (bytes) whose second access missed, in a "touch offset 0, then time offset d"
/// test: everything below it arrived with the first fill. Points: (d, latency). nullopt when every
/// offset hit (granularity larger than the largest offset tried) or the first offset already missed.
std::optional<double> fill_granularity(std::vector<Point> offset_to_latency, double miss_threshold);

/// Interleave granularity from pair agreement: `classes[i]` is the class (e.g. near = 0,
/// far = 1) of the address i * spacing_bytes. For a distance d smaller than the granularity, the
/// pairs (a, a + d) with a a multiple of 2d always agree; at the granularity about half disagree.
/// Returns the smallest power-of-two distance with agreement below `agreement_limit`.
std::optional<double> interleave_granularity(const std::vector<int>& classes, double spacing_bytes,
                                             double agreement_limit = 0.9);

/// Agreement fraction for one distance (exposed for the curves and for tests).
double pair_agreement(const std::vector<int>& classes, std::size_t distance_in_elements);

/// Shared-memory banks from cycles per access vs the stride (bytes) between the 32 lanes of a warp:
/// conflict-free up to the bank width, then cost grows with the conflict degree until the stride
/// spans all banks (banks * width), after which it stays flat.
struct BankAnalysis {
  double width_bytes = 0.0;
  double banks = 0.0;
  double extra_wavefront_cycles = 0.0; ///< cost of each additional conflicting access
};

/// Conflict degree (accesses per bank, at least 1) of one warp's 4-byte loads `stride_bytes` apart.
double bank_conflict_degree(double stride_bytes, double width_bytes, double banks, int warp_size = 32);

/// Points: (stride bytes, cycles per access), strides powers of two from 4. Fits
/// cycles = base + extra * (degree - 1) for every width (4, 8, 16 B) and bank count (4..128) and
/// keeps the best fit (least squares); among equally good fits (equal bytes per bank row, which
/// 4-byte loads cannot tell apart) the narrower bank. nullopt when conflicts never double the cost.
std::optional<BankAnalysis> analyze_banks(std::vector<Point> stride_to_cycles, int warp_size = 32);

/// One eviction measurement: load `target`, walk `candidates` (in any order, after the target),
/// then report whether `target` was evicted. May be noisy.
using EvictionOracle = std::function<bool(std::uint64_t target, const std::vector<std::uint64_t>& candidates)>;

struct EvictionSetOptions {
  int votes = 3;                        ///< each answer is the majority of up to this many oracle calls
  std::size_t max_oracle_calls = 20000; ///< give up (not minimal) past this many calls
  int max_backtracks = 8;               ///< re-insertions allowed when a reduced set stops evicting
  /// Largest associativity looked for. A pass over more groups than this in which no group can go
  /// proves that no evicting subset of at most max_ways lines is left (every group holds a needed
  /// line): eviction then needs more lines than one set holds, so the target is given up early.
  std::size_t max_ways = 32;
  std::function<bool()> out_of_time; ///< polled before each call; true gives up (not minimal)
};

struct EvictionSetResult {
  bool minimal = false;             ///< `lines` evicts the target and no single line of it can be dropped
  bool candidates_evict = false;    ///< the whole candidate set evicted the target
  std::vector<std::uint64_t> lines; ///< the reduced set (minimal, or where the reduction stopped)
  std::size_t oracle_calls = 0;
  int backtracks = 0;
  std::string stopped;         ///< why the reduction ended without a minimal set
  std::vector<Point> progress; ///< (oracle calls so far, lines left) after each pass
};

/// Hash-agnostic minimal eviction set by group testing (as in CPU cache research): split the set
/// into g groups and drop every group whose removal still evicts the target; when no group can go,
/// double g (up to one line per group). With g >= ways + 1 groups some group always holds no line
/// needed to evict, so the reduction ends at a set that cannot shrink: for LRU- or FIFO-like
/// policies its size is the associativity; for random replacement it is at least that. Answers
/// are majorities of `votes` calls; a set that no longer evicts when the reduction ends gets its
/// last dropped group back (backtracking), so a rare false "evicts" costs time, not correctness.
/// A pass over g > max_ways groups in which fewer than g - max_ways groups go ends the reduction
/// early (not minimal): no subset of at most max_ways lines evicts (checked like a final set).
EvictionSetResult reduce_eviction_set(std::uint64_t target, std::vector<std::uint64_t> candidates,
                                      const EvictionOracle& evicts, const EvictionSetOptions& options = {});

/// Associativity from the sizes of the minimal eviction sets of several targets: the most common
/// size and how many sets had it. nullopt unless at least `min_agreeing` sets share that size and
/// they are more than half of all sets (one set alone, or a tie, is no answer: the probe then
/// writes nothing rather than a value the next run may contradict).
struct WaysVote {
  double ways = 0;
  std::size_t agreeing = 0;
  std::size_t sets = 0;
};
std::optional<WaysVote> ways_from_minimal_sets(const std::vector<std::size_t>& sizes, std::size_t min_agreeing = 2);

/// Hit/miss threshold of one eviction target from its own probe times: `hit_cycles` after just
/// loading it, `evicted_cycles` after walking the whole candidate set. The evicted level is the
/// p25 of those samples (an evicted line may still be served by a slower copy, e.g. another L2
/// partition, well below a DRAM miss); the threshold is midway between the hit median and it.
/// separated: the evicted p25 is at least min_ratio x the hit p75 (else the candidates do not
/// evict the target reliably, and the threshold means nothing).
struct EvictionThreshold {
  Summary hit;
  Summary evicted;
  double threshold = 0;
  bool separated = false;
};
/// Throws std::invalid_argument on an empty sample set.
EvictionThreshold eviction_threshold(const std::vector<double>& hit_cycles, const std::vector<double>& evicted_cycles,
                                     double min_ratio = 1.3);

/// Latency vs region of a TLB chase with one node per `stride_bytes`.
struct StrideCurve {
  double stride_bytes = 0;
  std::vector<Point> region_to_latency;
};

/// TLB reach from chases at several strides. With a node per stride s no larger than the page,
/// the latency steps once the region exceeds entries x page, whatever s; so the smallest stride's
/// step is the reach. Without a step there the reach is at least its largest region (lower_bound).
struct TlbReach {
  double reach_bytes = 0;
  bool lower_bound = true;
  double miss_penalty_cycles = 0; ///< top - base level of the step (0 for a lower bound)
  /// The largest stride whose step lies at the same region as the smallest stride's: one entry
  /// covers at least that much (0 for a lower bound).
  double entry_covers_at_least_bytes = 0;
  /// The smallest larger stride that steps later or not at all: there every node needs an entry
  /// of its own, so one entry covers less than that (0 when no such stride was tried).
  double entry_covers_less_than_bytes = 0;
  std::vector<std::optional<Rise>> steps; ///< per curve, in the order given
};
/// Throws std::invalid_argument without curves or with an empty curve.
TlbReach tlb_reach(const std::vector<StrideCurve>& curves, double threshold_fraction = 0.25, double min_ratio = 1.1);

/// Replacement policy from the eviction fingerprint: fill the W ways of one set with lines 0..W-1,
/// re-touch line 0, insert line W, then test whether line 0 and line 1 are still cached.
struct ReplacementGuess {
  ReplacementPolicy policy = ReplacementPolicy::unknown;
  std::string fingerprint;
};
ReplacementGuess classify_replacement(int line0_kept, int line1_kept, int trials);

} // namespace cachewise::probe
