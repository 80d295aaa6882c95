// A host-code file's device side: its host functions set aside (device_side_source), compiled
// by NVRTC once nvcc, on the file's first candidate, gave the same PTX for the whole file; while
// speculating, before that verdict, with the builds cached only once it holds.
#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/frontend/compile.hpp"
#include "cachewise/frontend/kernel_source.hpp"
#include "compile_steps.hpp"

namespace cachewise::frontend {

void Compiler::set_speculative(bool speculative) {
  const std::lock_guard lock(device_side_mutex_);
  speculative_ = speculative;
}

bool Compiler::confirm_speculation() {
  std::vector<std::future<void>> checks;
  {
    const std::lock_guard lock(device_side_mutex_);
    checks.swap(background_checks_);
  }
  for (std::future<void>& check : checks) check.get();
  const std::lock_guard lock(device_side_mutex_);
  return !std::exchange(speculation_failed_, false);
}

#if CACHEWISE_WITH_NVRTC
namespace {

using detail::common_options;
using detail::compile_with_nvrtc;
using detail::ContentHash;
using detail::hash_source_tree;
using detail::include_directories;
using detail::NvrtcResult;

/// The header NVRTC reported it could not open (`cannot open source file "vector"`, or `could
/// not open ...` without include directories), or empty.
std::string unopened_header(const std::string& log) {
  constexpr std::string_view marker = "open source file \"";
  const std::size_t at = log.find(marker);
  if (at == std::string::npos) return {};
  const std::size_t end = log.find('"', at + marker.size());
  return end == std::string::npos ? std::string() : log.substr(at + marker.size(), end - at - marker.size());
}

/// NVRTC on a file's device side: the host headers it includes (those NVRTC cannot open) are
/// given empty, found one compile at a time and added to `empty_headers`.
NvrtcResult compile_device_side(const CompileRequest& request, const std::string& device_side,
                                std::vector<std::string>& empty_headers) {
  for (;;) {
    NvrtcResult result = compile_with_nvrtc(request, device_side, empty_headers);
    const std::string header = unopened_header(result.log);
    if (result.compiled || header.empty() ||
        std::find(empty_headers.begin(), empty_headers.end(), header) != empty_headers.end()) {
      return result;
    }
    empty_headers.push_back(header);
  }
}

/// PTX without its comments and `.file` lines (nvcc's name its generated unit), with `.entry`
/// for `.visible .entry` and `.weak .entry` (NVRTC makes the instances of name expressions
/// weak), and, when `kept` is given, without the template instances it does not list: what two
/// compiles of one file's device code must agree on, though nvcc also compiles the instances
/// the host code launches.
std::string comparable_ptx(const std::string& ptx, const std::set<std::string>* kept) {
  std::string text;
  std::istringstream in(ptx);
  bool skipping = false;
  for (std::string line; std::getline(in, line);) {
    if (skipping) {
      skipping = line != "}";
      continue;
    }
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && (line.compare(first, 2, "//") == 0 || line.compare(first, 6, ".file\t") == 0))
      continue;
    for (const std::string_view linkage : {".visible .entry ", ".weak .entry "}) {
      if (line.starts_with(linkage)) line.erase(0, linkage.size() - 7);
    }
    if (kept && line.starts_with(".entry ")) {
      const std::string name = line.substr(7, line.find('(') - 7);
      if (!kept->contains(name) && entry_instance_name(name).find('<') != std::string::npos) {
        skipping = true;
        continue;
      }
    }
    text += line + "\n";
  }
  return text;
}

/// The entries (mangled names) `ptx` defines.
std::set<std::string> ptx_entries(const std::string& ptx) {
  std::set<std::string> entries;
  for (std::size_t at = ptx.find(".entry "); at != std::string::npos; at = ptx.find(".entry ", at + 1)) {
    entries.insert(ptx.substr(at + 7, ptx.find('(', at) - at - 7));
  }
  return entries;
}

} // namespace

std::optional<CompiledKernel> Compiler::compile_device_side_of(const CompileRequest& request, const std::string& source,
                                                               const std::string& key, bool& cache) {
  const std::optional<std::string> device_side = device_side_source(source);
  if (!device_side) return std::nullopt;
  // One verdict per file and options: the candidates differ in defines and instantiations.
  ContentHash file;
  std::set<std::filesystem::path> seen;
  hash_source_tree(request.source, include_directories(request), file, seen, 0);
  for (const std::string& option : common_options(request)) file.add(option);
  for (const auto& directory : include_directories(request)) file.add(directory.string());
  std::shared_ptr<DeviceSideCheck> check;
  bool first = false;
  bool speculative = false;
  {
    const std::lock_guard lock(device_side_mutex_);
    auto [found, inserted] = device_side_checks_.try_emplace(file.hex());
    if (inserted) found->second = std::make_shared<DeviceSideCheck>();
    check = found->second;
    first = inserted;
    speculative = speculative_;
  }
  if (!first) {
    const std::optional<std::vector<std::string>> found_headers = check->empty_headers.get();
    if (!found_headers) return std::nullopt; // NVRTC failed on the first: nvcc compiles the file
    const bool settled = check->faithful.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    if ((settled || !speculative) && !check->faithful.get()) return std::nullopt;
    std::vector<std::string> empty_headers = *found_headers;
    NvrtcResult nvrtc = compile_device_side(request, *device_side, empty_headers);
    if (!nvrtc.compiled) return std::nullopt; // nvcc compiles the file and reports its error
    return given_while_unsettled(
        *check, key, with_ptxas_report(std::move(nvrtc.ptx), std::move(nvrtc.log), request, "nvrtc, device side"),
        cache);
  }
  // The file's first candidate: its device side through NVRTC and the whole file through nvcc;
  // the verdict holds when both compile and their PTX agree.
  std::vector<std::string> empty_headers;
  NvrtcResult nvrtc;
  try {
    nvrtc = compile_device_side(request, *device_side, empty_headers);
  } catch (...) {
    check->headers_found.set_value(std::nullopt);
    settle(*check, false);
    throw;
  }
  if (!nvrtc.compiled) {
    check->headers_found.set_value(std::nullopt);
    settle(*check, false);
    return std::nullopt; // nvcc compiles the file and reports its error
  }
  check->headers_found.set_value(empty_headers);
  const auto agrees_with_nvcc = [this, request, device_ptx = nvrtc.ptx](std::string& whole) {
    whole = nvcc_ptx(request);
    const std::set<std::string> entries = ptx_entries(device_ptx);
    return comparable_ptx(device_ptx, nullptr) == comparable_ptx(whole, &entries);
  };
  if (speculative) {
    // Any failure of nvcc makes the verdict false: compiled again, nvcc then reports it.
    const auto check_in_background = [this, check, agrees_with_nvcc] {
      bool faithful = false;
      try {
        std::string whole;
        faithful = agrees_with_nvcc(whole);
      } catch (...) {
      }
      settle(*check, faithful);
    };
    try {
      const std::lock_guard lock(device_side_mutex_);
      background_checks_.push_back(std::async(std::launch::async, check_in_background));
    } catch (...) {
      settle(*check, false); // no thread to check in: the candidates waiting for a verdict get one
      throw;
    }
    return given_while_unsettled(
        *check, key, with_ptxas_report(std::move(nvrtc.ptx), std::move(nvrtc.log), request, "nvrtc, device side"),
        cache);
  }
  std::string whole;
  bool faithful = false;
  try {
    faithful = agrees_with_nvcc(whole);
  } catch (...) {
    settle(*check, false);
    throw;
  }
  settle(*check, faithful);
  return faithful ? with_ptxas_report(std::move(nvrtc.ptx), std::move(nvrtc.log), request, "nvrtc, device side")
                  : with_ptxas_report(std::move(whole), {}, request, "nvcc");
}

std::optional<CompiledKernel> Compiler::given_while_unsettled(DeviceSideCheck& check, const std::string& key,
                                                              CompiledKernel compiled, bool& cache) {
  const std::lock_guard lock(device_side_mutex_);
  if (check.settled) {
    if (!check.faithful.get()) return std::nullopt;
    return compiled;
  }
  check.speculated = true;
  check.unconfirmed.emplace_back(key, compiled);
  cache = false;
  return compiled;
}

void Compiler::settle(DeviceSideCheck& check, bool faithful) {
  std::vector<std::pair<std::string, CompiledKernel>> unconfirmed;
  {
    const std::lock_guard lock(device_side_mutex_);
    check.settled = true;
    unconfirmed.swap(check.unconfirmed);
    if (!faithful && check.speculated) speculation_failed_ = true;
    check.verdict_found.set_value(faithful);
  }
  if (faithful) {
    for (const auto& [key, compiled] : unconfirmed) write_cached(key, compiled);
  }
}
#endif

} // namespace cachewise::frontend
