// Compiling a candidate: cache lookup by content hash, then NVRTC in process, falling back to
// `nvcc -ptx` + `ptxas -v` when NVRTC rejects the file (host code: it cannot open <cstdio>,
// <vector>, and knows no <<<>>> launches).
#include "cachewise/frontend/compile.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#if CACHEWISE_WITH_NVRTC
#include <nvrtc.h>
#endif

#include "cachewise/frontend/kernel_source.hpp"
#include "cachewise/model.hpp"

extern char** environ;

namespace {
/// Enters every cache key: bumped when what a cache entry holds, or how it is made, changes.
constexpr const char* kCacheFormat = "cachewise kernel cache 2";
} // namespace

namespace cachewise::frontend {
namespace {

/// Distinct per process and thread: concurrent compiles never share a temporary file.
std::string unique_suffix() {
  return std::to_string(::getpid()) + "-" + std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temporary = path.string() + ".tmp" + unique_suffix();
  {
    std::ofstream out(temporary, std::ios::binary);
    out << text;
    if (!out) return; // an unwritable cache costs time, not correctness
  }
  std::error_code ignored;
  std::filesystem::rename(temporary, path, ignored);
}

/// FNV-1a, twice with different offsets: 128 bits, so distinct inputs do not share an entry.
class ContentHash {
public:
  void add(std::string_view bytes) {
    for (const unsigned char c : bytes) {
      low_ = (low_ ^ c) * 0x100000001b3ULL;
      high_ = (high_ ^ c) * 0x100000001b3ULL;
    }
    add_separator();
  }
  std::string hex() const {
    char text[33];
    std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(high_), static_cast<unsigned long long>(low_));
    return text;
  }

private:
  void add_separator() {
    low_ = (low_ ^ 0xffU) * 0x100000001b3ULL;
    high_ = (high_ ^ 0xffU) * 0x100000001b3ULL;
  }
  std::uint64_t low_ = 0xcbf29ce484222325ULL;
  std::uint64_t high_ = 0x84222325cbf29ce4ULL;
};

/// The source and every file it #includes with quotes that exists next to its includer,
/// recursively: what an edit can change. <system> headers enter through the compiler identity.
void hash_source_tree(const std::filesystem::path& path, ContentHash& hash, std::set<std::filesystem::path>& seen) {
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path);
  if (!seen.insert(canonical).second) return;
  const std::string text = read_file_bytes(path);
  hash.add(canonical.string());
  hash.add(text);
  static const std::regex include("#\\s*include\\s*\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), include); it != std::sregex_iterator(); ++it) {
    const std::filesystem::path included = path.parent_path() / (*it)[1].str();
    if (std::filesystem::exists(included)) hash_source_tree(included, hash, seen);
  }
}

std::vector<std::string> common_options(const CompileRequest& request) {
  std::vector<std::string> options = {"-arch=sm_" + std::to_string(request.compute_capability), "-lineinfo"};
  if (!request.language_standard.empty()) options.push_back("-std=" + request.language_standard);
  for (const Define& define : request.defines) options.push_back("-D" + define.name + "=" + define.value);
  std::filesystem::path directory = request.source.parent_path();
  options.push_back("-I" + (directory.empty() ? std::string(".") : directory.string()));
  return options;
}

struct ProcessResult {
  int exit_code = -1;
  std::string output; ///< stdout and stderr together
};

ProcessResult run_process(const std::vector<std::string>& arguments) {
  int pipe_ends[2];
  if (::pipe(pipe_ends) != 0) throw InputError("cannot create a pipe to run " + arguments.front());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_ends[1]);
  ProcessResult result;
  std::array<char, 4096> buffer{};
  for (ssize_t n; (n = ::read(pipe_ends[0], buffer.data(), buffer.size())) > 0;) result.output.append(buffer.data(), static_cast<std::size_t>(n));
  ::close(pipe_ends[0]);
  if (spawned != 0) throw InputError("cannot run " + arguments.front());
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

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
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

#if CACHEWISE_WITH_NVRTC
struct NvrtcResult {
  bool compiled = false;
  std::string log;
  std::string ptx;
};

bool has_ptxas_report(const std::string& log) { return log.find("Compiling entry function") != std::string::npos; }

NvrtcResult compile_with_nvrtc(const CompileRequest& request) {
  const std::string source = read_file_bytes(request.source);
  nvrtcProgram program = nullptr;
  if (nvrtcCreateProgram(&program, source.c_str(), request.source.string().c_str(), 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    throw InputError("NVRTC could not create a program for " + request.source.string());
  }
  std::vector<std::string> options = common_options(request);
  options.push_back("--ptxas-options=-v");
  std::vector<const char*> option_pointers;
  for (const std::string& option : options) option_pointers.push_back(option.c_str());
  for (const std::string& name : request.instantiations) nvrtcAddNameExpression(program, name.c_str());
  const nvrtcResult status = nvrtcCompileProgram(program, static_cast<int>(option_pointers.size()), option_pointers.data());
  NvrtcResult result;
  std::size_t size = 0;
  nvrtcGetProgramLogSize(program, &size);
  result.log.assign(size, '\0');
  nvrtcGetProgramLog(program, result.log.data());
  result.compiled = status == NVRTC_SUCCESS;
  if (result.compiled) {
    nvrtcGetPTXSize(program, &size);
    result.ptx.assign(size, '\0');
    nvrtcGetPTX(program, result.ptx.data());
    while (!result.ptx.empty() && result.ptx.back() == '\0') result.ptx.pop_back();
  }
  nvrtcDestroyProgram(&program);
  return result;
}

#endif

} // namespace

std::filesystem::path Compiler::default_cache_directory() {
  if (const char* explicit_directory = std::getenv("CACHEWISE_CACHE_DIR"); explicit_directory && *explicit_directory) {
    return explicit_directory;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "cachewise";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "cachewise";
  return std::filesystem::temp_directory_path() / "cachewise-cache";
}

Compiler::Compiler(std::filesystem::path cache_directory)
    : cache_directory_(cache_directory.empty() ? default_cache_directory() : std::move(cache_directory)), nvcc_(locate_nvcc()) {
#if CACHEWISE_WITH_NVRTC
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  compiler_identity_ = "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
#endif
  if (!nvcc_.empty()) {
    std::error_code ignored;
    compiler_identity_ += "; nvcc " + nvcc_.string() + " " + std::to_string(std::filesystem::file_size(nvcc_, ignored));
  }
  std::error_code ignored;
  std::filesystem::create_directories(cache_directory_, ignored);
}

CompiledKernel Compiler::compile(const CompileRequest& request) {
  if (compiler_identity_.empty()) throw InputError("built without NVRTC and no nvcc found: cannot compile " + request.source.string());
  ContentHash hash;
  std::set<std::filesystem::path> seen;
  hash_source_tree(request.source, hash, seen);
  hash.add(request.source.string()); // the name the compiler reports errors and line info under
  hash.add(compiler_identity_);
  hash.add(kCacheFormat);
  for (const std::string& option : common_options(request)) hash.add(option);
  for (const std::string& name : request.instantiations) hash.add("instantiate " + name);
  const std::filesystem::path entry = cache_directory_ / hash.hex();
  const std::filesystem::path ptx_path = entry.string() + ".ptx", log_path = entry.string() + ".log",
                              error_path = entry.string() + ".error", compiler_path = entry.string() + ".compiler";
  if (std::filesystem::exists(error_path)) throw InputError(read_file_bytes(error_path));
  if (std::filesystem::exists(ptx_path) && std::filesystem::exists(log_path) && std::filesystem::exists(compiler_path)) {
    return {read_file_bytes(ptx_path), read_file_bytes(log_path), read_file_bytes(compiler_path), true};
  }
  ++compilations_;
  CompiledKernel compiled;
  try {
    compiled = compile_uncached(request);
  } catch (const InputError& error) {
    write_file_atomically(error_path, error.what());
    throw;
  }
  write_file_atomically(ptx_path, compiled.ptx);
  write_file_atomically(log_path, compiled.ptxas_log);
  write_file_atomically(compiler_path, compiled.compiler);
  return compiled;
}

CompiledKernel Compiler::compile_uncached(const CompileRequest& request) {
  std::string nvrtc_error;
#if CACHEWISE_WITH_NVRTC
  if (in_process_) {
    NvrtcResult nvrtc = compile_with_nvrtc(request);
    if (nvrtc.compiled && has_ptxas_report(nvrtc.log)) return {std::move(nvrtc.ptx), std::move(nvrtc.log), "nvrtc", false};
    // Where a GPU driver is present, NVRTC's log may lack the ptxas report (seen on the H200
    // machine: 3 of 5 compiles of one file came back without one); ptxas itself gives it.
    if (nvrtc.compiled && !nvcc_.empty()) {
      CompiledKernel compiled{std::move(nvrtc.ptx), {}, "nvrtc", false};
      compiled.ptxas_log = ptxas_report(compiled.ptx, request.compute_capability);
      return compiled;
    }
    if (nvrtc.compiled) throw InputError("NVRTC gave no ptxas report for " + request.source.string() + " and no ptxas was found");
    nvrtc_error = first_error_line(nvrtc.log);
    // Only host code sends a file to nvcc (NVRTC cannot open <cstdio> and rejects host
    // functions); any other error is the user's, reported as NVRTC saw it.
    const bool host_code = nvrtc.log.find("open source file") != std::string::npos ||
                           nvrtc.log.find("not allowed in JIT mode") != std::string::npos;
    if (!host_code) throw InputError(nvrtc_error);
  }
#endif
  if (nvcc_.empty()) throw InputError(nvrtc_error.empty() ? "no nvcc found to compile " + request.source.string() : nvrtc_error);
  // A generated translation unit: the user's file, then one reference per instantiation
  // (taking a kernel's address in host code makes nvcc compile that specialization).
  const std::filesystem::path work = cache_directory_ / ("nvcc-" + unique_suffix());
  std::filesystem::create_directories(work);
  std::string unit = "#include \"" + std::filesystem::absolute(request.source).string() + "\"\n";
  for (std::size_t i = 0; i < request.instantiations.size(); ++i) {
    unit += "static void* const cachewise_instance_" + std::to_string(i) + " = reinterpret_cast<void*>(&" +
            request.instantiations[i] + ");\n";
  }
  write_file_atomically(work / "unit.cu", unit);
  std::vector<std::string> nvcc_command = {nvcc_.string(), "-ptx"};
  for (const std::string& option : common_options(request)) nvcc_command.push_back(option);
  nvcc_command.insert(nvcc_command.end(), {(work / "unit.cu").string(), "-o", (work / "unit.ptx").string()});
  const ProcessResult nvcc = run_process(nvcc_command);
  if (nvcc.exit_code != 0) {
    std::filesystem::remove_all(work);
    throw InputError(first_error_line(nvcc.output));
  }
  CompiledKernel compiled{read_file_bytes(work / "unit.ptx"), {}, "nvcc", false};
  std::filesystem::remove_all(work);
  compiled.ptxas_log = ptxas_report(compiled.ptx, request.compute_capability);
  return compiled;
}

std::string Compiler::ptxas_report(const std::string& ptx, int compute_capability) const {
  const std::filesystem::path work = cache_directory_ / ("ptxas-" + unique_suffix());
  std::filesystem::create_directories(work);
  write_file_atomically(work / "unit.ptx", ptx);
  const ProcessResult ptxas = run_process({(nvcc_.parent_path() / "ptxas").string(), "-v", "-arch=sm_" + std::to_string(compute_capability),
                                           (work / "unit.ptx").string(), "-o", (work / "unit.cubin").string()});
  std::filesystem::remove_all(work);
  if (ptxas.exit_code != 0) throw InputError("ptxas: " + first_error_line(ptxas.output));
  return ptxas.output;
}

} // namespace cachewise::frontend
