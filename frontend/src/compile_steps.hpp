// What compiling a candidate and checking a host-code file's device side share (compile.cpp,
// compile_device_side.cpp): the content hash, the source tree it covers, the options both
// compilers get, and NVRTC in process.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cachewise/frontend/compile.hpp"

namespace cachewise::frontend::detail {

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
    std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(high_),
                  static_cast<unsigned long long>(low_));
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

/// The source and every file it #includes that resolves outside the system headers,
/// recursively: what an edit can change. Each must be a regular file of bounded size: an
/// include of /dev/zero or a FIFO is refused here rather than hanging the compiler.
void hash_source_tree(const std::filesystem::path& path, const std::vector<std::filesystem::path>& directories,
                      ContentHash& hash, std::set<std::filesystem::path>& seen, int depth);

/// Options both compilers get. The include directories enter as given: NVRTC reads them in this
/// process; the nvcc path replaces them with links (nvcc_arguments).
std::vector<std::string> common_options(const CompileRequest& request);

/// The source's own directory, then the request's -I directories.
std::vector<std::filesystem::path> include_directories(const CompileRequest& request);

#if CACHEWISE_WITH_NVRTC
struct NvrtcResult {
  bool compiled = false;
  std::string log;
  std::string ptx;
};

/// NVRTC on `source`, under the request's file name (its errors and line info name it), with
/// the headers `empty_headers` names given to it empty.
NvrtcResult compile_with_nvrtc(const CompileRequest& request, const std::string& source,
                               const std::vector<std::string>& empty_headers);
#endif

} // namespace cachewise::frontend::detail
