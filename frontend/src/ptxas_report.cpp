// Reading what the compiler produced: ptxas's -v resource report, the PTX's entry names, and
// which (mangled) entry is the user's function; and the first error line of a failed compile.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <regex>

#include "cachewise/frontend/compile.hpp"
#include "cachewise/model.hpp"

namespace cachewise::frontend {
namespace {

std::int64_t captured(const std::string& block, const std::regex& pattern) {
  std::smatch match;
  return std::regex_search(block, match, pattern) ? std::stoll(match[1].str()) : 0;
}

std::string demangled(const std::string& name) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && text ? std::string(text.get()) : name;
}

/// "void tiled<32u, true>(float*, ...)" -> "void tiled<32,1>(float*, ...)": template
/// arguments as the user writes them (integers, no suffixes, no spaces).
std::string normalized(std::string text) {
  text = std::regex_replace(text, std::regex(", "), ",");
  text = std::regex_replace(text, std::regex("\\btrue\\b"), "1");
  text = std::regex_replace(text, std::regex("\\bfalse\\b"), "0");
  text = std::regex_replace(text, std::regex("\\(bool\\)"), "");
  return std::regex_replace(text, std::regex("(-?[0-9]+)(ull|ul|ll|u|l)\\b"), "$1");
}

bool names_function(const std::string& demangled_name, const std::string& target) {
  for (std::size_t at = demangled_name.find(target); at != std::string::npos; at = demangled_name.find(target, at + 1)) {
    const bool starts = at == 0 || demangled_name[at - 1] == ' ' || demangled_name[at - 1] == ':';
    const std::size_t end = at + target.size();
    if (starts && (end == demangled_name.size() || demangled_name[end] == '(')) return true;
  }
  return false;
}

/// "void tiled<32,1>(float*, int)" -> "tiled<32,1>": how the user names it in --entry.
std::string display_name(const std::string& entry) {
  std::string text = normalized(demangled(entry));
  text = text.substr(0, text.find('('));
  const std::size_t name_start = text.rfind(' ', text.find('<'));
  return name_start == std::string::npos ? text : text.substr(name_start + 1);
}

} // namespace

CompilerResources parse_ptxas_resources(std::string_view log, std::string_view entry) {
  const std::string text(log);
  const std::string header = "Compiling entry function '" + std::string(entry) + "'";
  const auto start = text.find(header);
  if (start == std::string::npos) throw InputError("ptxas report has no entry '" + std::string(entry) + "'");
  const auto next = text.find("Compiling entry function", start + header.size());
  const std::string block = text.substr(start, next == std::string::npos ? std::string::npos : next - start);
  CompilerResources resources;
  resources.registers_per_thread = captured(block, std::regex("Used ([0-9]+) registers"));
  resources.stack_frame_bytes = captured(block, std::regex("([0-9]+) bytes stack frame"));
  resources.spill_store_bytes = captured(block, std::regex("([0-9]+) bytes spill stores"));
  resources.spill_load_bytes = captured(block, std::regex("([0-9]+) bytes spill loads"));
  resources.static_shared_bytes = captured(block, std::regex("([0-9]+) bytes smem"));
  return resources;
}

std::string entry_instance_name(const std::string& mangled_entry) {
  const std::string text = demangled(mangled_entry);
  const std::size_t open = text.find('<') != std::string::npos ? text.find('<') : text.find('(');
  const std::size_t scope = text.rfind("::", open);
  const std::size_t start = scope == std::string::npos ? text.rfind(' ', open) : scope + 1;
  const std::size_t name_start = start == std::string::npos ? 0 : start + 1;
  // Template arguments hold no parentheses in the built-in kernels; the parameters start at '('.
  return text.substr(name_start, text.find('(', open) - name_start);
}

std::string find_entry(const std::vector<std::string>& entries, const std::string& function,
                       const std::vector<std::int64_t>& template_arguments) {
  std::string target = function;
  if (!template_arguments.empty()) {
    target += "<";
    for (std::size_t i = 0; i < template_arguments.size(); ++i) target += (i ? "," : "") + std::to_string(template_arguments[i]);
    target += ">";
  }
  for (const std::string& entry : entries) {
    if (entry == target || names_function(normalized(demangled(entry)), target)) return entry;
  }
  std::string listed;
  for (const std::string& entry : entries) listed += (listed.empty() ? "" : ", ") + display_name(entry);
  throw InputError("entry '" + target + "' not found (entries: " + (listed.empty() ? "none" : listed) + ")");
}

std::string first_error_line(std::string_view log) {
  std::string first_line;
  std::size_t start = 0;
  while (start < log.size()) {
    auto end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    const std::string_view line = log.substr(start, end - start);
    if (line.find("error") != std::string_view::npos) return std::string(line);
    if (first_line.empty() && line.find_first_not_of(" \t\r") != std::string_view::npos) first_line = line;
    start = end + 1;
  }
  return first_line.empty() ? "compilation failed without a message" : first_line;
}

} // namespace cachewise::frontend
