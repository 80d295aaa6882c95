#include "cachewise/frontend/spec_expressions.hpp"

#include <gtest/gtest.h>

#include "frontend_test_support.hpp"

#include "cachewise/frontend/kernel_advisor.hpp"
#include "cachewise/frontend/kernel_source.hpp"

namespace cachewise::frontend {
namespace {

using test_support::error_of;

KernelSpec transpose_spec() {
  KernelSpec spec;
  spec.source = "transpose.cu";
  spec.entry = "transpose_tiled";
  spec.parameters = {{"TILE_DIM", {16, 32, 64}}, {"BLOCK_ROWS", {4, 8, 16}}, {"PAD", {0, 1}}};
  spec.constraints = {"TILE_DIM % BLOCK_ROWS == 0", "BLOCK_ROWS < TILE_DIM"};
  spec.grid = "width / TILE_DIM, height / TILE_DIM";
  spec.block = "TILE_DIM, BLOCK_ROWS";
  spec.buffers = {{"odata", "width * height * 4"}, {"idata", "width * height * 4"}};
  spec.args = {{"width", 4096}, {"height", 2048}};
  return spec;
}

TEST(SpecExpressions, ConstraintsPruneTheSpace) {
  const SpecExpressions expressions(transpose_spec());
  const SearchSpace space = expressions.search_space();
  EXPECT_EQ(space.unconstrained_size(), 18U);
  // BLOCK_ROWS < TILE_DIM drops only (16, 16); every tile is a multiple of 4, 8 and 16: 8 pairs x 2 pads.
  EXPECT_EQ(space.enumerate().size(), 16U);
}

// The tuner keeps only the space (KernelCandidates' SpecExpressions are gone when it enumerates):
// the constraints must not reach back into them (ASan reports a use after scope otherwise).
TEST(SpecExpressions, SpaceOutlivesTheExpressions) {
  KernelSpec spec = transpose_spec();
  spec.constraints = {"TILE_DIM * BLOCK_ROWS <= width / 16"}; // 256: (16, 4|8|16), (32, 4|8), (64, 4)
  const SearchSpace space = SpecExpressions(spec).search_space();
  EXPECT_EQ(space.enumerate().size(), 12U); // 6 pairs x 2 pads
}

TEST(SpecExpressions, EvaluatesTheLaunchPerCandidate) {
  const SpecExpressions expressions(transpose_spec());
  const EvaluatedSpec evaluated = expressions.evaluate(Config{{"TILE_DIM", 32}, {"BLOCK_ROWS", 8}, {"PAD", 1}});
  EXPECT_EQ(evaluated.grid, (Dim3{128, 64, 1})); // 4096 / 32, 2048 / 32
  EXPECT_EQ(evaluated.block, (Dim3{32, 8, 1}));
  EXPECT_EQ(evaluated.buffer_bytes, (std::vector<std::int64_t>{33554432, 33554432})); // 4096 * 2048 * 4
  EXPECT_EQ(evaluated.useful_bytes, 67108864);
  EXPECT_EQ(evaluated.dynamic_shared_bytes, 0);
  EXPECT_TRUE(evaluated.template_arguments.empty());
  EXPECT_TRUE(expressions.evaluation_uses("BLOCK_ROWS"));
  EXPECT_FALSE(expressions.evaluation_uses("PAD"));
}

TEST(SpecExpressions, TemplateArgumentsAndSharedBytes) {
  KernelSpec spec = transpose_spec();
  spec.entry = "transpose_tiled<TILE_DIM, PAD + 1>";
  spec.dynamic_shared_bytes = "TILE_DIM * (TILE_DIM + PAD) * 4";
  const SpecExpressions expressions(spec);
  const EvaluatedSpec evaluated = expressions.evaluate(Config{{"TILE_DIM", 16}, {"BLOCK_ROWS", 4}, {"PAD", 1}});
  EXPECT_EQ(evaluated.template_arguments, (std::vector<std::string>{"16", "2"}));
  EXPECT_EQ(evaluated.dynamic_shared_bytes, 16 * 17 * 4);
  EXPECT_TRUE(expressions.templated());
}

TEST(SpecExpressions, BadExpressionsNameTheProblem) {
  KernelSpec spec = transpose_spec();
  spec.grid = "widht / TILE_DIM";
  EXPECT_EQ(error_of([&] { SpecExpressions{spec}; }),
            "--grid: unknown name 'widht' (known: BLOCK_ROWS, PAD, TILE_DIM, height, width)");
  spec = transpose_spec();
  spec.block = "TILE_DIM, BLOCK_ROWS / (PAD - PAD)";
  EXPECT_EQ(error_of([&] {
              SpecExpressions(spec).evaluate(Config{{"TILE_DIM", 16}, {"BLOCK_ROWS", 4}, {"PAD", 0}});
            }),
            "--block: division by zero in 'BLOCK_ROWS / (PAD - PAD)'");
  spec = transpose_spec();
  spec.buffers[1].bytes = "width * height * 4 - 2 * width * height * 4";
  EXPECT_EQ(error_of([&] {
              SpecExpressions(spec).evaluate(Config{{"TILE_DIM", 16}, {"BLOCK_ROWS", 4}, {"PAD", 0}});
            }),
            "--buffer idata: 'width * height * 4 - 2 * width * height * 4' is -33554432 bytes for "
            "BLOCK_ROWS=4,PAD=0,TILE_DIM=16; "
            "a buffer needs at least 1 byte");
  spec = transpose_spec();
  spec.grid = "width / TILE_DIM - 300";
  EXPECT_EQ(error_of([&] {
              SpecExpressions(spec).evaluate(Config{{"TILE_DIM", 16}, {"BLOCK_ROWS", 4}, {"PAD", 0}});
            }),
            "--grid: x = 'width / TILE_DIM - 300' is -44 for BLOCK_ROWS=4,PAD=0,TILE_DIM=16; launch dimensions must be "
            "at least 1");
  spec = transpose_spec();
  spec.constraints = {"width > 0"};
  EXPECT_EQ(error_of([&] { SpecExpressions(spec).search_space(); }), "--constraint: 'width > 0' names no parameter");
}

// Seven parameters of ten values: 10^7 candidates, counted (not enumerated) and refused.
TEST(SpecExpressions, SpaceOverTheCapIsRefusedBeforeItIsBuilt) {
  KernelSpec spec = transpose_spec();
  spec.constraints = {};
  const std::vector<std::int64_t> ten = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  spec.parameters = {{"TILE_DIM", ten}, {"BLOCK_ROWS", ten}, {"A", ten}, {"B", ten},
                     {"C", ten},        {"D", ten},          {"E", ten}};
  EXPECT_EQ(error_of([&] { SpecExpressions(spec).search_space(); }),
            "kernel spec: the parameters span 10000000 candidates, more than the cap of 10000 "
            "(give fewer values, or raise the cap with --max-candidates N)");
  // Raised to the ceiling, it is still counted and refused; past the ceiling the spec is invalid.
  spec.max_candidates = kLargestMaxCandidates;
  EXPECT_EQ(error_of([&] { SpecExpressions(spec).search_space(); }),
            "kernel spec: the parameters span 10000000 candidates, more than the cap of 100000 "
            "(give fewer values, or raise the cap with --max-candidates N)");
  spec.max_candidates = 10000000;
  EXPECT_EQ(error_of([&] { SpecExpressions{spec}; }), "kernel spec: max_candidates must be 1 to 100000, got 10000000");
  // The transpose space (18) at a cap of 18 and of 17.
  spec = transpose_spec();
  spec.max_candidates = 18;
  EXPECT_EQ(SpecExpressions(spec).search_space().enumerate().size(), 16U);
  spec.max_candidates = 17;
  EXPECT_EQ(error_of([&] { SpecExpressions(spec).search_space(); }),
            "kernel spec: the parameters span 18 candidates, more than the cap of 17 (give fewer values, or raise the "
            "cap with --max-candidates N)");
}

// "((n" has no closing parenthesis: an error, never an empty list taken as one block.
TEST(SpecExpressions, UnclosedDimensionIsAnError) {
  KernelSpec spec = transpose_spec();
  spec.grid = "((n";
  EXPECT_EQ(error_of([&] { SpecExpressions expressions(spec); }), "--grid: expected ')' at column 4 of '((n'");
  spec.grid = "width / TILE_DIM, (height";
  EXPECT_EQ(error_of([&] { SpecExpressions expressions(spec); }), "--grid: expected ')' at column 8 of '(height'");
}

KernelSpec csr_spec() {
  KernelSpec spec;
  spec.source = "spmv.cu";
  spec.entry = "csr_spmv";
  spec.parameters = {{"NNZ", {2, 8}}};
  spec.grid = "ceil_div(rows, 256)";
  spec.block = "256";
  spec.buffers = {{"row_ptr", "(rows + 1) * 4"}, {"col", "rows * 8 * 8"}};
  spec.contents = {{"row_ptr", "i * NNZ", "i32"}, {"col", "(i * 37) % rows - 3", "i64"}};
  spec.args = {{"rows", 100}};
  return spec;
}

// Per candidate: row_ptr[i] = i * NNZ, col[i] = (37 i) % 100 - 3 as little-endian i64.
TEST(SpecExpressions, DeclaredContentsPerCandidate) {
  const SpecExpressions expressions(csr_spec());
  EXPECT_TRUE(expressions.evaluation_uses("NNZ")); // only the contents name it: the PTX cannot differ, the accesses do
  const EvaluatedSpec evaluated = expressions.evaluate(Config{{"NNZ", 8}});
  ASSERT_EQ(evaluated.contents.size(), 2U);
  ASSERT_NE(evaluated.contents_of("row_ptr"), nullptr);
  EXPECT_EQ(evaluated.contents_of("x"), nullptr);
  EXPECT_EQ(evaluated.contents_of("row_ptr")->element(100), 800);
  EXPECT_EQ(evaluated.contents_of("col")->element(3), 111 % 100 - 3);
  const std::vector<std::byte> bytes = evaluated.contents_of("col")->bytes(20); // 2 elements and a 4-byte tail
  ASSERT_EQ(bytes.size(), 20U);
  EXPECT_EQ(bytes[0], std::byte{0xFD}); // -3
  for (int b = 1; b < 8; ++b) EXPECT_EQ(bytes[static_cast<std::size_t>(b)], std::byte{0xFF});
  EXPECT_EQ(bytes[8], std::byte{34}); // 37 - 3
  for (int b = 9; b < 20; ++b) EXPECT_EQ(bytes[static_cast<std::size_t>(b)], std::byte{0});
}

TEST(SpecExpressions, BadContentsNameTheProblem) {
  KernelSpec spec = csr_spec();
  spec.contents[1].value = "j % rows";
  EXPECT_EQ(error_of([&] { SpecExpressions{spec}; }), "contents of 'col': unknown name 'j' (known: NNZ, i, rows)");
  spec = csr_spec();
  spec.args.push_back({"i", 1});
  EXPECT_EQ(error_of([&] { SpecExpressions{spec}; }),
            "--contents: 'i' is the element index there; rename the parameter or arg 'i'");
  spec = csr_spec();
  spec.contents[0].type = "u32";
  spec.contents[0].value = "i - NNZ";
  const EvaluatedSpec evaluated = SpecExpressions(spec).evaluate(Config{{"NNZ", 2}});
  EXPECT_EQ(error_of([&] { (void)evaluated.contents_of("row_ptr")->bytes(16); }),
            "contents of 'row_ptr': element i = 0 is -2, outside u32");
}

TEST(KernelSource, ReadsParameterNames) {
  const char* source = R"(
    // __global__ void transpose_tiled(int decoy);
    template <int T> __device__ float helper(float* p) { return *p; }
    template <int TILE, int PAD>
    __global__ void __launch_bounds__(256) transpose_tiled(float* __restrict__ odata, const float* idata,
                                                          int width, /* rows */ int height, unsigned = 3) { }
    __global__ void no_args(void) {}
  )";
  const auto parameters = kernel_parameters(source, "transpose_tiled");
  ASSERT_TRUE(parameters.has_value());
  ASSERT_EQ(parameters->size(), 5U);
  EXPECT_EQ((*parameters)[0].name, "odata");
  EXPECT_TRUE((*parameters)[0].pointer);
  EXPECT_EQ((*parameters)[1].name, "idata");
  EXPECT_TRUE((*parameters)[1].pointer);
  EXPECT_EQ((*parameters)[3].name, "height");
  EXPECT_FALSE((*parameters)[3].pointer);
  EXPECT_EQ((*parameters)[4].name, ""); // unnamed
  EXPECT_TRUE(kernel_parameters(source, "no_args")->empty());
  EXPECT_FALSE(kernel_parameters(source, "helper").has_value()); // not __global__
  EXPECT_FALSE(kernel_parameters(source, "missing").has_value());
}

TEST(KernelParameters, BuffersFromOneGibWithGuardGapsAsLongAsThemselves) {
  // 64 MiB and its 64 MiB gap, then 1 byte (rounds up to 1 MiB) and its 1 MiB gap, then the third buffer.
  EXPECT_EQ(buffer_base_addresses({64 << 20, 1, 4}),
            (std::vector<std::uint64_t>{1ULL << 30, (1ULL << 30) + (128ULL << 20), (1ULL << 30) + (130ULL << 20)}));
}

/// The compiled parameters (PTX types and sizes) of a signature: "u64" 8, "u32" 4, "f32" 4 ...
std::vector<PtxParam> compiled(std::initializer_list<std::pair<const char*, std::int64_t>> types) {
  std::vector<PtxParam> params;
  for (const auto& [type, bytes] : types)
    params.push_back({"p" + std::to_string(params.size()), type, bytes, std::min<std::int64_t>(bytes, 8)});
  return params;
}

std::vector<std::uint8_t> little_endian(std::uint64_t value, int size) {
  std::vector<std::uint8_t> out;
  for (int b = 0; b < size; ++b) out.push_back(static_cast<std::uint8_t>(value >> (8 * b)));
  return out;
}

TEST(KernelParameters, ByNameOrInOrder) {
  const KernelSpec spec = transpose_spec();
  const EvaluatedSpec evaluated =
      SpecExpressions(spec).evaluate(Config{{"TILE_DIM", 32}, {"BLOCK_ROWS", 8}, {"PAD", 0}});
  const std::vector<std::uint64_t> bases = {1000, 2000}; // odata, idata
  const std::vector<SourceParameter> signature = {
      {"idata", true}, {"odata", true}, {"height", false}, {"TILE_DIM", false}};
  const auto four = compiled({{"u64", 8}, {"u64", 8}, {"u32", 4}, {"u32", 4}});
  EXPECT_EQ(kernel_parameter_values(four, signature, spec, evaluated, bases),
            (std::vector<std::vector<std::uint8_t>>{little_endian(2000, 8), little_endian(1000, 8),
                                                    little_endian(2048, 4), little_endian(32, 4)}));
  // Unknown signature: 8-byte parameters take the buffers in order, the rest the args in order.
  EXPECT_EQ(kernel_parameter_values(four, std::nullopt, spec, evaluated, bases),
            (std::vector<std::vector<std::uint8_t>>{little_endian(1000, 8), little_endian(2000, 8),
                                                    little_endian(4096, 4), little_endian(2048, 4)}));
  const std::vector<SourceParameter> extra_pointer = {
      {"odata", true}, {"idata", true}, {"scratch", true}, {"width", false}};
  EXPECT_EQ(error_of([&] {
              kernel_parameter_values(compiled({{"u64", 8}, {"u64", 8}, {"u64", 8}, {"u32", 4}}), extra_pointer, spec,
                                      evaluated, bases);
            }),
            "kernel parameter 'scratch' is a pointer with no buffer: give --buffer scratch=BYTES");
  const std::vector<SourceParameter> no_idata = {{"odata", true}, {"width", false}};
  EXPECT_EQ(error_of([&] {
              kernel_parameter_values(compiled({{"u64", 8}, {"u32", 4}}), no_idata, spec, evaluated, bases);
            }),
            "--buffer idata: the entry has no pointer parameter 'idata' (parameters: odata, width)");
}

// A template entry over a type parameter, an expression, a bool and a fixed type: the type
// parameter's value is its type (T index 1: double), 2 * R with R = 4 is 8, the rest as written.
TEST(SpecExpressions, TypeAndBoolTemplateArguments) {
  KernelSpec spec = transpose_spec();
  spec.entry = "tiled<T, 2 * R, true, unsigned int>";
  spec.parameters = {{"T", {0, 1}, {"float", "double"}}, {"R", {4}}};
  spec.constraints.clear();
  spec.grid = "R";
  spec.block = "32";
  const SpecExpressions expressions(spec);
  Config config;
  config.set("T", 1);
  config.set("R", 4);
  const EvaluatedSpec evaluated = expressions.evaluate(config);
  EXPECT_EQ(evaluated.template_arguments, (std::vector<std::string>{"double", "8", "true", "unsigned int"}));
  EXPECT_EQ(evaluated.config.to_string(), "R=4,T=double");
  // A type has no integer value: an expression may not name it.
  spec.grid = "T";
  EXPECT_EQ(error_of([&] { (void)SpecExpressions(spec); }), "--grid: unknown name 'T' (known: R, height, width)");
  // An expression with an unknown name is still an error, not a type.
  spec.grid = "R";
  spec.entry = "tiled<2 * Q>";
  EXPECT_EQ(error_of([&] { (void)SpecExpressions(spec); }), "--entry: unknown name 'Q' (known: R, height, width)");
}

TEST(KernelSource, UnguardedDefines) {
  const std::string source = R"(
    #ifndef A
    #define A 1
    #endif
    #if !defined ( B )
    # define B 2
    #else
    #define B 3
    #endif
    #define C(x) x // a function-like macro named C
    /* #define D 4 */
    #ifdef E
    #define D 5
    #endif
  )";
  EXPECT_FALSE(unguarded_define_line(source, "A").has_value());
  EXPECT_EQ(unguarded_define_line(source, "B"), 8); // the #else branch is not guarded
  EXPECT_EQ(unguarded_define_line(source, "C"), 10);
  EXPECT_EQ(unguarded_define_line(source, "D"), 13); // the comment is not a define; #ifdef E guards nothing
  EXPECT_FALSE(unguarded_define_line(source, "Z").has_value());
}

TEST(KernelSource, KernelTemplateParameters) {
  const std::string source =
      "#include <x.h>\ntemplate <typename T, int BLOCK_SIZE = 16, bool F>\n__global__ void mm(T* c) {}\n"
      "__global__ void plain(float* c) {}\n";
  const auto declaration = kernel_template(source, "mm");
  ASSERT_TRUE(declaration.has_value());
  EXPECT_EQ(declaration->line, 3);
  EXPECT_EQ(declaration->parameters, (std::vector<std::string>{"T", "BLOCK_SIZE", "F"}));
  EXPECT_FALSE(kernel_template(source, "plain").has_value());
}

TEST(KernelSource, DeviceSideSetsAsideHostFunctionsOnly) {
  // Each line with whether it stays; a line set aside becomes as many spaces.
  const std::vector<std::pair<std::string, bool>> lines = {
      {"#include <vector>", true},
      {"struct Pair { int a; int b; };", true},
      {"__global__ void k(char* o) { o[0] = '}'; }", true}, // a brace in a character literal opens nothing
      {"__host__ __device__ int both(int x) { return x; }", true},
      {"constexpr int twice(int x) { return 2 * x; }", true}, // device code may call it
      {"static auto f = [](int x) { return x; };", true},     // an initializer, not a definition
      {"namespace host {", true},
      {"int helper(const char* s) { return s[0] == '{' || s[1] == \"}\"[0]; }", false},
      {"}", true},
      {"extern \"C\" {", true},
      {"void c_api() { /* } */ }", false},
      {"}", true},
      {"template <typename T> void fill(std::vector<T>& v) {", false},
      {"  for (auto& x : v) x = T(1);", false},
      {"}", false},
      {"int main() {", true}, // a preprocessor line inside: left whole
      {"#ifdef X", true},
      {"  return 1;", true},
      {"#endif", true},
      {"  return 0;", true},
      {"}", true},
      {"void run() { k<<<1, 1>>>(nullptr); }", false},
  };
  std::string source, expected;
  for (const auto& [line, kept] : lines) {
    source += line + "\n";
    expected += (kept ? line : std::string(line.size(), ' ')) + "\n";
  }
  EXPECT_EQ(device_side_source(source), expected);
  // Nothing is set aside where the braces cannot be followed.
  EXPECT_FALSE(device_side_source("void f() {\n").has_value());
  EXPECT_FALSE(device_side_source("}\nint main() { return 0; }\n").has_value());
  EXPECT_FALSE(device_side_source("const char* s = R\"(})\";\nint main() { return 0; }\n").has_value());
}

KernelSpec scale_spec() {
  KernelSpec spec;
  spec.source = "scale.cu";
  spec.entry = "scale";
  spec.grid = "1";
  spec.block = "32";
  spec.buffers = {{"out", "128"}};
  spec.args = {{"n", 32}};
  return spec;
}

TEST(KernelParameters, FloatingPointScalarsAsTheirType) {
  KernelSpec spec = scale_spec();
  spec.value_args = {{"alpha", "2.5"}, {"beta", "-0.125"}};
  spec.args.push_back({"gamma", 3});
  const EvaluatedSpec evaluated = SpecExpressions(spec).evaluate(Config{});
  // 2.5f = 0x40200000; -0.125 as a double = 0xBFC0000000000000; the integer 3 given to a float = 3.0f = 0x40400000.
  const std::vector<SourceParameter> signature = {{"out", true, "float"},
                                                  {"alpha", false, "float"},
                                                  {"beta", false, "double"},
                                                  {"gamma", false, "float"},
                                                  {"n", false, "int"}};
  const auto params = compiled({{"u64", 8}, {"f32", 4}, {"f64", 8}, {"f32", 4}, {"u32", 4}});
  const auto values = kernel_parameter_values(params, signature, spec, evaluated, {1ULL << 30});
  EXPECT_EQ(values[1], little_endian(0x40200000, 4));
  EXPECT_EQ(values[2], little_endian(0xBFC0000000000000ULL, 8));
  EXPECT_EQ(values[3], little_endian(0x40400000, 4));
  EXPECT_EQ(values[4], little_endian(32, 4));
  // A template's `T alpha` is read by its compiled type: .f32.
  const std::vector<SourceParameter> templated = {
      {"out", true, "T"}, {"alpha", false, "T"}, {"beta", false, "double"}, {"gamma", false, "T"}, {"n", false, "int"}};
  EXPECT_EQ(kernel_parameter_values(params, templated, spec, evaluated, {1ULL << 30})[1], little_endian(0x40200000, 4));
  // A non-integer for an integer parameter, and an integer that does not fit: each names the fix.
  spec.value_args = {{"alpha", "2.5"}, {"beta", "1"}, {"n", "2.5"}};
  spec.args = {{"gamma", 3}};
  EXPECT_EQ(error_of([&] {
              kernel_parameter_values(params, signature, spec, SpecExpressions(spec).evaluate(Config{}), {1ULL << 30});
            }),
            "kernel parameter 'n' is int: give it an integer, not '2.5'");
  spec.value_args = {{"alpha", "2.5"}, {"beta", "1"}};
  spec.args = {{"gamma", 3}, {"n", 1LL << 31}};
  EXPECT_EQ(error_of([&] {
              kernel_parameter_values(params, signature, spec, SpecExpressions(spec).evaluate(Config{}), {1ULL << 30});
            }),
            "kernel parameter 'n': 2147483648 does not fit int");
}

TEST(KernelParameters, StructFieldsAtTheirCLayoutOffsets) {
  // struct Params { int width; double scale; short tag; float alpha; }: width at 0, scale at 8
  // (double alignment), tag at 16, alpha at 20 (float alignment after 18); size 24, a multiple of 8.
  const std::string source = R"(
    typedef struct { int width; double scale; short tag; float alpha; } Params;
    __global__ void scale(float* out, const Params p) {}
  )";
  const auto signature = kernel_parameters(source, "scale");
  ASSERT_TRUE(signature && (*signature)[1].fields);
  EXPECT_EQ((*signature)[1].type, "Params");
  KernelSpec spec = scale_spec();
  spec.args = {{"w", 4096}};
  spec.value_args = {{"p.width", "w / 2"}, {"p.scale", "0.5"}, {"p.tag", "-2"}, {"p.alpha", "1"}};
  const EvaluatedSpec evaluated = SpecExpressions(spec).evaluate(Config{});
  const std::vector<PtxParam> params = {{"out", "u64", 8, 8}, {"p", "b8", 24, 8}};
  const std::vector<std::uint8_t> bytes = kernel_parameter_values(params, signature, spec, evaluated, {1ULL << 30})[1];
  std::vector<std::uint8_t> expected(24, 0);
  auto put = [&](std::size_t at, std::uint64_t value, int size) {
    for (int b = 0; b < size; ++b)
      expected[at + static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(value >> (8 * b));
  };
  put(0, 2048, 4);                  // w / 2
  put(8, 0x3FE0000000000000ULL, 8); // 0.5 as a double
  put(16, 0xFFFE, 2);               // -2 as a short
  put(20, 0x3F800000, 4);           // 1.0f
  EXPECT_EQ(bytes, expected);

  // A scalar for the struct, a missing field, an unknown field, a size the C rules do not give.
  spec.value_args = {};
  spec.args = {{"p", 1}};
  EXPECT_EQ(error_of([&] {
              kernel_parameter_values(params, signature, spec, SpecExpressions(spec).evaluate(Config{}), {1ULL << 30});
            }),
            "kernel parameter 'p' (struct Params) is a struct passed by value, not a scalar: give its fields: "
            "--arg p.width=VALUE --arg p.scale=VALUE --arg p.tag=VALUE --arg p.alpha=VALUE");
  spec.args = {};
  spec.value_args = {{"p.width", "1"}, {"p.scale", "0.5"}, {"p.alpha", "1"}};
  EXPECT_EQ(error_of([&] { kernel_parameter_values(params, signature, spec, evaluated, {1ULL << 30}); }),
            "kernel parameter 'p' (struct Params): field 'tag' has no value: give "
            "--arg p.width=VALUE --arg p.scale=VALUE --arg p.tag=VALUE --arg p.alpha=VALUE");
  spec.value_args = {{"p.width", "1"}, {"p.scale", "0.5"}, {"p.tag", "1"}, {"p.alpha", "1"}, {"p.height", "3"}};
  EXPECT_EQ(error_of([&] { kernel_parameter_values(params, signature, spec, evaluated, {1ULL << 30}); }),
            "--arg p.height: struct Params has no field 'height' (fields: width, scale, tag, alpha)");
  spec.value_args.pop_back();
  const std::vector<PtxParam> packed = {{"out", "u64", 8, 8}, {"p", "b8", 18, 1}};
  EXPECT_EQ(error_of([&] { kernel_parameter_values(packed, signature, spec, evaluated, {1ULL << 30}); }),
            "kernel parameter 'p' (struct Params): its fields lay out to 24 bytes by the C rules, the compiled "
            "parameter has 18 "
            "(a packed struct, or one with an over-aligned field, cannot be placed)");
}

TEST(KernelParameters, OverAlignedStructTakesThePtxAlignment) {
  // struct __align__(16) Span { int begin, end, step; }: the fields at 0, 4 and 8 as in C, and
  // the size 16, a multiple of the .param's .align 16 (nvcc: .param .align 16 .b8 s[16]) rather
  // than of the fields' 4.
  const std::string source = R"(
    struct __align__(16) Span { int begin, end, step; };
    __global__ void scale(float* out, Span s) {}
  )";
  const auto signature = kernel_parameters(source, "scale");
  ASSERT_TRUE(signature && (*signature)[1].fields);
  KernelSpec spec = scale_spec();
  spec.args = {};
  spec.value_args = {{"s.begin", "1"}, {"s.end", "4096"}, {"s.step", "2"}};
  const EvaluatedSpec evaluated = SpecExpressions(spec).evaluate(Config{});
  const std::vector<PtxParam> params = {{"out", "u64", 8, 8}, {"s", "b8", 16, 16}};
  std::vector<std::uint8_t> expected(16, 0);
  expected[0] = 1;
  expected[4] = 0x00;
  expected[5] = 0x10; // 4096
  expected[8] = 2;
  EXPECT_EQ(kernel_parameter_values(params, signature, spec, evaluated, {1ULL << 30})[1], expected);
}

TEST(KernelSource, StructFieldsOfBothDefinitions) {
  const std::string source = R"(
    struct Box { int x, y; float w[2]; __device__ int area() const { return x * y; } static const int kind = 3; };
    typedef struct Tagged { unsigned long long id; } Id;
  )";
  const auto box = struct_fields(source, "Box");
  ASSERT_TRUE(box.has_value());
  ASSERT_EQ(box->size(), 3U);
  EXPECT_EQ((*box)[1].name, "y");
  EXPECT_EQ((*box)[1].type, "int");
  EXPECT_EQ((*box)[2].elements, 2);
  const auto id = struct_fields(source, "Id");
  ASSERT_TRUE(id.has_value());
  ASSERT_EQ(id->size(), 1U);
  EXPECT_EQ((*id)[0].type, "unsigned long long");
  EXPECT_FALSE(struct_fields(source, "Missing").has_value());
}

} // namespace
} // namespace cachewise::frontend
