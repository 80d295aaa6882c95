// Compiling a candidate: cache lookup by content hash, then NVRTC in process. A file with host
// code (NVRTC cannot open <cstdio>, <vector>, and knows no <<<>>> launches) goes through NVRTC
// on its device side where nvcc agrees (compile_device_side.cpp); otherwise, and for any
// failure, through `nvcc -ptx` + `ptxas -v` as a whole.
//
// Nothing the user wrote reaches a shell. nvcc runs its own steps through one, so its argv holds
// only paths this process made (a private work directory, with links to the user's directories)
// and options checked against a list; defines go into the generated translation unit.
#include "cachewise/frontend/compile.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "cachewise/frontend/kernel_source.hpp"
#include "child_process.hpp"
#include "compile_steps.hpp"
#include "include_scan.hpp"
#if CACHEWISE_WITH_NVRTC
#include "nvrtc_library.hpp"
#endif
#include "cachewise/model.hpp"

extern char** environ;

namespace {
/// Enters every cache key and heads every entry: bumped when what an entry holds, or how it is
/// made, changes.
constexpr const char* kCacheFormat = "cachewise kernel cache 4";
/// The compiler's own limit on nested #include is 200; the scan that hashes them stops there too.
constexpr int kMaxIncludeDepth = 200;
/// The environment the compilers read: part of every cache key.
constexpr std::array kCompilerEnvironment = {"CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH", "NVCC_PREPEND_FLAGS",
                                             "NVCC_APPEND_FLAGS"};
} // namespace

namespace cachewise::frontend {

using detail::common_options;
using detail::ContentHash;
using detail::hash_source_tree;
using detail::include_directories;
#if CACHEWISE_WITH_NVRTC
using detail::compile_with_nvrtc;
using detail::NvrtcResult;
#endif

namespace {

/// Characters a path may hold to go into a child's argv unlinked: nvcc hands its arguments to a
/// shell, so anything a shell reads specially stays out.
bool is_shell_inert(std::string_view text) {
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 &&
        std::string_view("/._+-=,:").find(c) == std::string_view::npos)
      return false;
  }
  return !text.empty();
}

/// A file the compiler may read: a regular file (not a FIFO, a device, /dev/zero) of bounded size.
void check_readable_source(const std::filesystem::path& path, const std::string& where) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) throw InputError(where + path.string() + ": no such file");
  if (!std::filesystem::is_regular_file(status)) throw InputError(where + path.string() + ": not a regular file");
  const auto bytes = std::filesystem::file_size(path, error);
  if (error || bytes > kMaxSourceFileBytes) {
    throw InputError(where + path.string() + ": larger than " + std::to_string(kMaxSourceFileBytes >> 20) +
                     " MiB, the limit for a source file");
  }
}

std::vector<std::string> define_options(const CompileRequest& request) {
  std::vector<std::string> options;
  for (const Define& define : request.defines) options.push_back("-D" + define.name + "=" + define.value);
  return options;
}

} // namespace

namespace detail {

void hash_source_tree(const std::filesystem::path& path, const std::vector<std::filesystem::path>& directories,
                      ContentHash& hash, std::set<std::filesystem::path>& seen, int depth) {
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path);
  if (!seen.insert(canonical).second) return;
  const std::string text = read_file_bytes(path);
  hash.add(canonical.string());
  hash.add(text);
  for (const IncludeDirective& directive : include_directives(text)) {
    const std::string where = path.string() + ":" + std::to_string(directive.line) + ": #include ";
    if (directive.name.size() > 4096) throw InputError(where + "names a path longer than 4096 characters");
    std::filesystem::path included;
    try {
      included = resolve_include(directive, path, directories);
    } catch (const std::filesystem::filesystem_error&) {
      throw InputError(where + "names a path the file system cannot look up");
    }
    if (included.empty()) continue;
    if (depth >= kMaxIncludeDepth)
      throw InputError(where + "nests more than " + std::to_string(kMaxIncludeDepth) + " includes deep");
    check_readable_source(included, where);
    hash_source_tree(included, directories, hash, seen, depth + 1);
  }
}

std::vector<std::string> common_options(const CompileRequest& request) {
  std::vector<std::string> options = {"-arch=sm_" + std::to_string(request.compute_capability), "-lineinfo"};
  if (!request.language_standard.empty()) options.push_back("-std=" + request.language_standard);
  for (const std::string& option : request.compiler_options) options.push_back(option);
  return options;
}

std::vector<std::filesystem::path> include_directories(const CompileRequest& request) {
  std::vector<std::filesystem::path> directories;
  const std::filesystem::path own = request.source.parent_path();
  directories.push_back(own.empty() ? std::filesystem::path(".") : own);
  for (const auto& directory : request.include_directories) directories.push_back(directory);
  return directories;
}

#if CACHEWISE_WITH_NVRTC
NvrtcResult compile_with_nvrtc(const CompileRequest& request, const std::string& source,
                               const std::vector<std::string>& empty_headers) {
  const detail::NvrtcFunctions& api = detail::nvrtc();
  nvrtcProgram program = nullptr;
  std::vector<const char*> header_names, header_texts;
  for (const std::string& name : empty_headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back("");
  }
  if (api.create_program(&program, source.c_str(), request.source.string().c_str(),
                         static_cast<int>(empty_headers.size()), header_texts.data(),
                         header_names.data()) != NVRTC_SUCCESS) {
    throw InputError("NVRTC could not create a program for " + request.source.string());
  }
  std::vector<std::string> options = common_options(request);
  for (std::string& option : define_options(request)) options.push_back(std::move(option));
  for (const auto& directory : include_directories(request)) options.push_back("-I" + directory.string());
  options.push_back("--ptxas-options=-v");
  std::vector<const char*> option_pointers;
  for (const std::string& option : options) option_pointers.push_back(option.c_str());
  for (const std::string& name : request.instantiations) api.add_name_expression(program, name.c_str());
  const nvrtcResult status =
      api.compile_program(program, static_cast<int>(option_pointers.size()), option_pointers.data());
  NvrtcResult result;
  std::size_t size = 0;
  api.get_program_log_size(program, &size);
  result.log.assign(size, '\0');
  api.get_program_log(program, result.log.data());
  result.compiled = status == NVRTC_SUCCESS;
  if (result.compiled) {
    api.get_ptx_size(program, &size);
    result.ptx.assign(size, '\0');
    api.get_ptx(program, result.ptx.data());
    while (!result.ptx.empty() && result.ptx.back() == '\0') result.ptx.pop_back();
  }
  api.destroy_program(&program);
  return result;
}
#endif

} // namespace detail

namespace {

/// A directory of this process's own under the system's temporary directory, removed with it:
/// where nvcc and ptxas read and write. Its path is shell-inert by construction.
class PrivateDirectory {
public:
  PrivateDirectory() {
    std::error_code ignored;
    std::string base = std::filesystem::temp_directory_path(ignored).string();
    if (!is_shell_inert(base)) base = "/tmp";
    std::string pattern = base + "/cachewise-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw InputError("cannot create a temporary directory in " + base + ": " + std::strerror(errno));
    path_ = pattern;
  }
  ~PrivateDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  PrivateDirectory(const PrivateDirectory&) = delete;
  PrivateDirectory& operator=(const PrivateDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

std::filesystem::path locate_nvcc() {
  if (const char* explicit_nvcc = std::getenv("CACHEWISE_NVCC")) {
    return ::access(explicit_nvcc, X_OK) == 0 ? std::filesystem::path(explicit_nvcc) : std::filesystem::path();
  }
  std::vector<std::filesystem::path> candidates;
  for (const char* variable : {"CUDA_PATH", "CUDA_HOME"}) {
    if (const char* root = std::getenv(variable)) candidates.emplace_back(std::filesystem::path(root) / "bin" / "nvcc");
  }
  candidates.emplace_back("/usr/local/cuda/bin/nvcc");
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest = path;
    for (auto colon = rest.find(':'); !rest.empty(); colon = rest.find(':')) {
      candidates.emplace_back(std::filesystem::path(std::string(rest.substr(0, colon))) / "nvcc");
      rest.remove_prefix(colon == std::string_view::npos ? rest.size() : colon + 1);
    }
  }
  for (const auto& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) == 0) return std::filesystem::absolute(candidate);
  }
  return {};
}

int compile_timeout_seconds() {
  if (const char* text = std::getenv("CACHEWISE_COMPILE_TIMEOUT_S"); text && *text) {
    char* end = nullptr;
    const long seconds = std::strtol(text, &end, 10);
    if (*end != '\0' || seconds < 1 || seconds > 86400)
      throw InputError("CACHEWISE_COMPILE_TIMEOUT_S: expected whole seconds from 1 to 86400, got '" +
                       std::string(text) + "'");
    return static_cast<int>(seconds);
  }
  return 300;
}

bool has_ptxas_report(const std::string& log) { return log.find("Compiling entry function") != std::string::npos; }

/// The cache entry's text: a format line, a checksum of the rest, the field sizes, the fields.
std::string encode_entry(const CompiledKernel& compiled) {
  ContentHash checksum;
  for (const std::string* field : {&compiled.compiler, &compiled.ptx, &compiled.ptxas_log}) checksum.add(*field);
  std::string text = std::string(kCacheFormat) + "\n" + checksum.hex() + "\n" +
                     std::to_string(compiled.compiler.size()) + " " + std::to_string(compiled.ptx.size()) + " " +
                     std::to_string(compiled.ptxas_log.size()) + "\n";
  return text + compiled.compiler + compiled.ptx + compiled.ptxas_log;
}

/// The entry `text` holds, or nothing when it is truncated, altered or of another format.
std::optional<CompiledKernel> decode_entry(const std::string& text) {
  std::istringstream in(text);
  std::string format, checksum_hex;
  std::size_t sizes[3] = {};
  if (!std::getline(in, format) || format != kCacheFormat || !std::getline(in, checksum_hex)) return std::nullopt;
  if (!(in >> sizes[0] >> sizes[1] >> sizes[2]) || in.get() != '\n') return std::nullopt;
  const auto body = static_cast<std::size_t>(in.tellg());
  if (body > text.size() || text.size() - body != sizes[0] + sizes[1] + sizes[2]) return std::nullopt;
  CompiledKernel compiled;
  compiled.compiler = text.substr(body, sizes[0]);
  compiled.ptx = text.substr(body + sizes[0], sizes[1]);
  compiled.ptxas_log = text.substr(body + sizes[0] + sizes[1], sizes[2]);
  ContentHash checksum;
  for (const std::string* field : {&compiled.compiler, &compiled.ptx, &compiled.ptxas_log}) checksum.add(*field);
  if (checksum.hex() != checksum_hex) return std::nullopt;
  compiled.from_cache = true;
  return compiled;
}

/// Why `directory` cannot hold this user's cache, or empty when it can: it must be a directory
/// owned by this user that no one else may write.
std::string unusable_cache_reason(const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return "cannot create it (" + error.message() + ")";
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0) return std::string("cannot read it (") + std::strerror(errno) + ")";
  if (!S_ISDIR(info.st_mode)) return "not a directory";
  if (info.st_uid != ::geteuid()) return "owned by another user";
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "writable by other users";
  if (::access(directory.c_str(), W_OK | X_OK) != 0) return "not writable";
  return {};
}

} // namespace

void check_compile_request(const CompileRequest& request) {
  for (const Define& define : request.defines) check_define(define);
  const std::string& standard = request.language_standard;
  if (!standard.empty()) {
    static const std::set<std::string> known = {"c++03",   "c++11",   "c++14",   "c++17",  "c++20",
                                                "gnu++11", "gnu++14", "gnu++17", "gnu++20"};
    if (!known.contains(standard))
      throw InputError("--std '" + standard + "': expected one of c++03, c++11, c++14, c++17, c++20 (or gnu++NN)");
  }
  for (const std::string& option : request.compiler_options) check_compiler_option(option);
  for (const auto& directory : request.include_directories) {
    std::error_code error;
    if (!std::filesystem::is_directory(directory, error))
      throw InputError("-I " + directory.string() + ": not a directory");
  }
  const std::string source = request.source.string();
  if (source.find_first_of("\"\n\r") != std::string::npos)
    throw InputError(source + ": a source path must not hold a double quote or a line break");
  for (const std::string& name : request.instantiations) {
    if (name.find_first_of(std::string_view("\n\r\0;{}\"'#", 9)) != std::string::npos) {
      throw InputError("entry '" + name + "': a template instance names types and constants only");
    }
  }
}

void check_compiler_option(const std::string& option) {
  // Options that change code generation and read no file; each takes its value after '='.
  static const std::set<std::string, std::less<>> with_value = {"-maxrregcount",
                                                                "--maxrregcount",
                                                                "-ftz",
                                                                "--ftz",
                                                                "-prec-div",
                                                                "--prec-div",
                                                                "-prec-sqrt",
                                                                "--prec-sqrt",
                                                                "-fmad",
                                                                "--fmad",
                                                                "-default-device",
                                                                "--extra-device-vectorization",
                                                                "-extra-device-vectorization"};
  static const std::set<std::string, std::less<>> plain = {"--use_fast_math",
                                                           "-use_fast_math",
                                                           "--restrict",
                                                           "-restrict",
                                                           "--extended-lambda",
                                                           "-extended-lambda",
                                                           "--expt-relaxed-constexpr",
                                                           "-expt-relaxed-constexpr",
                                                           "-G",
                                                           "--device-debug",
                                                           "-dopt=on",
                                                           "-dopt=off",
                                                           "-lineinfo",
                                                           "--relocatable-device-code=true",
                                                           "-rdc=true"};
  const std::string_view name = std::string_view(option).substr(0, option.find('='));
  const bool known = option.find('=') == std::string::npos ? plain.contains(option)
                                                           : (with_value.contains(name) || plain.contains(option));
  if (!known || !is_shell_inert(option)) {
    throw InputError("--compiler-option '" + option +
                     "': not an option cachewise passes on (allowed: -maxrregcount=N, --use_fast_math, -ftz=, "
                     "-prec-div=, -prec-sqrt=, "
                     "-fmad=, --restrict, --extended-lambda, --expt-relaxed-constexpr); use -I for include directories "
                     "and --define for macros");
  }
}

std::filesystem::path Compiler::default_cache_directory() {
  if (const char* explicit_directory = std::getenv("CACHEWISE_CACHE_DIR"); explicit_directory && *explicit_directory) {
    return explicit_directory;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "cachewise";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "cachewise";
  // Never a folder in /tmp that other users could plant entries in: the account's home, or none.
  if (const passwd* account = ::getpwuid(::geteuid()); account && account->pw_dir && *account->pw_dir) {
    return std::filesystem::path(account->pw_dir) / ".cache" / "cachewise";
  }
  return {};
}

Compiler::Compiler(std::filesystem::path cache_directory)
    : cache_directory_(cache_directory.empty() ? default_cache_directory() : std::move(cache_directory)),
      nvcc_(locate_nvcc()),
      timeout_seconds_(compile_timeout_seconds()) {
#if CACHEWISE_WITH_NVRTC
  compiler_identity_ = detail::nvrtc_identity();
#endif
  if (!nvcc_.empty()) {
    std::error_code ignored;
    compiler_identity_ += "; nvcc " + nvcc_.string() + " " + std::to_string(std::filesystem::file_size(nvcc_, ignored));
  }
  if (cache_directory_.empty()) {
    warn_without_cache("no home directory to keep a compile cache in");
  } else if (const std::string reason = unusable_cache_reason(cache_directory_); !reason.empty()) {
    warn_without_cache("compile cache " + cache_directory_.string() + " is unusable: " + reason);
  }
}

void Compiler::warn_without_cache(const std::string& why) {
  if (cache_disabled_.exchange(true)) return; // one warning: the rest of the run goes on uncached
  std::cerr << "cachewise: warning: " << why << "; compiling without a cache\n";
}

std::string Compiler::cache_key(const CompileRequest& request) const {
  ContentHash hash;
  std::set<std::filesystem::path> seen;
  check_readable_source(request.source, "");
  hash_source_tree(request.source, include_directories(request), hash, seen, 0);
  hash.add(request.source.string()); // the name the compiler reports errors and line info under
  hash.add(compiler_identity_);
  hash.add(kCacheFormat);
  for (const std::string& option : common_options(request)) hash.add(option);
  for (const std::string& option : define_options(request)) hash.add(option);
  for (const auto& directory : include_directories(request))
    hash.add("-I" + std::filesystem::absolute(directory).string());
  for (const std::string& name : request.instantiations) hash.add("instantiate " + name);
  for (const char* variable : kCompilerEnvironment) {
    const char* value = std::getenv(variable);
    hash.add(std::string(variable) + "=" + (value ? value : "(unset)"));
  }
  return hash.hex();
}

std::optional<CompiledKernel> Compiler::read_cached(const std::string& key) {
  if (cache_disabled_) return std::nullopt;
  const std::filesystem::path entry = cache_directory_ / (key + ".entry");
  std::error_code error;
  if (!std::filesystem::is_regular_file(entry, error)) return std::nullopt;
  std::ifstream in(entry, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  std::optional<CompiledKernel> compiled = decode_entry(text);
  if (!compiled) std::filesystem::remove(entry, error); // a corrupt entry is a miss, and is made again
  return compiled;
}

void Compiler::write_cached(const std::string& key, const CompiledKernel& compiled) {
  if (cache_disabled_) return;
  // A temporary file of its own, renamed over the entry: readers see a whole entry or none.
  std::string temporary = (cache_directory_ / (key + ".tmp-XXXXXX")).string();
  const int descriptor = ::mkstemp(temporary.data());
  if (descriptor < 0) {
    warn_without_cache("cannot write to the compile cache " + cache_directory_.string() + " (" + std::strerror(errno) +
                       ")");
    return;
  }
  const std::string text = encode_entry(compiled);
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(descriptor, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  const int saved_errno = errno;
  const bool closed = ::close(descriptor) == 0;
  std::error_code error;
  if (written != text.size() || !closed) {
    std::filesystem::remove(temporary, error);
    warn_without_cache("cannot write to the compile cache " + cache_directory_.string() + " (" +
                       std::strerror(saved_errno) + ")");
    return;
  }
  std::filesystem::rename(temporary, cache_directory_ / (key + ".entry"), error);
  if (error) std::filesystem::remove(temporary, error);
}

CompiledKernel Compiler::compile(const CompileRequest& request) {
  if (compiler_identity_.empty())
    throw InputError("built without NVRTC and no nvcc found: cannot compile " + request.source.string());
  check_compile_request(request);
  const std::string key = cache_key(request);
  if (std::optional<CompiledKernel> cached = read_cached(key)) return std::move(*cached);
  ++compilations_;
  // A failure is never cached: the next run compiles again and reports what it finds then.
  bool cache = true;
  CompiledKernel compiled = compile_uncached(request, key, cache);
  if (cache) write_cached(key, compiled);
  return compiled;
}

CompiledKernel Compiler::compile_uncached(const CompileRequest& request, const std::string& key, bool& cache) {
  std::string nvrtc_error;
#if CACHEWISE_WITH_NVRTC
  if (in_process_) {
    const std::string source = read_file_bytes(request.source);
    NvrtcResult nvrtc = compile_with_nvrtc(request, source, {});
    if (nvrtc.compiled) return with_ptxas_report(std::move(nvrtc.ptx), std::move(nvrtc.log), request, "nvrtc");
    nvrtc_error = first_error_line(nvrtc.log);
    // Only host code sends a file on (NVRTC cannot open <cstdio> and rejects host functions);
    // any other error is the user's, reported as NVRTC saw it.
    const bool host_code = nvrtc.log.find("open source file") != std::string::npos ||
                           nvrtc.log.find("not allowed in JIT mode") != std::string::npos;
    if (!host_code) throw InputError(nvrtc_error);
    if (!nvcc_.empty()) {
      if (std::optional<CompiledKernel> device_side = compile_device_side_of(request, source, key, cache))
        return std::move(*device_side);
    }
  }
#endif
  if (nvcc_.empty())
    throw InputError(nvrtc_error.empty() ? "no nvcc found to compile " + request.source.string() : nvrtc_error);
  return with_ptxas_report(nvcc_ptx(request), {}, request, "nvcc");
}

CompiledKernel Compiler::with_ptxas_report(std::string ptx, std::string log, const CompileRequest& request,
                                           std::string compiler) const {
  if (has_ptxas_report(log)) return {std::move(ptx), std::move(log), std::move(compiler), false};
  // Where a GPU driver is present, NVRTC's log may lack the ptxas report (seen on the H200
  // machine: 3 of 5 compiles of one file came back without one); ptxas itself gives it.
  if (nvcc_.empty())
    throw InputError("NVRTC gave no ptxas report for " + request.source.string() + " and no ptxas was found");
  CompiledKernel compiled{std::move(ptx), {}, std::move(compiler), false};
  compiled.ptxas_log = ptxas_report(compiled.ptx, request.compute_capability);
  return compiled;
}

std::string Compiler::nvcc_ptx(const CompileRequest& request) const {
  const PrivateDirectory work;
  // The user's directories enter nvcc's argv as links made here ("src", "inc0", ...), so no path
  // the user chose is ever read by nvcc's shell.
  std::vector<std::string> nvcc_command = {nvcc_.string(), "-ptx"};
  for (const std::string& option : common_options(request)) nvcc_command.push_back(option);
  const std::vector<std::filesystem::path> directories = include_directories(request);
  for (std::size_t i = 0; i < directories.size(); ++i) {
    const std::filesystem::path link = work.path() / (i == 0 ? std::string("src") : "inc" + std::to_string(i - 1));
    std::filesystem::create_directory_symlink(std::filesystem::absolute(directories[i]), link);
    nvcc_command.push_back("-I" + link.string());
  }
  // The generated translation unit: the defines (nvcc's -D would pass their values through its
  // shell), the user's file, then one reference per instantiation (taking a kernel's address in
  // host code makes nvcc compile that specialization).
  std::string unit;
  for (const Define& define : request.defines) unit += "#define " + define.name + " " + define.value + "\n";
  unit += "#include \"" + std::filesystem::absolute(request.source).string() + "\"\n";
  for (std::size_t i = 0; i < request.instantiations.size(); ++i) {
    unit += "static void* const cachewise_instance_" + std::to_string(i) + " = reinterpret_cast<void*>(&" +
            request.instantiations[i] + ");\n";
  }
  {
    std::ofstream out(work.path() / "unit.cu", std::ios::binary);
    out << unit;
    if (!out) throw InputError("cannot write the translation unit in " + work.path().string());
  }
  nvcc_command.insert(nvcc_command.end(),
                      {(work.path() / "unit.cu").string(), "-o", (work.path() / "unit.ptx").string()});
  const ProcessResult nvcc = run_process(nvcc_command, timeout_seconds_);
  check_process_finished(nvcc, "nvcc", timeout_seconds_);
  if (nvcc.exit_code != 0) throw InputError(first_error_line(nvcc.output));
  return read_file_bytes(work.path() / "unit.ptx");
}

std::string Compiler::ptxas_report(const std::string& ptx, int compute_capability) const {
  const PrivateDirectory work;
  {
    std::ofstream out(work.path() / "unit.ptx", std::ios::binary);
    out << ptx;
    if (!out) throw InputError("cannot write PTX in " + work.path().string());
  }
  const ProcessResult ptxas =
      run_process({(nvcc_.parent_path() / "ptxas").string(), "-v", "-arch=sm_" + std::to_string(compute_capability),
                   (work.path() / "unit.ptx").string(), "-o", (work.path() / "unit.cubin").string()},
                  timeout_seconds_);
  check_process_finished(ptxas, "ptxas", timeout_seconds_);
  if (ptxas.exit_code != 0) throw InputError("ptxas: " + first_error_line(ptxas.output));
  return ptxas.output;
}

} // namespace cachewise::frontend
