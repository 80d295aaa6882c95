// Histograms (kernels/histogram.cu) whose data put every lane on one bin against data spread
// over the bins: the same instructions and traffic, but atomics on one address serialise, in
// shared memory (one wavefront per lane on the word) and at the L2 slice of a global address
// (docs/model.md, "Atomics"). 2^20 elements, 256 threads a block, 4096 blocks; the data's
// contents declared (all 0, or element i = i). Counts derived by hand.
#include <memory>

#include "cachewise/model/simulation/kernel_trace.hpp"
#include "cachewise/model.hpp"
#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

constexpr std::int64_t kElements = std::int64_t{1} << 20;
constexpr std::int64_t kThreads = 256;
constexpr std::int64_t kBlocks = kElements / kThreads;

const DeviceProfile& h200() {
  static const DeviceProfile profile = load_profile(std::string(CACHEWISE_SOURCE_DIR) + "/profiles/h200.json");
  return profile;
}

/// The histogram `entry` over data whose element i is `value(i)`.
TracedKernel histogram(const std::string& entry, std::function<std::int64_t(std::int64_t)> value) {
  static const auto module = std::make_shared<const PtxModule>(load_test_ptx("histogram"));
  TracedKernel kernel;
  kernel.name = entry;
  kernel.grid = {kBlocks, 1, 1};
  kernel.block = {kThreads, 1, 1};
  kernel.shared_bytes_per_block = entry == "histogram_shared" ? 1024 : 0;
  kernel.registers_per_thread = 16;
  kernel.buffers = place_buffers({{"data", kElements * 4}, {"bins", 256 * 4}});
  kernel.useful_bytes = kElements * 4 + 256 * 4;
  LaunchArgs args;
  args.grid = kernel.grid;
  args.block = kernel.block;
  args.params = {kernel.buffers[0].base_address, kernel.buffers[1].base_address};
  args.buffers = kernel.buffers;
  args.contents = {{"data", kernel.buffers[0].base_address, kElements * 4, 4, std::move(value)}};
  auto extractor = std::make_shared<const Extractor>(*module, entry_containing(*module, entry), args);
  kernel.trace_block = [extractor](const std::array<std::int64_t, 3>& index) { return extractor->trace_block(index); };
  return kernel;
}

std::int64_t all_zero(std::int64_t) { return 0; }
std::int64_t identity(std::int64_t i) { return i; }

// Per block: 8 warps zero their 32 bins (8 wavefronts), then add 1 to bin data[i] % 256. All on
// bin 0: each warp's 32 lanes on word 0, 32 wavefronts (31 conflicts); spread (bin i % 256 =
// tid): warp w on words 32w .. 32w + 31, one per bank, 1 wavefront. Shared store wavefronts
// 4096 x (8 + 256) = 1081344 against 4096 x 16 = 65536; conflicts 4096 x 8 x 31 = 1015808.
// Both merge with one global atomic per bin and block: 4096 on each bin's address.
TEST(ExtractAtomics, SharedHistogramOnOneBinIsPredictedSlower) {
  TracedFacts one_bin_facts;
  TracedFacts spread_facts;
  const Prediction one_bin = simulate_traced(histogram("histogram_shared", all_zero), h200(), {}, &one_bin_facts);
  const Prediction spread = simulate_traced(histogram("histogram_shared", identity), h200(), {}, &spread_facts);
  EXPECT_NEAR(one_bin.metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), 1081344, 1e-6);
  EXPECT_NEAR(one_bin.metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"), 1015808, 1e-6);
  EXPECT_NEAR(spread.metric("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), 65536, 1e-6);
  EXPECT_NEAR(spread.metric("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"), 0, 1e-6);
  EXPECT_NEAR(one_bin_facts.hottest_address_atomics, 4096, 1e-6);
  EXPECT_NEAR(spread_facts.hottest_address_atomics, 4096, 1e-6);
  // The conflicts add 1015808 x extra_wavefront_cycles to the shared pipe's cycles over the
  // 132 SMs, over the waves' busiest-SM shares: 4 waves of 8 blocks per SM, 4224 / 4096.
  const double clock_mhz = std::max(h200().device.sm_clock_mhz_after, h200().device.sm_clock_mhz_before);
  const double extra_cycles = h200().shared_memory.extra_wavefront_cycles->value;
  EXPECT_NEAR(one_bin.time_terms_us.at("shared") - spread.time_terms_us.at("shared"),
              1015808 * extra_cycles / (132 * clock_mhz) * 4224 / 4096, 1e-9);
  EXPECT_GT(one_bin.time_us, spread.time_us);
}

// One global atomic per element on bin data[i] % 256: all on bin 0, 2^20 operations one after
// another at its L2 slice (same_address_atomic_cycles each); spread, 2^20 / 256 = 4096 on each.
TEST(ExtractAtomics, GlobalHistogramOnOneBinSerialisesAtL2) {
  TracedFacts one_bin_facts;
  TracedFacts spread_facts;
  const Prediction one_bin = simulate_traced(histogram("histogram_global", all_zero), h200(), {}, &one_bin_facts);
  const Prediction spread = simulate_traced(histogram("histogram_global", identity), h200(), {}, &spread_facts);
  EXPECT_NEAR(one_bin_facts.hottest_address_atomics, kElements, 1e-6);
  EXPECT_NEAR(spread_facts.hottest_address_atomics, 4096, 1e-6);
  const double clock_mhz = std::max(h200().device.sm_clock_mhz_after, h200().device.sm_clock_mhz_before);
  const double cycles = h200().calibration.same_address_atomic_cycles.value;
  EXPECT_NEAR(one_bin.time_terms_us.at("atomics"), kElements * cycles / clock_mhz, 1e-6);
  EXPECT_NEAR(spread.time_terms_us.at("atomics"), 4096 * cycles / clock_mhz, 1e-6);
  EXPECT_EQ(one_bin.bottleneck, "atomics");
  EXPECT_GT(one_bin.time_us, 10 * spread.time_us);
}

} // namespace
} // namespace cachewise::frontend::testing
