// Declared index-array contents (kernels/spmv.cu): a gather and a CSR SpMV whose indices and
// loop bounds come from buffers the launch declares, so their addresses are known and ranked.
// Expectations derived by hand from the declared expressions; 32-byte sectors.
#include "cachewise/frontend/contents.hpp"
#include "cachewise/model.hpp"
#include "extract_test_support.hpp"

namespace cachewise::frontend::testing {
namespace {

const PtxModule& spmv_module() {
  static const PtxModule module = load_test_ptx("spmv");
  return module;
}

/// `buffer`'s contents from `value` (an expression over i and `bindings`), as the kernel advisor declares them.
KnownContents declare(const TraceBuffer& buffer, const std::string& value, const Bindings& bindings,
                      ElementType type = {4, true}) {
  const DeclaredContents contents(buffer.name, Expression::parse(value, "contents of '" + buffer.name + "'"), type,
                                  bindings);
  return {buffer.name, buffer.base_address, buffer.bytes, type.bytes,
          [contents](std::int64_t i) { return contents.element(i); }};
}

BlockTrace trace(const std::string& entry, const LaunchArgs& args, std::int64_t block) {
  return Extractor(spmv_module(), entry_containing(spmv_module(), entry), args).trace_block({block, 0, 0});
}

std::string error_of(const std::string& entry, const LaunchArgs& args, std::int64_t block) {
  try {
    (void)trace(entry, args, block);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

/// The warp's global loads whose first active lane reads `buffer`.
std::vector<TraceStep> loads_of(const WarpTrace& warp, const TraceBuffer& buffer) {
  std::vector<TraceStep> out;
  for (const TraceStep& step : accesses(warp, TraceSpace::global, TraceOp::load)) {
    const std::uint64_t first = step.address[static_cast<std::size_t>(std::countr_zero(step.active_mask))];
    if (first >= buffer.base_address && first < buffer.base_address + static_cast<std::uint64_t>(buffer.bytes))
      out.push_back(step);
  }
  return out;
}

/// gather(in, index, out, n): out[i] = in[index[i]], one thread per element, blocks of 32.
LaunchArgs gather_launch(const std::vector<TraceBuffer>& b, std::int64_t n) {
  LaunchArgs args;
  args.grid = {n / 32, 1, 1};
  args.block = {32, 1, 1};
  args.params = {b[0].base_address, b[1].base_address, b[2].base_address, static_cast<std::uint64_t>(n)};
  args.buffers = b;
  return args;
}

// index[i] = i: in[index[i]] is in[i], a plain copy: block 5's lanes read in[160 + lane], 128
// contiguous bytes from a multiple of 128 = 1 line, 4 sectors, like its index and out accesses.
TEST(ExtractContents, IdentityGatherIsACopy) {
  const std::int64_t n = 1024;
  const std::vector<TraceBuffer> b = place_buffers({{"in", n * 4}, {"index", n * 4}, {"out", n * 4}});
  LaunchArgs args = gather_launch(b, n);
  args.contents = {declare(b[1], "i", {{"n", n}})};
  const BlockTrace block = trace("gather", args, 5);
  const std::vector<TraceStep> in = loads_of(block.warps[0], b[0]);
  ASSERT_EQ(in.size(), 1u);
  for (int lane = 0; lane < 32; ++lane)
    EXPECT_EQ(in[0].address[lane], b[0].base_address + 4 * (160 + static_cast<std::uint64_t>(lane)));
  EXPECT_EQ(sectors(in[0]), 4);
  EXPECT_EQ(lines(in[0]), 1);
  ASSERT_EQ(loads_of(block.warps[0], b[1]).size(), 1u);
  EXPECT_EQ(sectors(loads_of(block.warps[0], b[1])[0]), 4);
  const std::vector<TraceStep> out = accesses(block.warps[0], TraceSpace::global, TraceOp::store);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(sectors(out[0]), 4);
}

// index[i] = (i * 32) % n with n = 1024: lane l of block 5 (i = 160 + l) reads
// in[(5120 + 32 l) % 1024] = in[32 l], 128 bytes apart: every lane its own line and sector.
TEST(ExtractContents, StridedGatherTouchesASectorPerLane) {
  const std::int64_t n = 1024;
  const std::vector<TraceBuffer> b = place_buffers({{"in", n * 4}, {"index", n * 4}, {"out", n * 4}});
  LaunchArgs args = gather_launch(b, n);
  args.contents = {declare(b[1], "(i * 32) % n", {{"n", n}})};
  const BlockTrace block = trace("gather", args, 5);
  const std::vector<TraceStep> in = loads_of(block.warps[0], b[0]);
  ASSERT_EQ(in.size(), 1u);
  for (int lane = 0; lane < 32; ++lane)
    EXPECT_EQ(in[0].address[lane], b[0].base_address + 128 * static_cast<std::uint64_t>(lane));
  EXPECT_EQ(sectors(in[0]), 32);
  EXPECT_EQ(lines(in[0]), 32);
}

/// csr_spmv(row_ptr, col, val, x, y, rows) over `rows` rows, blocks of 32 rows.
struct Csr {
  std::int64_t rows = 64;
  std::int64_t nnz = 0;
  std::vector<TraceBuffer> b;
  LaunchArgs args;
  Csr(std::int64_t max_row_entries, const std::string& row_ptr, const std::string& col) {
    nnz = rows * max_row_entries;
    b = place_buffers(
        {{"row_ptr", (rows + 1) * 4}, {"col", nnz * 4}, {"val", nnz * 4}, {"x", rows * 4}, {"y", rows * 4}});
    args.grid = {rows / 32, 1, 1};
    args.block = {32, 1, 1};
    args.params = {b[0].base_address, b[1].base_address, b[2].base_address,
                   b[3].base_address, b[4].base_address, static_cast<std::uint64_t>(rows)};
    args.buffers = b;
    const Bindings bindings{{"rows", rows}};
    args.contents = {declare(b[0], row_ptr, bindings), declare(b[1], col, bindings)};
  }
};

/// How many of `steps` lane `lane` is active in.
int active_in(const std::vector<TraceStep>& steps, int lane) {
  return static_cast<int>(
      std::count_if(steps.begin(), steps.end(), [&](const TraceStep& s) { return (s.active_mask >> lane) & 1; }));
}

// row_ptr[r] = 4 r: every row has 4 entries, k = 4 r + t (t = 0..3). col[k] = k / 4 = r: row r
// reads x[r] four times, block 1's lanes x[32 + lane]: 4 sectors per request. col[k] = k % rows
// reads x[(4 r + t) % 64] = x[4 (lane % 16) + t]: 16 words 16 B apart, 256 bytes: 8 sectors.
TEST(ExtractContents, CsrSpmvFixedRowLength) {
  for (const auto& [col, x_sectors] : {std::pair<std::string, int>{"i / 4", 4}, {"i % rows", 8}}) {
    const Csr csr(4, "i * 4", col);
    const BlockTrace block = trace("csr_spmv", csr.args, 1);
    const WarpTrace& warp = block.warps[0];
    const std::vector<TraceStep> cols = loads_of(warp, csr.b[1]), xs = loads_of(warp, csr.b[3]),
                                 vals = loads_of(warp, csr.b[2]);
    ASSERT_EQ(cols.size(), 4u) << col;
    ASSERT_EQ(xs.size(), 4u) << col;
    ASSERT_EQ(vals.size(), 4u) << col;
    std::set<std::uint64_t> col_addresses;
    for (int t = 0; t < 4; ++t) {
      EXPECT_EQ(cols[t].active_mask, ~0u);
      EXPECT_EQ(sectors(cols[t]), 16) << "col[4 r + t]: 16 B apart";
      EXPECT_EQ(sectors(vals[t]), 16);
      EXPECT_EQ(sectors(xs[t]), x_sectors) << col;
      col_addresses.insert(cols[t].address[0]);
    }
    // Lane 0 is row 32: col[128 .. 131].
    EXPECT_EQ(col_addresses, (std::set<std::uint64_t>{csr.b[1].base_address + 512, csr.b[1].base_address + 516,
                                                      csr.b[1].base_address + 520, csr.b[1].base_address + 524}));
    if (col == "i / 4") {
      for (const TraceStep& x : xs)
        for (int lane = 0; lane < 32; ++lane)
          EXPECT_EQ(x.address[lane], csr.b[3].base_address + 4 * (32 + static_cast<std::uint64_t>(lane)));
    }
    EXPECT_EQ(accesses(warp, TraceSpace::global, TraceOp::store).size(), 1u);
  }
}

// row_ptr[r] = r (r + 1) / 2: row r has r + 1 entries, so in block 0 lane l runs l + 1
// iterations (the warp 32, lanes dropping out one by one) and reads col[l (l + 1) / 2 + t].
TEST(ExtractContents, CsrSpmvTriangularTripCounts) {
  const Csr csr(33, "i * (i + 1) / 2", "i % rows");
  const BlockTrace block = trace("csr_spmv", csr.args, 0);
  const WarpTrace& warp = block.warps[0];
  const std::vector<TraceStep> cols = loads_of(warp, csr.b[1]);
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(active_in(cols, lane), lane + 1) << "lane " << lane;
    std::set<std::uint64_t> read, expected;
    for (const TraceStep& step : cols)
      if ((step.active_mask >> lane) & 1) read.insert(step.address[lane]);
    for (int t = 0; t <= lane; ++t)
      expected.insert(csr.b[1].base_address + 4 * static_cast<std::uint64_t>(lane * (lane + 1) / 2 + t));
    EXPECT_EQ(read, expected) << "lane " << lane;
  }
  EXPECT_EQ(active_in(loads_of(warp, csr.b[3]), 31), 32);
}

TEST(ExtractContents, FloatLoadOfADeclaredBuffer) {
  const std::vector<TraceBuffer> b = place_buffers({{"in", 1024 * 4}, {"index", 1024 * 4}, {"out", 1024 * 4}});
  LaunchArgs args = gather_launch(b, 1024);
  args.contents = {declare(b[1], "i", {}), declare(b[0], "i", {})};
  const std::string error = error_of("gather", args, 0);
  EXPECT_EQ(
      error.rfind("spmv.cu:13: buffer 'in' has declared integer contents but is read as floating point (ld.global.f32 ",
                  0),
      0u)
      << error;
}

TEST(ExtractContents, StoreToADeclaredBuffer) {
  const std::vector<TraceBuffer> b = place_buffers({{"in", 1024 * 4}, {"index", 1024 * 4}, {"out", 1024 * 4}});
  LaunchArgs args = gather_launch(b, 1024);
  args.contents = {declare(b[1], "i", {}), declare(b[2], "0", {})};
  EXPECT_EQ(error_of("gather", args, 0)
                .rfind("spmv.cu:13: a store to buffer 'out', whose contents are declared, is not supported", 0),
            0u);
}

// Block 1 reads index[32 .. 63]: i = 40 divides by zero, i * 2^62 overflows at i = 32, and
// 10^8 i leaves i32 at i = 32 (3.2e9 > 2^31 - 1).
TEST(ExtractContents, InvalidValuesNameBufferAndElement) {
  const std::vector<TraceBuffer> b = place_buffers({{"in", 1024 * 4}, {"index", 1024 * 4}, {"out", 1024 * 4}});
  LaunchArgs args = gather_launch(b, 1024);
  const std::pair<std::string, std::string> cases[] = {
      {"n / (i - 40)", "spmv.cu:13: contents of 'index': division by zero in 'n / (i - 40)' at element i = 40"},
      {"i * 4611686018427387904",
       "spmv.cu:13: contents of 'index': integer overflow in 'i * 4611686018427387904' at element i = 32"},
      {"i * 100000000", "spmv.cu:13: contents of 'index': element i = 32 is 3200000000, outside i32"}};
  for (const auto& [value, message] : cases) {
    args.contents = {declare(b[1], value, {{"n", 1024}})};
    EXPECT_EQ(error_of("gather", args, 1), message);
  }
}

// A declared i64 buffer read by the kernel's 4-byte loads: the widths disagree.
TEST(ExtractContents, LoadWidthMustMatchTheDeclaredElements) {
  const std::vector<TraceBuffer> b = place_buffers({{"in", 1024 * 4}, {"index", 1024 * 8}, {"out", 1024 * 4}});
  LaunchArgs args = gather_launch(b, 1024);
  args.contents = {declare(b[1], "i", {}, {8, true})};
  EXPECT_EQ(
      error_of("gather", args, 0)
          .rfind("spmv.cu:13: a 4-byte load of buffer 'index', whose declared elements are 8 bytes (ld.global.u32 ", 0),
      0u);
}

// cp.async (async_copy.cu) copies a declared buffer into shared memory: nothing is loaded into
// registers, so no element width applies; the copy is traced as without the declaration
// (block 3, warp 0: in[384 + lane] as 16-byte lanes, 16 sectors).
TEST(ExtractContents, AsyncCopyOfADeclaredBufferIsTraced) {
  const PtxModule module = load_test_ptx("async_copy");
  const std::vector<TraceBuffer> b = place_buffers({{"in", 8 * 128 * 16}, {"out", 8 * 128 * 16}});
  LaunchArgs args;
  args.grid = {8, 1, 1};
  args.block = {128, 1, 1};
  args.params = {b[0].base_address, b[1].base_address};
  args.buffers = b;
  args.contents = {declare(b[0], "i", {})};
  const BlockTrace block = Extractor(module, entry_containing(module, "stage"), args).trace_block({3, 0, 0});
  const std::vector<TraceStep> loads = accesses(block.warps[0], TraceSpace::global, TraceOp::load);
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_EQ(loads[0].address[5], b[0].base_address + (384 + 5) * 16);
  EXPECT_EQ(sectors(loads[0]), 16);
}

} // namespace
} // namespace cachewise::frontend::testing
