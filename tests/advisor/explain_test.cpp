// Reasons and ranking on hand-made predictions: no simulator involved, so every expected
// string follows from the counters written here.
#include <gtest/gtest.h>

#include "cachewise/advisor.hpp"

namespace cachewise::advisor {
namespace {

constexpr double kSectorsPerRequestCoalesced = 4; // 32 lanes x 4 B = 128 B = 4 sectors

Candidate candidate(const char* config, double time_us, const char* bottleneck) {
  Candidate c;
  c.config = Config::parse(config);
  c.threads_per_block = 256;
  c.shared_bytes_per_block = 4224;
  c.registers_per_thread = 32;
  c.blocks_per_sm = 8;
  c.prediction.time_us = time_us;
  c.prediction.bottleneck = bottleneck;
  auto& m = c.prediction.metrics;
  m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 1000;
  m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = 1000 * kSectorsPerRequestCoalesced;
  m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] = 1000;
  m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] = 1000 * kSectorsPerRequestCoalesced;
  m["dram__bytes_read.sum"] = 128000;
  m["dram__bytes_write.sum"] = 128000;
  m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 1000;
  m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 0;
  m["l1tex__t_sector_hit_rate.pct"] = 0;
  m["lts__t_sector_hit_rate.pct"] = 50;
  return c;
}

TEST(Explain, PadThatRemovesABankConflict) {
  const Candidate padded = candidate("pad=1,smem=1", 10.0, "dram");
  Candidate unpadded = candidate("pad=0,smem=1", 19.0, "shared");
  // Every column read of a 32x32 f32 tile hits one bank: 32 wavefronts where 1 would do.
  unpadded.prediction.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 32000;
  unpadded.prediction.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 31000;
  EXPECT_EQ(explain_against(padded, unpadded),
            "pad=1 (vs 0): removes the 32-way bank conflict of shared loads; 1.9x faster");
  EXPECT_EQ(explain_against(unpadded, padded),
            "pad=0 (vs 1): 32-way bank conflict on shared loads (vs 1-way); 1.9x slower");
}

TEST(Explain, UncoalescedStoresNameSectorsAndDramTraffic) {
  const Candidate staged = candidate("smem=1,tile=32", 10.0, "dram");
  Candidate direct = candidate("smem=0,tile=32", 20.0, "dram");
  direct.prediction.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] = 32000; // one sector per lane
  direct.prediction.metrics["dram__bytes_write.sum"] = 8 * 128000;
  direct.prediction.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 0;
  direct.prediction.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 0;
  EXPECT_EQ(explain_against(staged, direct),
            "smem=1 (vs 0): 4 sectors per store request instead of 32, 8.0x less DRAM write traffic; 2.0x faster");
  EXPECT_EQ(explain_against(direct, staged),
            "smem=0 (vs 1): 32 sectors per store request instead of 4, 8.0x the DRAM write traffic; 2.0x slower");
}

TEST(Explain, PrefersTheCounterFeedingTheBottleneck) {
  // The slower one is bound by L1 requests. Its 1 sector per request is no advantage of the
  // wider access (more sectors per request is not a win), so it is not named.
  const Candidate wide = candidate("vector=4", 10.0, "dram");
  Candidate narrow = candidate("vector=1", 13.0, "l1");
  narrow.prediction.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 4000;
  narrow.prediction.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = 4000; // same sectors, 1 per request
  EXPECT_EQ(explain_against(wide, narrow), "vector=4 (vs 1): 4.0x fewer global load requests; 1.3x faster");
}

TEST(Explain, CountersAgainstTheTimeDifferenceAreNotReasons) {
  const Candidate fast = candidate("block=256", 10.0, "dram");
  Candidate slow = candidate("block=1024", 10.5, "latency");
  slow.blocks_per_sm = 2;
  slow.prediction.metrics["dram__bytes_read.sum"] = 64000; // less traffic, yet slower: not the reason
  EXPECT_EQ(explain_against(fast, slow), "block=256 (vs 1024): 8 resident blocks per SM instead of 2; 5% faster");
}

TEST(Explain, NoNotableCounterNamesTheTimeTermThatDiffers) {
  // Equal counters, a 3.0x gap: the reason is the term the slower one spends more time in.
  // 64-thread blocks of a tree reduction (7 phases) against 256-thread ones (9 phases) at the
  // same traffic: DRAM 17 us in both; the slower one's block dispatch
  // 30 us against 7.5 us. The largest slower-minus-faster term is blocks (22.5 us), not dram (0).
  Candidate a = candidate("block=256", 10.0, "dram");
  Candidate b = candidate("block=64", 30.0, "blocks");
  a.prediction.time_terms_us = {{"dram", 17.0}, {"blocks", 7.5}};
  b.prediction.time_terms_us = {{"dram", 17.0}, {"blocks", 30.0}};
  EXPECT_EQ(explain_against(b, a), "block=64 (vs 256): block dispatch 30 vs 7.5 µs; 3.0x slower");
  EXPECT_EQ(explain_against(a, b), "block=256 (vs 64): block dispatch 7.5 vs 30 µs; 3.0x faster");
  // Without terms (a hand-made prediction) the bottlenecks are all there is to say.
  a.prediction.time_terms_us.clear();
  b.prediction.time_terms_us.clear();
  EXPECT_EQ(explain_against(b, a), "block=64 (vs 256): bottleneck blocks vs dram; 3.0x slower");
}

TEST(Explain, TheTermThatDiffersLeadsAndPicksItsCounter) {
  // The padded tile's shared-memory time is 5 us against the unpadded one's 14 us (32
  // wavefronts per column read instead of 1); DRAM is 10 us in both, so the 9 us of the
  // shared term are the gap, and the bank conflict (a counter feeding "shared") is named
  // first inside it, the DRAM write traffic (2x less, a supporting counter of at least 1.5x)
  // after it.
  Candidate padded = candidate("pad=1,smem=1", 10.0, "dram");
  Candidate unpadded = candidate("pad=0,smem=1", 19.0, "shared");
  unpadded.prediction.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 32000;
  unpadded.prediction.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 31000;
  padded.prediction.metrics["dram__bytes_write.sum"] = 64000;
  padded.prediction.time_terms_us = {{"dram", 10.0}, {"shared", 5.0}};
  unpadded.prediction.time_terms_us = {{"dram", 10.0}, {"shared", 14.0}};
  EXPECT_EQ(explain_against(padded, unpadded),
            "pad=1 (vs 0): shared-memory time 5 vs 14 µs (removes the 32-way bank conflict of shared loads, 2.0x less "
            "DRAM write traffic); 1.9x faster");
}

TEST(Explain, EqualTimesNameTheResourceTieBreak) {
  const Candidate a = candidate("block_y=8,pad=1", 10.0, "dram");
  Candidate b = candidate("block_y=16,pad=1", 10.0, "dram");
  b.threads_per_block = 512;
  EXPECT_EQ(explain_against(b, a),
            "block_y=16 (vs 8): same predicted time (10 µs); ranked lower for threads per block 512 vs 256");
  b.prediction.time_us = 10.02; // within 0.5%, but not equal: the times are shown
  EXPECT_EQ(explain_against(b, a),
            "block_y=16 (vs 8): within 0.5% (10.020 vs 10.000 µs); threads per block 512 vs 256");
}

TEST(Explain, AloneReportsTheSalientNumbers) {
  Candidate c = candidate("", 10.0, "shared");
  c.prediction.achieved_bandwidth_gb_per_s = 2400;
  c.prediction.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 32000;
  c.prediction.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 31000;
  DeviceProfile profile;
  profile.dram.read_bandwidth_gb_per_s.value = 4800;
  EXPECT_EQ(explain_alone(c, profile),
            "bottleneck shared, 2400 GB/s useful (50% of DRAM read bandwidth), 4 sectors per load request, 4 per store "
            "request, 32-way bank conflict on shared loads, up to 8 resident blocks per SM");
  // A grid smaller than the device leaves SMs idle, whatever the residency allows.
  c.prediction.grid_blocks = 32;
  profile.device.sm_count = 132;
  EXPECT_EQ(explain_alone(c, profile),
            "bottleneck shared, 2400 GB/s useful (50% of DRAM read bandwidth), 4 sectors per load request, 4 per store "
            "request, 32-way bank conflict on shared loads, up to 8 resident blocks per SM (32 blocks on 132 SMs: 100 "
            "SMs idle)");
}

TEST(Explain, IssueBoundKernelsLeadWithTheirFlopRate) {
  // 132 SMs x 1980 MHz x 256 flops a cycle (compute capability 9.0) = 66908 GFLOP/s of FP32
  // peak; 33454 GFLOP/s achieved is 50% of it.
  Candidate c = candidate("", 10.0, "compute");
  c.prediction.achieved_bandwidth_gb_per_s = 240;
  c.prediction.achieved_gflop_per_s = 33454;
  DeviceProfile profile;
  profile.dram.read_bandwidth_gb_per_s.value = 4800;
  profile.device.sm_count = 132;
  profile.device.sm_clock_mhz_after = 1980;
  profile.device.compute_capability_major = 9;
  profile.device.compute_capability_minor = 0;
  EXPECT_EQ(
      explain_alone(c, profile),
      "bottleneck compute, 240 GB/s useful (5% of DRAM read bandwidth), 33454 GFLOP/s (50% of FP32 peak), 4 sectors "
      "per load request, 4 per store request, up to 8 resident blocks per SM");
  // Bound elsewhere, the FLOP rate is not the headline.
  c.prediction.bottleneck = "dram";
  EXPECT_EQ(explain_alone(c, profile).find("GFLOP/s"), std::string::npos);
}

TEST(Summary, DerivesRatiosAndLeavesAbsentMetricsEmpty) {
  Candidate c = candidate("", 1.0, "dram");
  c.prediction.metrics.erase("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum");
  c.prediction.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = 0; // no shared loads at all
  const CounterSummary s = summarize(c.prediction);
  EXPECT_DOUBLE_EQ(s.load_sectors_per_request.value(), 4.0);
  EXPECT_FALSE(s.store_sectors_per_request.has_value());
  EXPECT_FALSE(s.shared_load_ways.has_value());
  EXPECT_FALSE(s.shared_store_ways.has_value());
  EXPECT_DOUBLE_EQ(s.l2_hit_pct.value(), 50.0);
}

TEST(Rank, FasterFirstThenFewerResources) {
  std::vector<Candidate> candidates = {candidate("id=1", 12.0, "dram"), candidate("id=2", 10.0, "dram"),
                                       candidate("id=3", 10.0, "dram"), candidate("id=4", 10.0, "dram"),
                                       candidate("id=5", 10.0004, "dram")};
  candidates[1].threads_per_block = 512;
  candidates[2].shared_bytes_per_block = 8448;
  // id=5 is 0.4 ns slower than id=4: the same to the nanosecond, and it uses fewer registers.
  candidates[4].registers_per_thread = 16;
  rank_candidates(candidates);
  std::vector<std::string> order;
  for (const Candidate& c : candidates) order.push_back(c.config.to_string());
  EXPECT_EQ(order, (std::vector<std::string>{"id=5", "id=4", "id=3", "id=2", "id=1"}));
}

} // namespace
} // namespace cachewise::advisor
