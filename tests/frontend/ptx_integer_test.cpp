// Integer operations of the extractor on hand-written PTX: each result, per lane t = %tid.x,
// picks the word a store writes (row r of 65536 words holds result r), so the stored addresses
// show the values. Expected values by hand from the PTX ISA's definitions.
#include <gtest/gtest.h>

#include "cachewise/frontend/extract.hpp"
#include "cachewise/frontend/ptx.hpp"

namespace cachewise::frontend {
namespace {

const char* const kOps = R"(
.version 9.0
.target sm_90
.address_size 64
.visible .entry ops(.param .u64 ops_param_0)
{
	.reg .b32 %r<20>;
	.reg .b64 %rd<30>;
	ld.param.u64 %rd1, [ops_param_0];
	mov.u32 %r1, %tid.x;
	bfe.u32 %r2, %r1, 1, 3;
	bfi.b32 %r3, %r1, 0, 4, 4;
	lop3.b32 %r4, %r1, 12, 5, 0x96;
	popc.b32 %r5, %r1;
	clz.b32 %r6, %r1;
	brev.b32 %r7, %r1;
	shr.u32 %r7, %r7, 27;
	mov.u32 %r9, 0x55;
	prmt.b32 %r8, %r1, %r9, 0x3340;
	mul24.lo.s32 %r10, %r1, 0xFFFFFF;
	add.s32 %r10, %r10, 100;
	sad.u32 %r11, %r1, 16, 3;
	mul.wide.u32 %rd2, %r2, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r1;
	mul.wide.u32 %rd4, %r3, 4;
	add.s64 %rd5, %rd1, %rd4;
	st.global.u32 [%rd5+262144], %r1;
	mul.wide.u32 %rd6, %r4, 4;
	add.s64 %rd7, %rd1, %rd6;
	st.global.u32 [%rd7+524288], %r1;
	mul.wide.u32 %rd8, %r5, 4;
	add.s64 %rd9, %rd1, %rd8;
	st.global.u32 [%rd9+786432], %r1;
	mul.wide.u32 %rd10, %r6, 4;
	add.s64 %rd11, %rd1, %rd10;
	st.global.u32 [%rd11+1048576], %r1;
	mul.wide.u32 %rd12, %r7, 4;
	add.s64 %rd13, %rd1, %rd12;
	st.global.u32 [%rd13+1310720], %r1;
	mul.wide.u32 %rd14, %r8, 4;
	add.s64 %rd15, %rd1, %rd14;
	st.global.u32 [%rd15+1572864], %r1;
	mul.wide.s32 %rd16, %r10, 4;
	add.s64 %rd17, %rd1, %rd16;
	st.global.u32 [%rd17+1835008], %r1;
	mul.wide.u32 %rd18, %r11, 4;
	add.s64 %rd19, %rd1, %rd18;
	st.global.u32 [%rd19+2097152], %r1;
	ret;
}
)";

int reverse5(int t) {
  int r = 0;
  for (int i = 0; i < 5; ++i) r |= ((t >> i) & 1) << (4 - i);
  return r;
}

TEST(PtxIntegerOps, ResultsPerLane) {
  const PtxModule module = parse_ptx(kOps);
  const std::uint64_t base = std::uint64_t{1} << 30;
  LaunchArgs args;
  args.block = {32, 1, 1};
  args.params = {base};
  args.buffers = {{"out", base, 9 * 262144}};
  const BlockTrace block = Extractor(module, "ops", args).trace_block({0, 0, 0});
  std::vector<const TraceStep*> stores;
  for (const TraceStep& step : block.warps[0].steps)
    if (step.kind == TraceStep::Kind::access) stores.push_back(&step);
  ASSERT_EQ(stores.size(), 9u);
  // 13 integer instructions, 9 x (mul.wide, add, st) and ret; ld.param is no instruction of its own.
  EXPECT_EQ(block.warps[0].warp_instructions, 13 + 27 + 1);
  EXPECT_EQ(block.warps[0].flops, 0.0);
  for (int t = 0; t < 32; ++t) {
    const std::vector<std::int64_t> expected = {
        (t >> 1) & 7,  // bfe: 3 bits from bit 1
        (t & 15) << 4, // bfi: t's low 4 bits into 0 at bit 4
        t ^ 12 ^ 5,    // lop3 0x96: a ^ b ^ c
        __builtin_popcount(static_cast<unsigned>(t)),
        t == 0 ? 32 : __builtin_clz(static_cast<unsigned>(t)),
        reverse5(t),                    // brev of 32 bits, top 5 bits = t's low 5 reversed
        0x5500 + t,                     // prmt 0x3340: bytes {a0, b0, a3, a3} = {t, 0x55, 0, 0}
        100 - t,                        // mul24.lo.s32 by 0xFFFFFF (-1 in 24 bits), + 100
        (t > 16 ? t - 16 : 16 - t) + 3, // sad: |t - 16| + 3
    };
    for (std::size_t row = 0; row < expected.size(); ++row)
      EXPECT_EQ(stores[row]->address[t], base + row * 262144 + static_cast<std::uint64_t>(expected[row] * 4))
          << "row " << row << " lane " << t;
  }
}

} // namespace
} // namespace cachewise::frontend
