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
  const std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                         &std::free);
  return status == 0 && text ? std::string(text.get()) : name;
}

/// Integer literals without suffixes ("32u" -> "32"), as the user writes them.
std::string without_suffixes(const std::string& text) {
  static const std::regex suffix("(^|[^A-Za-z0-9_])(-?[0-9]+)(ull|ul|ll|u|l)\\b");
  return std::regex_replace(text, suffix, "$1$2");
}

/// "void tiled<32u, true, unsigned int>(float*, ...)" -> "void tiled<32,1,unsigned int>(float*,...)":
/// one spelling for matching the user's entry against the demangled names (integers without
/// suffixes, bools as 1 and 0, no space after commas or before '*', common typedefs and `const T` as
/// the demangler spells them).
std::string normalized(std::string text) {
  static const std::vector<std::pair<std::regex, std::string>> rewrites = {
      {std::regex(",\\s+"), ","},
      {std::regex("\\btrue\\b"), "1"},
      {std::regex("\\bfalse\\b"), "0"},
      {std::regex("\\(bool\\)"), ""},
      {std::regex("\\bunsigned(?!\\s+(int|char|short|long)\\b)"), "unsigned int"},
      {std::regex("\\buint32_t\\b"), "unsigned int"},
      {std::regex("\\bint32_t\\b"), "int"},
      {std::regex("\\b(uint64_t|size_t)\\b"), "unsigned long"},
      {std::regex("\\bint64_t\\b"), "long"},
      {std::regex("\\bhalf\\b"), "__half"},
      {std::regex("\\s+>"), ">"},
      {std::regex("(^|[(,])const\\s+([A-Za-z_][A-Za-z0-9_]*)"), "$1$2 const"},
      {std::regex("\\s+([*&)])"), "$1"},
      {std::regex("\\(\\s+"), "("}};
  for (const auto& [pattern, replacement] : rewrites) text = std::regex_replace(text, pattern, replacement);
  return without_suffixes(text);
}

bool names_function(const std::string& demangled_name, const std::string& target) {
  for (std::size_t at = demangled_name.find(target); at != std::string::npos;
       at = demangled_name.find(target, at + 1)) {
    const bool starts = at == 0 || demangled_name[at - 1] == ' ' || demangled_name[at - 1] == ':';
    const std::size_t end = at + target.size();
    if (starts && (end == demangled_name.size() || demangled_name[end] == '(')) return true;
  }
  return false;
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

std::string instance_text(const std::string& function, const std::vector<std::string>& template_arguments) {
  if (template_arguments.empty()) return function;
  std::string text = function + "<";
  for (std::size_t i = 0; i < template_arguments.size(); ++i) text += (i ? ", " : "") + template_arguments[i];
  return text + ">";
}

bool is_entry_of(const std::string& mangled_entry, const std::string& function,
                 const std::vector<std::string>& template_arguments, std::string_view signature) {
  const std::string target = instance_text(function, template_arguments) + std::string(signature);
  return mangled_entry == target || names_function(normalized(demangled(mangled_entry)), normalized(target));
}

std::string find_entry(const std::vector<std::string>& entries, const std::string& function,
                       const std::vector<std::string>& template_arguments, std::string_view signature) {
  const std::string target = instance_text(function, template_arguments) + std::string(signature);
  std::vector<std::string> matches;
  for (const std::string& entry : entries) {
    if (is_entry_of(entry, function, template_arguments, signature)) matches.push_back(entry);
  }
  // Overloads: each listed with its parameters, as --entry takes a signature.
  const auto with_parameters = [](const std::string& entry) {
    const std::string text = demangled(entry);
    const std::string instance = entry_instance_name(entry);
    const std::size_t parameters = text.find('(', text.find(instance));
    return without_suffixes(instance) + (parameters == std::string::npos ? "" : text.substr(parameters));
  };
  if (matches.size() == 1) return matches.front();
  if (matches.size() > 1) {
    std::string listed;
    for (const std::string& entry : matches) listed += (listed.empty() ? "" : ", ") + with_parameters(entry);
    throw InputError("entry '" + target + "' is ambiguous: " + std::to_string(matches.size()) + " kernels match (" +
                     listed + "); name one with its parameters, e.g. --entry \"" + with_parameters(matches.front()) +
                     "\"");
  }
  // Listed as --entry takes them: the demangled name and template arguments, no suffixes.
  std::string listed;
  for (const std::string& entry : entries)
    listed += (listed.empty() ? "" : ", ") + without_suffixes(entry_instance_name(entry));
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
