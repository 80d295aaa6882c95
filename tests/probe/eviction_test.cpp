// Eviction-set reduction, the ways and eviction threshold read from it, and the replacement
// fingerprint (probe/src/analysis.hpp), on a simulated set-associative cache.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "analysis.hpp"

namespace cachewise::probe {
namespace {

/// A set-associative cache of 128 B lines with a hashed set index, for the eviction-set tests.
class SimulatedCache {
public:
  enum class Policy { lru, fifo, random };
  SimulatedCache(std::size_t sets, std::size_t ways, Policy policy, unsigned seed = 3)
      : sets_(sets), ways_(ways), policy_(policy), random_(seed), content_(sets) {}

  /// A multiplicative hash of the line number (no power-of-two stride maps to one set).
  std::size_t set_of(std::uint64_t address) const {
    return static_cast<std::size_t>(((address / 128) * 0x9E3779B97F4A7C15ull) >> 40) % sets_;
  }
  void clear() {
    for (auto& set : content_) set.clear();
  }
  /// Front = next victim (least recently used, or first in).
  void access(std::uint64_t address) {
    const std::uint64_t line = address / 128;
    std::vector<std::uint64_t>& set = content_[set_of(address)];
    const auto found = std::ranges::find(set, line);
    if (found != set.end()) {
      if (policy_ == Policy::lru) {
        set.erase(found);
        set.push_back(line);
      }
      return;
    }
    if (set.size() == ways_) {
      const std::size_t victim =
          policy_ == Policy::random ? std::uniform_int_distribution<std::size_t>(0, ways_ - 1)(random_) : 0;
      set.erase(set.begin() + static_cast<std::ptrdiff_t>(victim));
    }
    set.push_back(line);
  }
  bool holds(std::uint64_t address) const {
    return std::ranges::find(content_[set_of(address)], address / 128) != content_[set_of(address)].end();
  }
  /// The GPU oracle's sequence: fresh cache, load the target, walk the candidates twice.
  bool evicts(std::uint64_t target, const std::vector<std::uint64_t>& candidates) {
    clear();
    access(target);
    for (int walk = 0; walk < 2; ++walk) {
      for (std::uint64_t line : candidates) access(line);
    }
    return !holds(target);
  }

private:
  std::size_t sets_;
  std::size_t ways_;
  Policy policy_;
  std::mt19937 random_;
  std::vector<std::vector<std::uint64_t>> content_;
};

/// `count` distinct random 128 B lines of a 128 MiB span, none equal to line 0 (the target).
std::vector<std::uint64_t> random_lines(std::size_t count, unsigned seed = 11) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::uint64_t> line(1, (128ull << 20) / 128 - 1);
  std::set<std::uint64_t> chosen;
  while (chosen.size() < count) chosen.insert(line(random) * 128);
  std::vector<std::uint64_t> lines(chosen.begin(), chosen.end());
  std::shuffle(lines.begin(), lines.end(), random);
  return lines;
}

std::size_t congruent_with(const SimulatedCache& cache, std::uint64_t target, const std::vector<std::uint64_t>& lines) {
  return static_cast<std::size_t>(
      std::ranges::count_if(lines, [&](std::uint64_t line) { return cache.set_of(line) == cache.set_of(target); }));
}

constexpr std::uint64_t kTarget = 0;

TEST(ReduceEvictionSet, LruAndFifoReduceToTheWaysOfTheTargetsSet) {
  for (auto policy : {SimulatedCache::Policy::lru, SimulatedCache::Policy::fifo}) {
    SimulatedCache cache(64, 8, policy); // 512 lines; candidates: twice that
    const EvictionSetResult result = reduce_eviction_set(
        kTarget, random_lines(1024), [&](std::uint64_t t, const auto& lines) { return cache.evicts(t, lines); });
    ASSERT_TRUE(result.minimal) << result.stopped;
    EXPECT_TRUE(result.candidates_evict);
    EXPECT_EQ(result.lines.size(), 8u);
    EXPECT_EQ(congruent_with(cache, kTarget, result.lines), 8u);
    EXPECT_EQ(result.backtracks, 0);
    EXPECT_LT(result.oracle_calls, 2000u);
    // Progress starts at the candidate count and ends at the minimal set.
    EXPECT_EQ(result.progress.front().second, 1024);
    EXPECT_EQ(result.progress.back().second, 8);
  }
}

TEST(ReduceEvictionSet, NoisyOracleStillFindsTheWaysByVotes) {
  SimulatedCache cache(64, 8, SimulatedCache::Policy::lru);
  std::mt19937 random(5);
  std::bernoulli_distribution flip(0.05);
  EvictionSetOptions options;
  options.votes = 5;
  const EvictionSetResult result = reduce_eviction_set(
      kTarget, random_lines(1024, 17),
      [&](std::uint64_t t, const auto& lines) { return cache.evicts(t, lines) != flip(random); }, options);
  ASSERT_TRUE(result.minimal) << result.stopped;
  EXPECT_EQ(result.lines.size(), 8u);
  EXPECT_EQ(congruent_with(cache, kTarget, result.lines), 8u);
}

/// An honest oracle that lies once: the first "does not evict" after call 5 comes back as "evicts".
struct LiesOnce {
  SimulatedCache& cache;
  std::size_t calls = 0;
  bool lied = false;
  bool operator()(std::uint64_t target, const std::vector<std::uint64_t>& lines) {
    const bool honest = cache.evicts(target, lines);
    if (++calls > 5 && !honest && !lied) {
      lied = true;
      return true;
    }
    return honest;
  }
};

TEST(ReduceEvictionSet, OneFalseEvictsIsUndoneByBacktracking) {
  // With single votes the lie drops an essential group; nothing evicts after that, the final
  // check fails and the reduction re-inserts that group.
  SimulatedCache cache(64, 8, SimulatedCache::Policy::lru);
  EvictionSetOptions options;
  options.votes = 1;
  LiesOnce liar{cache};
  const EvictionSetResult result = reduce_eviction_set(kTarget, random_lines(1024, 23), std::ref(liar), options);
  ASSERT_TRUE(liar.lied);
  ASSERT_TRUE(result.minimal) << result.stopped;
  EXPECT_EQ(result.backtracks, 1);
  EXPECT_EQ(result.lines.size(), 8u);
  EXPECT_EQ(congruent_with(cache, kTarget, result.lines), 8u);

  // Without backtracks allowed the same lie ends the reduction without a minimal set.
  options.max_backtracks = 0;
  LiesOnce again{cache};
  const EvictionSetResult stuck = reduce_eviction_set(kTarget, random_lines(1024, 23), std::ref(again), options);
  EXPECT_FALSE(stuck.minimal);
  EXPECT_NE(stuck.stopped.find("stopped evicting"), std::string::npos) << stuck.stopped;
}

TEST(ReduceEvictionSet, RandomReplacementNeverGoesBelowTheWays) {
  SimulatedCache cache(64, 8, SimulatedCache::Policy::random);
  EvictionSetOptions options;
  options.votes = 5;
  const EvictionSetResult result = reduce_eviction_set(
      kTarget, random_lines(1024, 29), [&](std::uint64_t t, const auto& lines) { return cache.evicts(t, lines); },
      options);
  // Fewer than 8 lines of the target's set can never evict it, so no drop below 8 of them is ever
  // accepted, whether or not the noisy answers let the reduction settle on a minimal set.
  EXPECT_GE(congruent_with(cache, kTarget, result.lines), 8u);
  EXPECT_TRUE(result.minimal || !result.stopped.empty());
}

TEST(ReduceEvictionSet, CandidatesThatDoNotEvictAreReported) {
  SimulatedCache cache(64, 8, SimulatedCache::Policy::lru);
  std::vector<std::uint64_t> few;
  for (std::uint64_t line : random_lines(1024, 31)) {
    if (cache.set_of(line) != cache.set_of(kTarget) || congruent_with(cache, kTarget, few) < 7) few.push_back(line);
  }
  few.resize(300); // 7 of the target's set at most: not enough for 8 ways
  ASSERT_LE(congruent_with(cache, kTarget, few), 7u);
  const EvictionSetResult result =
      reduce_eviction_set(kTarget, few, [&](std::uint64_t t, const auto& lines) { return cache.evicts(t, lines); });
  EXPECT_FALSE(result.minimal);
  EXPECT_EQ(result.stopped, "the candidate set does not evict the target");
  EXPECT_FALSE(result.candidates_evict);
  EXPECT_EQ(result.oracle_calls, 2u); // two "no" votes of three decide it
}

TEST(ReduceEvictionSet, StopsAtTheCallLimitAndTheTimeLimit) {
  SimulatedCache cache(64, 8, SimulatedCache::Policy::lru);
  const auto oracle = [&](std::uint64_t t, const std::vector<std::uint64_t>& lines) { return cache.evicts(t, lines); };
  EvictionSetOptions options;
  options.max_oracle_calls = 10;
  EvictionSetResult result = reduce_eviction_set(kTarget, random_lines(1024), oracle, options);
  EXPECT_FALSE(result.minimal);
  EXPECT_EQ(result.oracle_calls, 10u);
  EXPECT_NE(result.stopped.find("oracle-call limit"), std::string::npos);

  int polls = 0;
  options = {};
  options.out_of_time = [&] { return ++polls > 20; };
  result = reduce_eviction_set(kTarget, random_lines(1024), oracle, options);
  EXPECT_FALSE(result.minimal);
  EXPECT_EQ(result.oracle_calls, 20u);
  EXPECT_EQ(result.stopped, "time limit reached");
}

TEST(ReduceEvictionSet, GivesUpEarlyWhenEvictionNeedsMoreLinesThanASet) {
  // A capacity-like oracle (the H200's stalled targets): the target goes once 600 of the lines
  // are walked, whichever they are. No subset of at most 32 lines evicts, so the first pass over
  // more than 32 groups that drops fewer than g - 32 of them ends the reduction.
  const auto capacity_like = [](std::uint64_t, const std::vector<std::uint64_t>& lines) { return lines.size() >= 600; };
  const EvictionSetResult early = reduce_eviction_set(kTarget, random_lines(1024, 41), capacity_like);
  EXPECT_FALSE(early.minimal);
  EXPECT_GE(early.lines.size(), 600u);
  EXPECT_NE(early.stopped.find("no evicting subset of at most 32 lines"), std::string::npos) << early.stopped;
  EXPECT_LT(early.oracle_calls, 1000u);

  // Looking for up to 2048 ways, the reduction goes on to single lines and calls 600 lines minimal.
  EvictionSetOptions options;
  options.max_ways = 2048;
  const EvictionSetResult full = reduce_eviction_set(kTarget, random_lines(1024, 41), capacity_like, options);
  EXPECT_TRUE(full.minimal) << full.stopped;
  EXPECT_EQ(full.lines.size(), 600u);
  EXPECT_GT(full.oracle_calls, 3 * early.oracle_calls);
}

TEST(ReduceEvictionSet, MoreWaysThanLookedForIsNoMinimalSet) {
  SimulatedCache cache(64, 8, SimulatedCache::Policy::lru);
  EvictionSetOptions options;
  options.max_ways = 4;
  const EvictionSetResult result = reduce_eviction_set(
      kTarget, random_lines(1024), [&](std::uint64_t t, const auto& lines) { return cache.evicts(t, lines); }, options);
  EXPECT_FALSE(result.minimal);
  EXPECT_NE(result.stopped.find("no evicting subset of at most 4 lines"), std::string::npos) << result.stopped;
  EXPECT_GE(congruent_with(cache, kTarget, result.lines), 8u); // it never dropped below the ways
}

TEST(ReduceEvictionSet, FingerprintOnTheMinimalSetTellsLruFromFifo) {
  // The probe's replacement test on a minimal set M (size W) and its target t: fill M, re-touch
  // M[0], insert t, then check M[0] and M[1].
  for (auto policy : {SimulatedCache::Policy::lru, SimulatedCache::Policy::fifo}) {
    SimulatedCache cache(64, 8, policy);
    const EvictionSetResult result = reduce_eviction_set(
        kTarget, random_lines(1024, 37), [&](std::uint64_t t, const auto& lines) { return cache.evicts(t, lines); });
    ASSERT_TRUE(result.minimal);
    int kept[2] = {0, 0};
    for (int probe = 0; probe < 2; ++probe) {
      cache.clear();
      for (std::uint64_t line : result.lines) cache.access(line);
      cache.access(result.lines[0]);
      cache.access(kTarget);
      kept[probe] += cache.holds(result.lines[static_cast<std::size_t>(probe)]) ? 1 : 0;
    }
    EXPECT_EQ(classify_replacement(kept[0], kept[1], 1).policy,
              policy == SimulatedCache::Policy::lru ? ReplacementPolicy::lru : ReplacementPolicy::fifo);
  }
}

TEST(WaysFromMinimalSets, AMajorityOfAtLeastTwoSetsOrNothing) {
  EXPECT_FALSE(ways_from_minimal_sets({}));
  const std::optional<WaysVote> vote = ways_from_minimal_sets({16, 16, 17, 16});
  ASSERT_TRUE(vote);
  EXPECT_EQ(vote->ways, 16);
  EXPECT_EQ(vote->agreeing, 3u);
  EXPECT_EQ(vote->sets, 4u);
  EXPECT_EQ(ways_from_minimal_sets({16, 32, 16})->ways, 16);
  EXPECT_FALSE(ways_from_minimal_sets({16}));              // one set alone
  EXPECT_FALSE(ways_from_minimal_sets({16, 17}));          // no two agree
  EXPECT_FALSE(ways_from_minimal_sets({12, 8, 12, 8}));    // a tie is no majority
  EXPECT_FALSE(ways_from_minimal_sets({8, 8, 9, 10, 11})); // 2 of 5 is no majority
  EXPECT_TRUE(ways_from_minimal_sets({4}, 1));
  EXPECT_FALSE(ways_from_minimal_sets({4, 4}, 3));
}

TEST(EvictionThreshold, MidwayToTheLowestEvictedLevel) {
  // H200 L2-like: hits ~346; after the walk some probes come back at ~540 (another copy), some at
  // DRAM (~850). p25 of {530, 540, 545, 850, 860} = 540; threshold = (346 + 540) / 2 = 443.
  const EvictionThreshold clear = eviction_threshold({340, 345, 350, 348, 346}, {540, 530, 860, 545, 850});
  EXPECT_DOUBLE_EQ(clear.hit.median, 346);
  EXPECT_DOUBLE_EQ(clear.evicted.p25, 540);
  EXPECT_DOUBLE_EQ(clear.threshold, 443);
  EXPECT_TRUE(clear.separated); // 540 >= 1.3 x 348 (hit p75)
  // Two of five walks left the line cached: p25 = 352 is no eviction level.
  const EvictionThreshold mixed = eviction_threshold({340, 345, 350, 348, 346}, {350, 345, 540, 352, 860});
  EXPECT_FALSE(mixed.separated);
  EXPECT_THROW(eviction_threshold({}, {1}), std::invalid_argument);
}

TEST(ClassifyReplacement, Fingerprints) {
  EXPECT_EQ(classify_replacement(16, 0, 16).policy, ReplacementPolicy::lru);
  EXPECT_EQ(classify_replacement(0, 16, 16).policy, ReplacementPolicy::fifo);
  EXPECT_EQ(classify_replacement(8, 7, 16).policy, ReplacementPolicy::random);
  EXPECT_EQ(classify_replacement(16, 16, 16).policy, ReplacementPolicy::unknown); // nothing evicted
  EXPECT_EQ(classify_replacement(16, 0, 0).policy, ReplacementPolicy::unknown);
  EXPECT_NE(classify_replacement(15, 1, 16).fingerprint.find("line 0 kept 15/16, line 1 kept 1/16"), std::string::npos);
}

} // namespace
} // namespace cachewise::probe
