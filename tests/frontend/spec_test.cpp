#include "cachewise/frontend/spec.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "frontend_test_support.hpp"
#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"

namespace cachewise::frontend {
namespace {

using test_support::error_of;

KernelSpec from_json(const char* text) {
  return kernel_spec_from_json(nlohmann::ordered_json::parse(text), "/specs", "t.json");
}

TEST(KernelSpecFlags, ParseNamesAndValues) {
  const ParameterValues tile = parse_parameter_flag("TILE_DIM=16,32, 64");
  EXPECT_EQ(tile.name, "TILE_DIM");
  EXPECT_EQ(tile.values, (std::vector<std::int64_t>{16, 32, 64}));
  EXPECT_EQ(parse_parameter_flag("PAD=-1,0").values, (std::vector<std::int64_t>{-1, 0}));
  const BufferSpec buffer = parse_buffer_flag("odata = width * height * 4");
  EXPECT_EQ(buffer.name, "odata");
  EXPECT_EQ(buffer.bytes, "width * height * 4");
  EXPECT_EQ(parse_arg_flag("width=4096").value, 4096);
  EXPECT_EQ(parse_define_flag("USE_FAST").name, "USE_FAST");
  EXPECT_EQ(parse_define_flag("USE_FAST").value, "");
  EXPECT_EQ(parse_define_flag("K=V=W").value, "V=W");
}

TEST(KernelSpecFlags, BadFlagsNameTheProblem) {
  EXPECT_EQ(error_of([] { parse_parameter_flag("TILE_DIM"); }), "--param: expected NAME=VALUE, got 'TILE_DIM'");
  EXPECT_EQ(error_of([] { parse_parameter_flag("TILE_DIM=16,x"); }), "--param TILE_DIM: expected an integer, got 'x'");
  EXPECT_EQ(error_of([] { parse_parameter_flag("TILE_DIM=16,,32"); }), "--param TILE_DIM: expected an integer, got ''");
  EXPECT_EQ(error_of([] { parse_arg_flag("2w=4"); }), "--arg: '2w' is not a name");
  EXPECT_EQ(
      error_of([] { parse_arg_flag("w=99999999999999999999"); }),
      "--arg w: 99999999999999999999 is outside the 64-bit integer range [-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(error_of([] { parse_buffer_flag("odata="); }), "--buffer odata: expected a size expression after '='");
}

TEST(KernelSpecFlags, ArgsByKind) {
  // An integer is an arg expressions may use; a fraction, a field or a struct in braces is text
  // read later by the parameter's type.
  const ArgFlag width = parse_kernel_arg_flag("width=4096");
  ASSERT_EQ(width.integers.size(), 1U);
  EXPECT_EQ(width.integers[0].value, 4096);
  EXPECT_TRUE(width.values.empty());
  const ArgFlag alpha = parse_kernel_arg_flag("alpha=-2.5e-1");
  ASSERT_EQ(alpha.values.size(), 1U);
  EXPECT_EQ(alpha.values[0].text, "-2.5e-1");
  const ArgFlag field = parse_kernel_arg_flag("p.width=w / 2");
  ASSERT_EQ(field.values.size(), 1U);
  EXPECT_EQ(field.values[0].name, "p.width");
  EXPECT_EQ(field.values[0].text, "w / 2");
  const ArgFlag braces = parse_kernel_arg_flag("p={width=4096, scale=2.0}");
  ASSERT_EQ(braces.values.size(), 2U);
  EXPECT_EQ(braces.values[1].name, "p.scale");
  EXPECT_EQ(braces.values[1].text, "2.0");
  EXPECT_EQ(error_of([] { parse_kernel_arg_flag("alpha=fast"); }), "--arg alpha: expected a number, got 'fast'");
  EXPECT_EQ(error_of([] { parse_kernel_arg_flag("p.=1"); }),
            "--arg: expected NAME=VALUE or STRUCT.FIELD=VALUE, got 'p.=1'");
  EXPECT_EQ(error_of([] { parse_kernel_arg_flag("p={width}"); }),
            "--arg p: expected FIELD=VALUE inside {...}, got 'width'");
}

TEST(KernelSpecJson, FloatAndStructArgs) {
  const KernelSpec spec =
      from_json(R"({"args": {"n": 64, "alpha": 2.5, "p": {"width": 4096, "scale": 0.5, "height": "n * 2"}}})");
  ASSERT_EQ(spec.args.size(), 1U);
  ASSERT_EQ(spec.value_args.size(), 4U);
  EXPECT_EQ(spec.value_args[0].name, "alpha");
  EXPECT_EQ(spec.value_args[0].text, "2.5");
  EXPECT_EQ(spec.value_args[1].name, "p.width");
  EXPECT_EQ(spec.value_args[1].text, "4096");
  EXPECT_EQ(spec.value_args[3].text, "n * 2");
  // A flag replaces the file's arg of that name whatever its kind: alpha becomes an integer.
  KernelSpec flags;
  flags.args = {{"alpha", 3}};
  const KernelSpec merged = merge_kernel_specs(spec, flags);
  EXPECT_EQ(merged.value_args.size(), 3U);
  EXPECT_EQ(merged.args.size(), 2U);
  EXPECT_EQ(error_of([] { from_json(R"({"args": {"flag": true}})"); }),
            "t.json: arg 'flag' must be a number or, for a struct, an object of its fields, got true");
}

TEST(KernelSpecFlags, ContentsWithAnOptionalType) {
  const ContentsSpec col = parse_contents_flag("col = (i * 37) % n");
  EXPECT_EQ(col.name, "col");
  EXPECT_EQ(col.value, "(i * 37) % n");
  EXPECT_EQ(col.type, "i32");
  const ContentsSpec wide = parse_contents_flag("row_ptr:i64=i * 8");
  EXPECT_EQ(wide.name, "row_ptr");
  EXPECT_EQ(wide.value, "i * 8");
  EXPECT_EQ(wide.type, "i64");
  EXPECT_EQ(error_of([] { parse_contents_flag("col"); }), "--contents: expected NAME=VALUE, got 'col'");
  EXPECT_EQ(error_of([] { parse_contents_flag("col:i64="); }),
            "--contents col: expected an expression over i after '='");
}

TEST(KernelSpecJson, ContentsAsTextOrWithType) {
  const KernelSpec spec = from_json(R"({"buffers": {"row_ptr": 260, "col": 1024},
    "contents": {"row_ptr": "i * 4", "col": {"value": "i % n", "type": "u32"}}})");
  ASSERT_EQ(spec.contents.size(), 2U);
  EXPECT_EQ(spec.contents[0].name, "row_ptr");
  EXPECT_EQ(spec.contents[0].value, "i * 4");
  EXPECT_EQ(spec.contents[0].type, "i32");
  EXPECT_EQ(spec.contents[1].value, "i % n");
  EXPECT_EQ(spec.contents[1].type, "u32");
  EXPECT_EQ(error_of([] { from_json(R"({"contents": {"col": {"valu": "i"}}})"); }),
            "t.json: contents of 'col': unknown key 'valu' (known: value, type)");
  EXPECT_EQ(error_of([] { from_json(R"({"contents": {"col": {"type": "i64"}}})"); }),
            "t.json: contents of 'col': no \"value\"");
}

TEST(KernelSpecValidate, ContentsNameABufferAndAType) {
  KernelSpec spec = from_json(R"({"source": "k.cu", "entry": "k", "grid": 1, "block": 32, "buffers": {"col": 128}})");
  spec.contents = {{"colum", "i", "i32"}};
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec); }), "--contents colum: 'colum' is not a buffer (--buffer)");
  spec.contents = {{"col", "i", "f32"}};
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec); }),
            "--contents col: unknown element type 'f32' (known: i32, u32, i64, u64)");
  spec.contents = {{"col", "i", "i32"}, {"col", "0", "i32"}};
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec); }), "kernel spec: contents of buffer 'col' is given twice");
}

TEST(KernelSpecJson, ReadsEveryField) {
  const KernelSpec spec = from_json(R"({
    "source": "k.cu", "entry": "tiled<T, P>", "std": "c++17",
    "parameters": {"T": [16, 32], "P": [0, 1]}, "constraints": ["T > P"],
    "grid": ["n / T", 1], "block": "T, 8", "shared_bytes": "T * 4", "useful_bytes": 100,
    "buffers": {"out": "n * 4", "in": 64}, "args": {"n": 1024}, "defines": {"FAST": 1, "MODE": "x"}})");
  EXPECT_EQ(spec.source, std::filesystem::path("/specs/k.cu")); // relative to the spec's directory
  EXPECT_EQ(spec.entry, "tiled<T, P>");
  EXPECT_EQ(spec.language_standard, "c++17");
  ASSERT_EQ(spec.parameters.size(), 2U);
  EXPECT_EQ(spec.parameters[0].name, "T"); // file order, not sorted
  EXPECT_EQ(spec.parameters[1].values, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(spec.constraints, std::vector<std::string>{"T > P"});
  EXPECT_EQ(spec.grid, "n / T, 1");
  EXPECT_EQ(spec.block, "T, 8");
  EXPECT_EQ(spec.dynamic_shared_bytes, "T * 4");
  EXPECT_EQ(spec.useful_bytes, "100");
  ASSERT_EQ(spec.buffers.size(), 2U);
  EXPECT_EQ(spec.buffers[0].name, "out");
  EXPECT_EQ(spec.buffers[1].bytes, "64");
  ASSERT_EQ(spec.args.size(), 1U);
  EXPECT_EQ(spec.args[0].value, 1024);
  ASSERT_EQ(spec.defines.size(), 2U);
  EXPECT_EQ(spec.defines[0].value, "1");
  EXPECT_EQ(spec.defines[1].value, "x");
}

TEST(KernelSpecJson, OutOfBoundsReadsErrorUnlessSimulateIsAsked) {
  EXPECT_EQ(from_json(R"({})").out_of_bounds_reads, OutOfBoundsReads::error);
  EXPECT_EQ(from_json(R"({"out_of_bounds_reads": "error"})").out_of_bounds_reads, OutOfBoundsReads::error);
  EXPECT_EQ(from_json(R"({"out_of_bounds_reads": "simulate"})").out_of_bounds_reads, OutOfBoundsReads::simulate);
  EXPECT_EQ(error_of([] { from_json(R"({"out_of_bounds_reads": "ignore"})"); }),
            "t.json: out_of_bounds_reads: expected \"error\" or \"simulate\", got \"ignore\"");
}

TEST(KernelSpecJson, BranchesOnLoadedDataErrorUnlessNotTakenIsAsked) {
  EXPECT_EQ(from_json(R"({})").branches_on_loaded_data, BranchesOnLoadedData::error);
  EXPECT_EQ(from_json(R"({"branches_on_loaded_data": "not-taken"})").branches_on_loaded_data,
            BranchesOnLoadedData::not_taken);
  EXPECT_EQ(error_of([] { from_json(R"({"branches_on_loaded_data": "taken"})"); }),
            "t.json: branches_on_loaded_data: expected \"error\" or \"not-taken\", got \"taken\"");
}

TEST(KernelSpecJson, BadFilesNameTheProblem) {
  EXPECT_EQ(error_of([] { from_json(R"({"sourc": "k.cu"})"); }), "t.json: unknown key 'sourc'");
  EXPECT_EQ(error_of([] { from_json(R"({"parameters": {"T": 16}})"); }), "t.json: parameter 'T' must list its values");
  EXPECT_EQ(error_of([] { from_json(R"({"parameters": {"T": [16, 1.5]}})"); }),
            "t.json: parameter 'T': 1.5 is not an integer or a type");
  EXPECT_EQ(error_of([] { from_json(R"({"args": {"n": "big"}})"); }),
            "t.json: arg 'n' must be a number or, for a struct, an object of its fields, got \"big\"");
  EXPECT_EQ(error_of([] { from_json(R"([1, 2])"); }), "t.json: a kernel spec is a JSON object");
  EXPECT_EQ(error_of([] { load_kernel_spec("/nonexistent/k.json"); }), "/nonexistent/k.json: cannot open kernel spec");
}

// 2^64 - 1 read as int64 is -1: refused, from a file and from flags alike.
TEST(KernelSpecJson, IntegersPastInt64AreRefused) {
  EXPECT_EQ(error_of([] { from_json(R"({"args": {"n": 18446744073709551615}})"); }),
            "t.json: arg 'n': 18446744073709551615 is past the largest integer, 9223372036854775807");
  EXPECT_EQ(error_of([] { from_json(R"({"parameters": {"T": [16, 9223372036854775808]}})"); }),
            "t.json: parameter 'T': 9223372036854775808 is past the largest integer, 9223372036854775807");
  EXPECT_EQ(
      error_of([] { parse_kernel_arg_flag("n=18446744073709551615"); }),
      "--arg n: 18446744073709551615 is outside the 64-bit integer range [-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(error_of([] { parse_parameter_flag("T=18446744073709551615"); }),
            "--param T: 18446744073709551615 is outside the 64-bit integer range [-9223372036854775808, "
            "9223372036854775807]");
  EXPECT_EQ(from_json(R"({"args": {"n": 9223372036854775807}})").args.at(0).value, INT64_MAX);
}

TEST(KernelSpecJson, DuplicateKeysAndDirectoriesAreRefused) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "cachewise_spec_duplicate.json";
  std::ofstream(path) << R"({"source": "k.cu", "args": {"n": 1024, "n": 4096}})";
  EXPECT_EQ(error_of([&] { load_kernel_spec(path); }), path.string() + ": duplicate key 'args.n'");
  std::ofstream(path) << R"({"tolerance": 1e999})";
  EXPECT_EQ(error_of([&] { load_kernel_spec(path); }),
            path.string() + ": not valid JSON ([json.exception.out_of_range.406] number overflow parsing '1e999')");
  std::filesystem::remove(path);
  const std::filesystem::path directory = std::filesystem::temp_directory_path();
  EXPECT_EQ(error_of([&] { load_kernel_spec(directory); }),
            directory.string() + ": not a regular file (a kernel spec is a JSON file)");
}

TEST(KernelSpecMerge, FlagsOverrideTheFileByName) {
  KernelSpec file = from_json(R"({"source": "k.cu", "entry": "k", "grid": "n / T", "block": "T",
    "parameters": {"T": [16, 32], "P": [0, 1]}, "constraints": ["T > 8"],
    "buffers": {"out": "n * 4"}, "args": {"n": 1024}})");
  KernelSpec flags;
  flags.parameters = {{"T", {64}}, {"R", {2, 4}}};
  flags.args = {{"n", 2048}};
  flags.block = "T, R";
  flags.contents = {{"out", "i", "i32"}};
  const KernelSpec merged = merge_kernel_specs(file, flags);
  EXPECT_EQ(merged.source, std::filesystem::path("/specs/k.cu")); // not given as a flag: kept
  EXPECT_EQ(merged.grid, "n / T");
  EXPECT_EQ(merged.block, "T, R");
  ASSERT_EQ(merged.parameters.size(), 3U);
  EXPECT_EQ(merged.parameters[0].values, std::vector<std::int64_t>{64}); // replaced in place
  EXPECT_EQ(merged.parameters[1].name, "P");
  EXPECT_EQ(merged.parameters[2].name, "R"); // new name appended
  ASSERT_EQ(merged.args.size(), 1U);
  EXPECT_EQ(merged.args[0].value, 2048);
  EXPECT_EQ(merged.constraints, std::vector<std::string>{"T > 8"}); // no --constraint given: kept
  ASSERT_EQ(merged.contents.size(), 1U);
  EXPECT_EQ(merged.contents[0].name, "out");
}

TEST(KernelSpecValidate, MissingFieldsAndRepeatedNames) {
  KernelSpec spec;
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec); }), "kernel spec: no source (--kernel FILE.cu or \"source\")");
  spec.source = "k.cu";
  spec.entry = "k";
  spec.grid = "1";
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec); }),
            "kernel spec: no block (--block \"X[, Y[, Z]]\" or \"block\")");
  spec.block = "32";
  spec.parameters = {{"n", {1}}};
  spec.args = {{"n", 4}};
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec); }), "kernel spec: arg 'n' is given twice");
}

/// A spec from `json` with the fields validation requires besides it.
KernelSpec spec_with(const char* json) {
  KernelSpec spec = from_json(json);
  spec.source = "k.cu";
  spec.entry = "k";
  spec.grid = "1";
  spec.block = "32";
  return spec;
}

// Names reach the generated source and the compiler as macros and parameters: C identifiers only.
TEST(KernelSpecValidate, NamesAreIdentifiers) {
  EXPECT_EQ(
      error_of([&] { validate_kernel_spec(spec_with(R"({"parameters": {"E; int injected = 0; //": [1, 2]}})")); }),
      "kernel spec: parameter 'E; int injected = 0; //' is not a C identifier");
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec_with(R"({"args": {"n m": 4}})")); }),
            "kernel spec: arg 'n m' is not a C identifier");
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec_with(R"({"args": {"p": {"w-1": 4}}})")); }),
            "kernel spec: arg 'p.w-1' is not a C identifier (or STRUCT.FIELD)");
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec_with(R"({"buffers": {"out[0]": "4"}})")); }),
            "kernel spec: buffer 'out[0]' is not a C identifier");
  EXPECT_EQ(
      error_of([&] { validate_kernel_spec(spec_with(R"({"parameters": {"T": [1]}, "args": {"p": {"w": 4}}})")); }),
      "no error");
}

// The ceiling on max_candidates (kLargestMaxCandidates = 100000) holds for a library caller as
// for --max-candidates: 0, and 100001, are refused by name; 1 and 100000 pass.
TEST(KernelSpecValidate, MaxCandidatesWithinTheCeiling) {
  KernelSpec spec = spec_with(R"({"parameters": {"T": [1, 2]}})");
  spec.max_candidates = 100001;
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec); }),
            "kernel spec: max_candidates must be 1 to 100000, got 100001");
  spec.max_candidates = 0;
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec); }), "kernel spec: max_candidates must be 1 to 100000, got 0");
  spec.max_candidates = 1;
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec); }), "no error");
  spec.max_candidates = 100000;
  EXPECT_EQ(error_of([&] { validate_kernel_spec(spec); }), "no error");
}

// Checked on every subcommand, not only when a GPU measures: a tolerance below zero, an output
// type no comparison knows.
TEST(KernelSpecValidate, OutputsAndTolerance) {
  EXPECT_EQ(error_of([&] {
              validate_kernel_spec(spec_with(
                  R"({"buffers": {"out": "4"}, "reference": {"T": 1}, "outputs": {"out": "f32"}, "tolerance": -5})"));
            }),
            "kernel spec: tolerance must be a finite number >= 0, got -5");
  EXPECT_EQ(error_of([&] {
              validate_kernel_spec(
                  spec_with(R"({"buffers": {"out": "4"}, "reference": {"T": 1}, "outputs": {"out": "f16"}})"));
            }),
            "kernel spec: output 'out' has type 'f16' (valid: f32, f64, i32, u8)");
  EXPECT_EQ(error_of([&] {
              validate_kernel_spec(
                  spec_with(R"({"buffers": {"out": "4"}, "reference": {"T": 1}, "outputs": {"in": "f32"}})"));
            }),
            "kernel spec: output 'in' is not a buffer");
  EXPECT_EQ(error_of([&] {
              validate_kernel_spec(spec_with(
                  R"({"buffers": {"out": "4"}, "reference": {"T": 1}, "outputs": {"out": "u8"}, "tolerance": 0.5})"));
            }),
            "no error");
}

TEST(EntryName, SplitsTemplateArguments) {
  const EntryName plain = parse_entry_name("transpose_tiled");
  EXPECT_EQ(plain.function, "transpose_tiled");
  EXPECT_TRUE(plain.template_arguments.empty());
  const EntryName templated = parse_entry_name(" tiled<TILE_DIM, min(PAD, 1), 2 * R> ");
  EXPECT_EQ(templated.function, "tiled");
  EXPECT_EQ(templated.template_arguments, (std::vector<std::string>{"TILE_DIM", "min(PAD, 1)", "2 * R"}));
  EXPECT_EQ(error_of([] { parse_entry_name("tiled<T,>"); }), "--entry: empty template argument in 'tiled<T,>'");
}

// A trailing parameter list picks an overload; it may follow template arguments.
TEST(EntryName, SplitsASignature) {
  const EntryName plain = parse_entry_name(" scale(float*, const float*) ");
  EXPECT_EQ(plain.function, "scale");
  EXPECT_TRUE(plain.template_arguments.empty());
  EXPECT_EQ(plain.signature, "(float*, const float*)");
  const EntryName templated = parse_entry_name("tiled<T, min(A, B)>(T*, int)");
  EXPECT_EQ(templated.function, "tiled");
  EXPECT_EQ(templated.template_arguments, (std::vector<std::string>{"T", "min(A, B)"}));
  EXPECT_EQ(templated.signature, "(T*, int)");
  EXPECT_EQ(parse_entry_name("naive").signature, "");
  EXPECT_EQ(error_of([] { parse_entry_name("(int)"); }), "--entry: expected NAME(PARAMETER, ...), got '(int)'");
  EXPECT_EQ(error_of([] { parse_entry_name("f int)"); }), "--entry: expected NAME(PARAMETER, ...), got 'f int)'");
}

// Type parameters: the types in order, their indices as the values.
TEST(KernelSpecFlags, TypeParameters) {
  const ParameterValues type = parse_parameter_flag("T=float, unsigned int,double");
  EXPECT_TRUE(type.is_type());
  EXPECT_EQ(type.types, (std::vector<std::string>{"float", "unsigned int", "double"}));
  EXPECT_EQ(type.values, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_FALSE(parse_parameter_flag("N=1,2").is_type());
  EXPECT_EQ(error_of([] { parse_parameter_flag("T=float,4"); }),
            "--param T: mixes integers and types ('4'); a parameter's values are all integers or all types");
  EXPECT_EQ(error_of([] { parse_parameter_flag("T=float,a+b"); }),
            "--param T: 'a+b' is neither an integer nor a type name");
  const KernelSpec spec = from_json(R"({"parameters": {"T": ["float", "double"], "N": [1]}})");
  EXPECT_EQ(spec.parameters[0].types, (std::vector<std::string>{"float", "double"}));
  EXPECT_FALSE(spec.parameters[1].is_type());
  EXPECT_EQ(error_of([] { from_json(R"({"parameters": {"T": [1, "float"]}})"); }),
            "t.json: parameter 'T': mixes integers and types; a parameter's values are all integers or all types");
}

// Include directories are relative to the spec file; flags append theirs to the file's.
TEST(KernelSpecJson, IncludeDirectoriesAndCompilerOptions) {
  KernelSpec spec = from_json(R"({"include_dirs": ["inc", "/abs"], "compiler_options": ["-maxrregcount=64"]})");
  EXPECT_EQ(spec.include_directories, (std::vector<std::filesystem::path>{"/specs/inc", "/abs"}));
  EXPECT_EQ(spec.compiler_options, (std::vector<std::string>{"-maxrregcount=64"}));
  KernelSpec flags;
  flags.include_directories = {"more"};
  flags.compiler_options = {"--use_fast_math"};
  spec = merge_kernel_specs(spec, flags);
  EXPECT_EQ(spec.include_directories, (std::vector<std::filesystem::path>{"/specs/inc", "/abs", "more"}));
  EXPECT_EQ(spec.compiler_options, (std::vector<std::string>{"-maxrregcount=64", "--use_fast_math"}));
  EXPECT_EQ(error_of([] { from_json(R"({"include_dirs": "inc"})"); }),
            "t.json: 'include_dirs' must be a list of directories");
}

// Template arguments may hold commas inside angle brackets and parentheses.
TEST(EntryName, TypesAndNestedArguments) {
  const EntryName name = parse_entry_name("reduce6<float, THREADS, true, vec<int, 2>, min(A, B)>");
  EXPECT_EQ(name.function, "reduce6");
  EXPECT_EQ(name.template_arguments,
            (std::vector<std::string>{"float", "THREADS", "true", "vec<int, 2>", "min(A, B)"}));
}

} // namespace
} // namespace cachewise::frontend
