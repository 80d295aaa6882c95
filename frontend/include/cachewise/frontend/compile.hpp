// cachewise::frontend — compiling one candidate of a user's kernel to PTX for the profile's
// architecture, with ptxas's resource report, cached by content hash. NVRTC in process when
// the source is device-only; `nvcc -ptx` + `ptxas -v` when it holds host code NVRTC rejects.
// No shell ever sees what the user wrote (docs/kernel-spec.md, "Compiling").
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachewise/advisor/compiler_resources.hpp"
#include "cachewise/frontend/spec.hpp"

namespace cachewise::frontend {

using advisor::CompilerResources;

/// Reads `entry`'s block of a ptxas -v log. Throws InputError when the log has no such entry.
CompilerResources parse_ptxas_resources(std::string_view log, std::string_view entry);

/// A PTX entry's function with its template arguments, as the demangler writes them, without
/// return type, scope or parameters: "transpose_shared<unsigned int, 4, 16>".
std::string entry_instance_name(const std::string& mangled_entry);

/// "tiled<float, 32, true>": the function with its template arguments, as C++ names it.
std::string instance_text(const std::string& function, const std::vector<std::string>& template_arguments);

/// Whether the (mangled) PTX entry is `function` instantiated with `template_arguments`, and,
/// when `signature` is given ("(float*, int)"), with those parameters.
bool is_entry_of(const std::string& mangled_entry, const std::string& function,
                 const std::vector<std::string>& template_arguments, std::string_view signature = {});

/// The PTX entry of `function` instantiated with `template_arguments` ("tiled", {"float", "32",
/// "true"}) or, without arguments, of the plain function, with the parameters `signature` names
/// if given: matched on the demangled names (integer suffixes, true/false as 1/0, spaces and
/// common typedefs folded). Throws InputError "entry 'x' not found (entries: a<float, 1>, b)",
/// listing the entries as --entry takes them, or, when overloads match, "entry 'f' is ambiguous:
/// 2 kernels match (f(float*, int), f(double*, int)); name one with its parameters, ...".
std::string find_entry(const std::vector<std::string>& entries, const std::string& function,
                       const std::vector<std::string>& template_arguments, std::string_view signature = {});

/// The largest source or included file the compiler is given: larger is refused unread.
inline constexpr std::uintmax_t kMaxSourceFileBytes = 16u << 20;

struct CompileRequest {
  std::filesystem::path source;
  int compute_capability = 90; ///< 90 -> sm_90
  std::vector<Define> defines;
  std::string language_standard;
  /// Name expressions to instantiate ("tiled<32, 1>"): a templated entry is compiled only
  /// where something instantiates it.
  std::vector<std::string> instantiations;
  /// -I directories, searched after the source's own directory.
  std::vector<std::filesystem::path> include_directories = {};
  /// Code-generation options passed to both compilers (check_compiler_option lists them).
  std::vector<std::string> compiler_options = {};
};

/// Throws InputError naming the first thing in `request` that cannot be compiled safely: a
/// macro name that is no identifier, a macro value of several lines or ending in a backslash,
/// an unknown language standard, an option outside check_compiler_option's list, an include
/// directory that is none, a source path with a double quote or line break.
void check_compile_request(const CompileRequest& request);

/// Throws InputError unless `option` is one of the code-generation options cachewise passes to
/// the compilers (-maxrregcount=N, --use_fast_math, -ftz=, -prec-div=, -prec-sqrt=, -fmad=, ...)
/// written in characters no shell reads specially.
void check_compiler_option(const std::string& option);

struct CompiledKernel {
  std::string ptx;
  std::string ptxas_log;
  std::string compiler; ///< "nvrtc", "nvrtc, device side" (host code set aside) or "nvcc"
  bool from_cache = false;
};

class Compiler {
public:
  /// `cache_directory` empty: default_cache_directory().
  explicit Compiler(std::filesystem::path cache_directory = {});

  /// Thread-safe. Throws InputError with the compiler's first error line when the source
  /// does not compile (never cached: the next call compiles again), and "built without NVRTC
  /// and no nvcc found" when neither exists. nvcc and ptxas are killed after
  /// $CACHEWISE_COMPILE_TIMEOUT_S seconds (default 300).
  CompiledKernel compile(const CompileRequest& request);

  /// Whether a cache miss may compile with NVRTC in this process (default) or only with an nvcc
  /// process. A process that forks children which use the GPU turns it off: where a GPU driver
  /// is present, NVRTC starts it in the compiling process (seen on the H200 machine), and a
  /// forked child of a process with a started driver cannot initialise CUDA.
  void set_in_process(bool in_process) { in_process_ = in_process; }

  /// Speculation (off by default): a host-code file's candidates compile their device side
  /// through NVRTC at once, while nvcc, in the background, checks for the file's first candidate
  /// that this gives the PTX it gives for the whole file. Their results enter the cache only
  /// once the check holds. Off, every candidate waits for that check (about a second of nvcc).
  void set_speculative(bool speculative);
  /// Waits for the checks started while speculating. False when one showed a file's device side
  /// unfaithful after it had been used: what was compiled from that file since must be compiled
  /// again (compile() now sends the file to nvcc). Reports each failure once.
  bool confirm_speculation();

  /// Compilations actually run (cache misses), failed ones included.
  std::int64_t compilations() const { return compilations_; }

  /// $CACHEWISE_CACHE_DIR, else $XDG_CACHE_HOME/cachewise, else ~/.cache/cachewise ($HOME,
  /// else the account's home); empty when there is no home: then nothing is cached. A directory
  /// that is not this user's alone, cannot be written, or fills up also turns the cache off,
  /// with one warning on stderr.
  static std::filesystem::path default_cache_directory();

private:
  /// What a host-code file's first candidate shows: the host headers NVRTC is given empty (none
  /// when NVRTC fails on the device side), then whether NVRTC on the device side
  /// (device_side_source) gives the PTX nvcc gives for the whole file: the file's verdict.
  struct DeviceSideCheck {
    std::promise<std::optional<std::vector<std::string>>> headers_found;
    std::shared_future<std::optional<std::vector<std::string>>> empty_headers = headers_found.get_future().share();
    std::promise<bool> verdict_found;
    std::shared_future<bool> faithful = verdict_found.get_future().share();
    // Guarded by device_side_mutex_:
    bool settled = false;                                            ///< `faithful` is known
    bool speculated = false;                                         ///< a result was given before it was
    std::vector<std::pair<std::string, CompiledKernel>> unconfirmed; ///< cache entries awaiting the verdict
  };

  /// `key`: the request's cache key, under which a speculative result waits for its verdict;
  /// `cache` is cleared when it does (the verdict writes it).
  CompiledKernel compile_uncached(const CompileRequest& request, const std::string& key, bool& cache);
  /// A host-code file's candidate through NVRTC with its host functions set aside, when the
  /// file's verdict (made by its first candidate) holds, or while it is made when speculating;
  /// nothing when it does not or NVRTC fails: then nvcc compiles the whole file.
  std::optional<CompiledKernel> compile_device_side_of(const CompileRequest& request, const std::string& source,
                                                       const std::string& key, bool& cache);
  /// `compiled` from the device side of `check`'s file: as it is once the verdict holds, nothing
  /// once it fails, and before it is known, kept to be cached when it holds (`cache` cleared).
  std::optional<CompiledKernel> given_while_unsettled(DeviceSideCheck& check, const std::string& key,
                                                      CompiledKernel compiled, bool& cache);
  /// The verdict of `check`, and the cache entries that waited for it written or dropped.
  void settle(DeviceSideCheck& check, bool faithful);
  /// The PTX of `nvcc -ptx` on a generated unit that defines the macros and includes the source.
  std::string nvcc_ptx(const CompileRequest& request) const;
  /// The PTX with its ptxas report: `log` when it holds one (NVRTC's), else `ptxas -v`'s.
  CompiledKernel with_ptxas_report(std::string ptx, std::string log, const CompileRequest& request,
                                   std::string compiler) const;
  /// The request's content hash: sources and the includes they reach, options, defines,
  /// include directories, instantiations, the compilers and the environment they read.
  std::string cache_key(const CompileRequest& request) const;
  /// The entry under `key` when it is whole and its checksum holds; a corrupt one is removed.
  std::optional<CompiledKernel> read_cached(const std::string& key);
  /// Writes to a temporary file and renames it over the entry.
  void write_cached(const std::string& key, const CompiledKernel& compiled);
  void warn_without_cache(const std::string& why);
  /// `ptxas -v` of the PTX for sm_<compute_capability>: its resource report.
  std::string ptxas_report(const std::string& ptx, int compute_capability) const;

  std::filesystem::path cache_directory_;
  std::string compiler_identity_; ///< enters every cache key: NVRTC version, nvcc's path and size
  std::filesystem::path nvcc_;
  bool in_process_ = true;
  int timeout_seconds_;
  std::atomic<bool> cache_disabled_{false};
  std::atomic<std::int64_t> compilations_{0};
  std::mutex device_side_mutex_;
  std::map<std::string, std::shared_ptr<DeviceSideCheck>> device_side_checks_; ///< by file and options
  bool speculative_ = false;
  bool speculation_failed_ = false; ///< guarded by device_side_mutex_
  /// nvcc's checks running in the background; last, so they end before the rest is destroyed.
  std::vector<std::future<void>> background_checks_;
};

/// The first line of a compiler log that says "error" (else its first non-empty line).
std::string first_error_line(std::string_view log);

} // namespace cachewise::frontend
