#include "nvrtc_library.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#include "cachewise/model/errors.hpp"

namespace cachewise::frontend::detail {

namespace {

/// The library the build found (CMake's CUDA::nvrtc), tried first: the file the cache keys name.
constexpr const char* kBuildLibrary = CACHEWISE_NVRTC_LIBRARY;
/// Its soname, for an install where the build's path is gone (the loader's search finds it).
constexpr const char* kSoname = CACHEWISE_NVRTC_SONAME;

std::filesystem::path build_library_file() {
  std::error_code error;
  const std::filesystem::path canonical = std::filesystem::canonical(kBuildLibrary, error);
  return error ? std::filesystem::path{} : canonical;
}

template <typename Function>
void resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(::dlsym(library, name));
  if (function == nullptr) throw InputError(std::string("NVRTC (") + kSoname + ") has no function " + name);
}

NvrtcFunctions load() {
  const std::filesystem::path file = build_library_file();
  void* library = file.empty() ? nullptr : ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) library = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    throw InputError(std::string("cannot load NVRTC (") + kSoname + "): " + (why != nullptr ? why : "not found"));
  }
  NvrtcFunctions functions;
  resolve(library, "nvrtcCreateProgram", functions.create_program);
  resolve(library, "nvrtcAddNameExpression", functions.add_name_expression);
  resolve(library, "nvrtcCompileProgram", functions.compile_program);
  resolve(library, "nvrtcGetProgramLogSize", functions.get_program_log_size);
  resolve(library, "nvrtcGetProgramLog", functions.get_program_log);
  resolve(library, "nvrtcGetPTXSize", functions.get_ptx_size);
  resolve(library, "nvrtcGetPTX", functions.get_ptx);
  resolve(library, "nvrtcDestroyProgram", functions.destroy_program);
  resolve(library, "nvrtcVersion", functions.version);
  return functions; // the library stays loaded for the life of the process
}

} // namespace

const NvrtcFunctions& nvrtc() {
  static std::once_flag once;
  static NvrtcFunctions functions;
  std::call_once(once, [] { functions = load(); });
  return functions;
}

std::string nvrtc_identity() {
  if (const std::filesystem::path file = build_library_file(); !file.empty()) {
    std::error_code ignored;
    return "nvrtc " + file.string() + " " + std::to_string(std::filesystem::file_size(file, ignored));
  }
  int major = 0, minor = 0;
  nvrtc().version(&major, &minor);
  return "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
}

} // namespace cachewise::frontend::detail
