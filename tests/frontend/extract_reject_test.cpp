// What the extractor refuses, in one line naming the CUDA source line (kernels/spmv.cu):
// data-dependent loop bounds (CSR SpMV), data-dependent addresses (a gather) while the index
// buffers' contents are not declared, calls that were not inlined, accesses outside every buffer.
#include "cachewise/model.hpp"
#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

std::string extraction_error(const std::string& entry, LaunchArgs args) {
  static const PtxModule module = load_test_ptx("spmv");
  try {
    (void)Extractor(module, entry_containing(module, entry), std::move(args)).trace_block({0, 0, 0});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

constexpr const char* kContentsHint =
    " unless the loaded buffer's contents are declared (\"contents\", --contents NAME=EXPR)";

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Line 7: for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k): the loop test compares loaded values.
TEST(ExtractReject, CsrSpmvLoopBoundFromMemory) {
  const std::vector<TraceBuffer> b =
      place_buffers({{"row_ptr", 1 << 12}, {"col", 1 << 12}, {"val", 1 << 12}, {"x", 1 << 12}, {"y", 1 << 12}});
  LaunchArgs args;
  args.block = {32, 1, 1};
  args.params = {b[0].base_address, b[1].base_address, b[2].base_address, b[3].base_address, b[4].base_address, 32};
  const std::string error = extraction_error("csr_spmv", args);
  EXPECT_TRUE(starts_with(error, "spmv.cu:7: branch depends on a value loaded from memory (ld.global.u32 ")) << error;
  EXPECT_TRUE(ends_with(error, "data-dependent control flow is not supported" + std::string(kContentsHint))) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

// Line 13: out[i] = in[index[i]].
TEST(ExtractReject, GatherAddressFromMemory) {
  const std::vector<TraceBuffer> b = place_buffers({{"in", 1 << 12}, {"index", 1 << 12}, {"out", 1 << 12}});
  LaunchArgs args;
  args.block = {32, 1, 1};
  args.params = {b[0].base_address, b[1].base_address, b[2].base_address, 32};
  const std::string error = extraction_error("gather", args);
  EXPECT_TRUE(starts_with(error, "spmv.cu:13: address depends on a value loaded from memory (ld.global.u32 ")) << error;
  EXPECT_TRUE(ends_with(error, "data-dependent accesses are not supported" + std::string(kContentsHint))) << error;
}

// With the buffers known, the hint names the one the index came from: line 13's index[i].
TEST(ExtractReject, GatherHintNamesTheIndexBuffer) {
  const std::vector<TraceBuffer> b = place_buffers({{"in", 1 << 12}, {"index", 1 << 12}, {"out", 1 << 12}});
  LaunchArgs args;
  args.block = {32, 1, 1};
  args.params = {b[0].base_address, b[1].base_address, b[2].base_address, 32};
  args.buffers = b;
  const std::string error = extraction_error("gather", args);
  EXPECT_TRUE(starts_with(error, "spmv.cu:13: address depends on a value loaded from memory (ld.global.u32 ")) << error;
  EXPECT_TRUE(ends_with(error,
                        "data-dependent accesses are not supported unless what buffer 'index' holds is declared "
                        "(\"contents\", --contents index=EXPR)"))
      << error;
}

// The gather without index loads in range is fine until n exceeds the out buffer: 64 threads, 32 floats.
TEST(ExtractReject, AccessOutsideEveryBuffer) {
  const std::vector<TraceBuffer> b = place_buffers({{"in", 1 << 12}, {"out", 32 * 4}});
  LaunchArgs args;
  args.block = {64, 1, 1};
  args.params = {b[0].base_address, b[1].base_address, 64};
  args.buffers = b;
  static const PtxModule module = load_test_ptx("vectors");
  try {
    (void)Extractor(module, entry_containing(module, "copy_float2"), args).trace_block({0, 0, 0});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    // copy_float2 reads in[i] (in range: 64 x 8 B < 4 KiB), then writes out[i]: warp 0's first lane past 128 B.
    EXPECT_TRUE(starts_with(e.what(), "vectors.cu:")) << e.what();
    EXPECT_NE(std::string(e.what()).find("outside every buffer"), std::string::npos) << e.what();
  }
}

// copy_float2 (vectors.cu:13, out[i] = in[i]) with in 32 float2s (256 B) and 64 threads: warp 1's
// load reads bytes 256 .. 511 of in, every lane past its end. Refused, with the opt-in named; with
// LaunchArgs::simulate_out_of_bounds_reads traced at its addresses, one warp load counted.
TEST(ExtractReject, LoadOutsideEveryBufferSimulatedOnRequest) {
  const std::vector<TraceBuffer> b = place_buffers({{"in", 32 * 8}, {"out", 1 << 12}});
  LaunchArgs args;
  args.block = {64, 1, 1};
  args.params = {b[0].base_address, b[1].base_address, 64};
  args.buffers = b;
  static const PtxModule module = load_test_ptx("vectors");
  const std::string entry = entry_containing(module, "copy_float2");
  try {
    (void)Extractor(module, entry, args).trace_block({0, 0, 0});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_TRUE(starts_with(e.what(),
                            "vectors.cu:13: global access outside every buffer: 8 bytes at byte offset 256 "
                            "of buffer 'in' (256 bytes) (ld.global"))
        << e.what();
    EXPECT_TRUE(ends_with(e.what(),
                          "); to simulate such loads at their addresses instead: \"out_of_bounds_reads\": "
                          "\"simulate\" (--out-of-bounds-reads simulate)"))
        << e.what();
  }
  args.simulate_out_of_bounds_reads = true;
  const Extractor extractor(module, entry, args);
  const BlockTrace block = extractor.trace_block({0, 0, 0});
  (void)extractor.trace_block({0, 0, 0}); // a block traced again counts once
  const std::vector<TraceStep> loads = accesses(block.warps[1], TraceSpace::global, TraceOp::load);
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_EQ(loads[0].address[0], b[0].base_address + 256);
  EXPECT_EQ(loads[0].address[31], b[0].base_address + 256 + 31 * 8);
  const OutOfBoundsLoads outside = extractor.facts().out_of_bounds_loads;
  EXPECT_EQ(outside.warp_loads, 1);
  EXPECT_TRUE(
      starts_with(outside.first, "vectors.cu:13: 8 bytes at byte offset 256 of buffer 'in' (256 bytes) (ld.global"))
      << outside.first;
  EXPECT_TRUE(ends_with(outside.first, ")")) << outside.first;
}

// The opt-in lets loads through, never stores: out 32 float2s, warp 1's store past its end.
TEST(ExtractReject, StoreOutsideEveryBufferRefusedEvenOnRequest) {
  const std::vector<TraceBuffer> b = place_buffers({{"in", 1 << 12}, {"out", 32 * 8}});
  LaunchArgs args;
  args.block = {64, 1, 1};
  args.params = {b[0].base_address, b[1].base_address, 64};
  args.buffers = b;
  args.simulate_out_of_bounds_reads = true;
  static const PtxModule module = load_test_ptx("vectors");
  try {
    (void)Extractor(module, entry_containing(module, "copy_float2"), args).trace_block({0, 0, 0});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_TRUE(starts_with(e.what(),
                            "vectors.cu:13: global access outside every buffer: 8 bytes at byte offset 256 "
                            "of buffer 'out' (256 bytes) (st.global"))
        << e.what();
    EXPECT_TRUE(ends_with(e.what(), ")")) << e.what();
  }
}

// Line 20: out[i] = twice(in[i]) with twice __noinline__.
TEST(ExtractReject, CallThatWasNotInlined) {
  LaunchArgs args;
  args.block = {32, 1, 1};
  args.params = {std::uint64_t{1} << 30, std::uint64_t{1} << 31};
  static const PtxModule module = load_test_ptx("spmv");
  try {
    (void)Extractor(module, entry_containing(module, "not_inlined"), args);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_TRUE(starts_with(e.what(), "spmv.cu:20: calls to functions that were not inlined are not supported"))
        << e.what();
  }
}

// Line 25: if (i < n && in[i] > 0.5f) out[i] = 1.0f: whether a lane stores depends on loaded data.
TEST(ExtractReject, StoreDecidedByLoadedData) {
  const std::vector<TraceBuffer> b = place_buffers({{"in", 1 << 12}, {"out", 1 << 12}});
  LaunchArgs args;
  args.block = {32, 1, 1};
  args.params = {b[0].base_address, b[1].base_address, 32};
  const std::string error = extraction_error("threshold", args);
  EXPECT_TRUE(starts_with(error, "spmv.cu:25: ")) << error;
  EXPECT_NE(error.find(" depends on a value loaded from memory (ld.global.f32 "), std::string::npos) << error;
}

} // namespace
} // namespace cachewise::frontend::testing
