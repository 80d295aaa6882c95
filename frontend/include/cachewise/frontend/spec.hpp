// cachewise::frontend — a kernel spec: which CUDA source and entry to analyse, the parameter
// space to rank, and how each candidate is launched (grid, block, buffers, scalar arguments),
// from `advisor suggest --kernel` flags or a JSON file (docs/kernel-spec.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cachewise::frontend {

/// A parameter and its values: integers, or types ("T=float,double": `types` holds them and
/// `values` their indices 0, 1, ...).
struct ParameterValues {
  std::string name;
  std::vector<std::int64_t> values;
  std::vector<std::string> types = {}; ///< empty for an integer parameter

  bool is_type() const { return !types.empty(); }
};

/// A global buffer: the kernel's pointer parameter of that name, sized by an expression.
struct BufferSpec {
  std::string name;
  std::string bytes; ///< expression over parameters and args
};

/// What a buffer holds, declared so that the values loaded from it are known (index arrays:
/// CSR row pointers and column indices, a gather's indices): element i is `value` at i.
struct ContentsSpec {
  std::string name;         ///< a buffer
  std::string value;        ///< expression over `i` (the element index), parameters and args
  std::string type = "i32"; ///< the elements: i32, u32, i64 or u64
};

struct NamedValue {
  std::string name;
  std::int64_t value = 0;
};

/// An argument value no expression can name, kept as text and read as its parameter's type once
/// the compiled kernel and the source say what that is: a floating-point scalar ("alpha" =
/// "2.5") or a field of a struct passed by value ("p.width" = "4096", "p.scale" = "2.0"; a
/// field's value may also be an integer expression over the parameters and args).
struct ArgumentText {
  std::string name;
  std::string text;
};

struct Define {
  std::string name;
  std::string value; ///< macro body, may be empty ("-DNAME=")
};

/// An output buffer compared against the reference variant, as elements of `type`.
struct OutputSpec {
  std::string name;
  std::string type = "f32"; ///< f32, f64, i32 or u8
};

/// The most candidates a spec's parameters may span (the product of their value counts) unless
/// --max-candidates raises it: the space is counted before it is built, so a typo that spans
/// 10^7 candidates is refused at once instead of taking gigabytes and hours.
inline constexpr std::uint64_t kDefaultMaxCandidates = 10000;
/// The most --max-candidates (and KernelSpec::max_candidates, checked by validate_kernel_spec)
/// may raise it to. The space is streamed, a chunk at a time, but its enumeration (4 bytes a
/// parameter per config), a record per screened candidate and the time every candidate takes
/// still grow with it.
inline constexpr std::uint64_t kLargestMaxCandidates = 100000;

/// What a global load outside every buffer does ("out_of_bounds_reads", --out-of-bounds-reads):
/// an error naming it (the default), or simulated as an access to its address (a kernel that
/// reads its neighbours' memory unguarded, as Rodinia's srad does). Stores and atomics outside
/// every buffer are errors either way.
enum class OutOfBoundsReads { error, simulate };

/// "error" or "simulate"; throws InputError "<where>: ..." for another word.
OutOfBoundsReads parse_out_of_bounds_reads(std::string_view text, const std::string& where);

/// What a branch (or an exit, or a predicated access) whose predicate comes from loaded data
/// does ("branches_on_loaded_data", --branches-on-loaded-data): an error naming it (the
/// default: the model does not know the data), or not taken by those lanes (a clamp whose arms
/// all write the same address, as Rodinia's srad saturates its coefficient). An address computed
/// from loaded data stays an error either way.
enum class BranchesOnLoadedData { error, not_taken };

/// "error" or "not-taken"; throws InputError "<where>: ..." for another word.
BranchesOnLoadedData parse_branches_on_loaded_data(std::string_view text, const std::string& where);

struct KernelSpec {
  std::filesystem::path source;
  /// "transpose_tiled", or "tiled<TILE_DIM, PAD>": then the parameters are the template's
  /// arguments (expressions), not macros.
  std::string entry;
  std::vector<ParameterValues> parameters;
  std::vector<std::string> constraints;
  std::string grid;                 ///< 1 to 3 comma-separated expressions, x first
  std::string block;                ///< 1 to 3 comma-separated expressions, x first
  std::string dynamic_shared_bytes; ///< expression; empty: 0
  std::string useful_bytes;         ///< expression; empty: every buffer's bytes once
  std::vector<BufferSpec> buffers;
  std::vector<ContentsSpec> contents;
  std::vector<NamedValue> args;         ///< integer args: names expressions may use
  std::vector<ArgumentText> value_args; ///< floating-point args and struct fields
  std::vector<Define> defines;
  std::string language_standard;                          ///< "c++17"; empty: the compiler's default
  std::vector<std::filesystem::path> include_directories; ///< -I DIR, searched in order
  std::vector<std::string> compiler_options;              ///< checked by check_compiler_option (compile.hpp)
  /// Correctness check when measuring (advisor tune): the reference variant's parameter
  /// values, the buffers it must agree on, and the largest relative difference allowed.
  std::vector<NamedValue> reference;
  std::vector<OutputSpec> outputs;
  double tolerance = 0.0;
  std::uint64_t max_candidates = kDefaultMaxCandidates; ///< --max-candidates
  /// --replay-loops: interpret every trip of every loop (LaunchArgs::summarise_loops false).
  bool replay_loops = false;
  OutOfBoundsReads out_of_bounds_reads = OutOfBoundsReads::error;
  BranchesOnLoadedData branches_on_loaded_data = BranchesOnLoadedData::error;
};

/// "TILE_DIM=16,32,64" (--param).
ParameterValues parse_parameter_flag(std::string_view text);
/// "odata=width * height * 4" (--buffer).
BufferSpec parse_buffer_flag(std::string_view text);
/// "col=(i * 37) % n" or "col:i64=(i * 37) % n" (--contents).
ContentsSpec parse_contents_flag(std::string_view text);
/// "width=4096" (--size: an integer arg).
NamedValue parse_arg_flag(std::string_view text);
/// --arg: "width=4096" (an integer arg), "alpha=2.5" (a floating-point one), "p.width=4096"
/// or "p={width=4096, scale=2.0}" (the fields of struct argument p).
struct ArgFlag {
  std::vector<NamedValue> integers;
  std::vector<ArgumentText> values;
};
ArgFlag parse_kernel_arg_flag(std::string_view text);
/// "K=V" or "K" (--define).
Define parse_define_flag(std::string_view text);

/// Whether `text` reads as a C++ type (a type parameter's value, a template argument): "float",
/// "unsigned int", "float2", "my::vec3", "double*"; letters, digits, '_', ':', '*' and spaces.
bool is_type_name(std::string_view text);

/// The JSON form (docs/kernel-spec.md); a relative "source" is relative to `spec_directory`.
/// Throws InputError "<where>: ..." on unknown keys, wrong types or missing fields.
KernelSpec kernel_spec_from_json(const nlohmann::ordered_json& json, const std::filesystem::path& spec_directory,
                                 const std::string& where);
KernelSpec load_kernel_spec(const std::filesystem::path& path);

/// `base` with every field `overrides` sets replaced: scalars when non-empty; parameters,
/// buffers, contents, args and defines by name (a new name is appended); constraints replace the
/// list; include directories and compiler options are appended.
KernelSpec merge_kernel_specs(KernelSpec base, const KernelSpec& overrides);

/// Throws InputError unless the macro name is an identifier and its value one line that does not
/// end in a backslash: what a `#define` line can hold as given.
void check_define(const Define& define);

/// The defines whose value is an integer ("--define N=4096"): names expressions may use, and a
/// size a tuned header may be keyed by.
std::vector<NamedValue> integer_defines(const KernelSpec& spec);

/// Throws InputError when a required field is missing, a name repeats or is no C identifier,
/// contents are declared for a name that is no buffer or with an unknown element type, an output
/// is no buffer, has an unknown type or lacks a reference, the tolerance is not finite and >= 0,
/// an include directory is not a directory, or a compiler option is not a known one
/// (check_compile_request).
void validate_kernel_spec(const KernelSpec& spec);

/// The entry's function name and its template arguments ("tiled<float, TILE_DIM, true>" ->
/// "tiled", {"float", "TILE_DIM", "true"}); no template arguments for a plain name. A trailing
/// parameter list picks one of overloaded kernels: "scale(float*, int)".
struct EntryName {
  std::string function;
  std::vector<std::string> template_arguments; ///< expression texts
  std::string signature;                       ///< "(float*, int)", or empty
};
EntryName parse_entry_name(std::string_view entry);

} // namespace cachewise::frontend
