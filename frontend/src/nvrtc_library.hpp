// NVRTC loaded when the first candidate is compiled, not when the process starts: libnvrtc's
// static constructors cost every process that links it about 24 ms, and most advisor runs
// compile nothing (built-in patterns, a warm compile cache).
#pragma once

#include <nvrtc.h>

#include <string>

namespace cachewise::frontend::detail {

/// The NVRTC functions the compiler calls, resolved from the loaded library.
struct NvrtcFunctions {
  decltype(&nvrtcCreateProgram) create_program = nullptr;
  decltype(&nvrtcAddNameExpression) add_name_expression = nullptr;
  decltype(&nvrtcCompileProgram) compile_program = nullptr;
  decltype(&nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&nvrtcGetPTXSize) get_ptx_size = nullptr;
  decltype(&nvrtcGetPTX) get_ptx = nullptr;
  decltype(&nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&nvrtcVersion) version = nullptr;
};

/// The library's functions, loaded on the first call (thread-safe). Throws InputError naming
/// the library when it cannot be loaded or lacks a function.
const NvrtcFunctions& nvrtc();

/// What names this NVRTC in the compile cache's keys: the library file the build linked
/// against (its path and size, read without loading it) when that file is there, else the
/// loaded library's version.
std::string nvrtc_identity();

} // namespace cachewise::frontend::detail
