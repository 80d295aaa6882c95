// The PTX parser on hand-written PTX: structure, registers, labels, line info, and one-line
// errors for what it cannot parse.
#include <gtest/gtest.h>

#include "cachewise/frontend/extract.hpp"
#include "cachewise/frontend/ptx.hpp"
#include "cachewise/model.hpp"

namespace cachewise::frontend {
namespace {

const char* const kSmallModule = R"(
.version 9.0
.target sm_90
.address_size 64
.extern .shared .align 16 .b8 dyn[];

.visible .entry copy_kernel(
	.param .u64 copy_kernel_param_0,
	.param .u32 copy_kernel_param_1
)
.maxntid 128, 1, 1
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<4>;
	.shared .align 4 .b8 tile[512];
	.loc	1 7 3
	ld.param.u64 	%rd1, [copy_kernel_param_0];
	ld.param.u32 	%r1, [copy_kernel_param_1];
	mov.u32 	%r2, %tid.x;
	setp.ge.u32 	%p1, %r2, %r1;
	@%p1 bra 	$L__BB0_2;
	.loc	1 8 5
	mul.wide.u32 	%rd2, %r2, 4;
	add.s64 	%rd3, %rd1, %rd2;
	ld.global.v2.f32 	{%f1, %f2}, [%rd3+-8];
$L__BB0_2:
	ret;
}
	.file	1 "/home/user/copy.cu"
)";

TEST(PtxParse, FunctionsParamsRegistersLabels) {
  std::string text = kSmallModule;
  text.replace(text.find(".reg .b64"), 0, ".reg .f32 \t%f<3>;\n\t");
  const PtxModule module = parse_ptx(text);
  EXPECT_EQ(module.target, "sm_90");
  ASSERT_EQ(entry_names(module), std::vector<std::string>{"copy_kernel"});
  const PtxFunction& f = module.functions[0];
  ASSERT_EQ(f.params.size(), 2u);
  EXPECT_EQ(f.params[0].bytes, 8);
  EXPECT_EQ(f.params[1].bytes, 4);
  EXPECT_EQ(f.registers.size(), 2u + 4u + 3u + 4u); // %p0-1, %r0-3, %f0-2, %rd0-3
  ASSERT_EQ(f.instructions.size(), 9u);
  EXPECT_EQ(f.labels.at("$L__BB0_2"), 8);
  ASSERT_EQ(module.variables.size(), 1u);
  EXPECT_TRUE(module.variables[0].is_extern);
  ASSERT_EQ(f.variables.size(), 1u);
  EXPECT_EQ(f.variables[0].bytes, 512);
  const PtxInstruction& load = f.instructions[7];
  EXPECT_EQ(load.opcode, (std::vector<std::string>{"ld", "global", "v2", "f32"}));
  ASSERT_EQ(load.operands.size(), 2u);
  EXPECT_EQ(load.operands[0].kind, PtxOperand::Kind::vector);
  EXPECT_EQ(load.operands[0].elements.size(), 2u);
  EXPECT_EQ(load.operands[1].kind, PtxOperand::Kind::address);
  EXPECT_EQ(load.operands[1].imm, -8);
  EXPECT_EQ(source_location(module, load), "copy.cu:8");
  EXPECT_EQ(source_location(module, f.instructions[0]), "copy.cu:7");
  EXPECT_EQ(f.instructions[4].guard_reg, 1); // %p1
}

TEST(PtxParse, UndeclaredRegisterNamesLine) {
  // %f1 is used without a .reg .f32 declaration: line 26 of the text (the first is empty).
  try {
    (void)parse_ptx(kSmallModule);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    // Named with its function and the source line of the latest .loc (1 8: copy.cu:8).
    EXPECT_EQ(std::string(e.what()), "copy_kernel (copy.cu:8): ptx:26: undeclared register '%f1'");
  }
}

// A second entry whose body the parser cannot read (%bogus is no register): parsing only the
// entry asked for succeeds, and the extractor refuses the entry whose body was skipped.
TEST(PtxParse, OnlyTheSelectedBodiesAreParsed) {
  std::string text = kSmallModule;
  text.replace(text.find(".reg .b64"), 0, ".reg .f32 \t%f<3>;\n\t");
  text.replace(text.find("\t.file"), 0,
               ".visible .entry other(\n\t.param .u64 other_param_0\n)\n{\n\t.reg .b32 %r<2>;\n"
               "\tmov.u32 %r1, %bogus;\n\tret;\n}\n");
  const PtxModule module = parse_ptx(text, [](std::string_view name) { return name == "copy_kernel"; });
  ASSERT_EQ(entry_names(module), (std::vector<std::string>{"copy_kernel", "other"}));
  EXPECT_TRUE(module.functions[0].body_parsed);
  EXPECT_EQ(module.functions[0].instructions.size(), 9u);
  EXPECT_FALSE(module.functions[1].body_parsed);
  EXPECT_EQ(module.functions[1].params.size(), 1u); // the header still is
  LaunchArgs args;
  args.block = {32, 1, 1};
  args.params = {std::uint64_t{1} << 30};
  EXPECT_THROW((void)Extractor(module, "other", args), InputError);
  try {
    (void)parse_ptx(text); // every body: the other entry's fails, named; it has no .loc
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("other: ptx:", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("undeclared register '%bogus'"), std::string::npos) << e.what();
  }
}

TEST(PtxParse, MalformedInputIsOneLineError) {
  EXPECT_THROW((void)parse_ptx(".visible .entry k() {\n add.s32 %r1, 1;\n"), InputError);
  EXPECT_THROW((void)parse_ptx(".visible .entry k() {\n .reg .b32 %r<2>;\n add.s32 %r1, %r0, 0x;\n}"), InputError);
  EXPECT_THROW((void)parse_ptx("ld.global.f32 %f1, [%rd1]"), InputError);
  EXPECT_NO_THROW((void)parse_ptx(""));
}

// A float literal is 0f and 8 hex digits or 0d and 16 (what inline asm may write otherwise):
// one line naming it, where std::stoull threw std::invalid_argument (exit 1).
TEST(PtxParse, MalformedFloatLiteralNamesIt) {
  const std::string header = ".visible .entry k() {\n .reg .f32 %f<2>;\n";
  for (const char* literal : {"0fZZ", "0f3F80000", "0f3F8000000", "0d3FF00000"}) {
    try {
      (void)parse_ptx(header + " mov.f32 %f1, " + literal + ";\n}");
      ADD_FAILURE() << literal << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("k: ptx:3: malformed floating-point literal '") + literal +
                                           "' (0f and 8 hex digits, or 0d and 16)");
    }
  }
  const PtxModule module = parse_ptx(header + " mov.f32 %f1, 0f3F800000;\n}");
  EXPECT_EQ(module.functions.at(0).instructions.at(0).operands.at(1).imm, 0x3F800000);
}

TEST(PtxParse, UnsupportedInstructionNamesSourceLine) {
  std::string text = kSmallModule;
  text.replace(text.find(".reg .b64"), 0, ".reg .f32 \t%f<3>;\n\t");
  text.replace(text.find("\tadd.s64"), 0, "\ttex.1d.v4.f32.s32 {%f1, %f2, %f1, %f2}, [%rd1, {%r2}];\n");
  const PtxModule module = parse_ptx(text);
  LaunchArgs args;
  args.block = {128, 1, 1};
  args.params = {std::uint64_t{1} << 30, 100};
  try {
    (void)Extractor(module, "copy_kernel", args);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("copy.cu:8: unsupported instruction 'tex' (tex.1d.v4.f32.s32 ", 0), 0u)
        << e.what();
  }
}

TEST(PtxParse, ExtractorRejectsWrongParameterCountAndUnknownEntry) {
  std::string text = kSmallModule;
  text.replace(text.find(".reg .b64"), 0, ".reg .f32 \t%f<3>;\n\t");
  const PtxModule module = parse_ptx(text);
  LaunchArgs args;
  args.params = {1};
  EXPECT_THROW((void)Extractor(module, "copy_kernel", args), InputError);
  args.params = {1, 2};
  EXPECT_THROW((void)Extractor(module, "nope", args), InputError);
}

// The fuzzers' findings (docs/fuzzing.md), both in mutated seeds' float operands, through
// parse_ptx: fuzz_extract's 0f and a byte that is no hex digit (std::stoull threw
// std::invalid_argument), fuzz_ptx's 0d and 18 hex digits run into an opcode (std::out_of_range).
TEST(PtxParse, FuzzFoundFloatLiterals) {
  for (const std::string literal : {std::string("0f\xd1"
                                                "0000000"),
                                    std::string("0d3FF0000000000000bal.u64")}) {
    EXPECT_THROW((void)parse_ptx(".visible .entry k() {\n .reg .f64 %fd<2>;\n mov.f64 %fd1, " + literal + ";\n}"),
                 InputError)
        << literal;
  }
}

} // namespace
} // namespace cachewise::frontend
