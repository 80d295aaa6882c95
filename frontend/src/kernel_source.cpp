// Reading a __global__ function's parameter names from the source text.
#include "cachewise/frontend/kernel_source.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

#include "cachewise/model.hpp"

namespace cachewise::frontend {
namespace {

/// The text with // and /* */ comments and string literals blanked out (same length).
std::string without_comments(std::string_view source) {
  std::string text(source);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') text[i++] = ' ';
    } else if (text.compare(i, 2, "/*") == 0) {
      const std::size_t end = text.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? text.size() : end + 2;
      for (; i < stop; ++i) text[i] = text[i] == '\n' ? '\n' : ' ';
      --i;
    } else if (text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) text[i++] = ' ';
        text[i] = ' ';
      }
    }
  }
  return text;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1));
}

SourceParameter read_parameter(std::string text) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) { // a default value is not part of the declarator
    depth += text[i] == '(' || text[i] == '<' ? 1 : text[i] == ')' || text[i] == '>' ? -1 : 0;
    if (depth == 0 && text[i] == '=') {
      text.resize(i);
      break;
    }
  }
  SourceParameter parameter;
  parameter.pointer = text.find('*') != std::string::npos || text.find('[') != std::string::npos;
  text = trim(text.substr(0, text.find('[')));
  std::size_t end = text.size();
  std::size_t start = end;
  while (start > 0 && is_identifier_char(text[start - 1])) --start;
  const std::string last = text.substr(start, end - start);
  // "float* __restrict__ out": the name is the last identifier that is not a qualifier; a
  // lone type ("int") has no name.
  const bool only_type = start == 0 || last == "__restrict__" || last == "const" || last == "volatile";
  parameter.name = only_type ? std::string() : last;
  return parameter;
}

std::vector<SourceParameter> split_parameters(std::string_view list) {
  std::vector<SourceParameter> parameters;
  if (trim(list).empty() || trim(list) == "void") return parameters;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    depth += c == '(' || c == '<' || c == '[' ? 1 : c == ')' || c == '>' || c == ']' ? -1 : 0;
    if (c != ',' || depth > 0) continue;
    parameters.push_back(read_parameter(std::string(list.substr(start, i - start))));
    start = i + 1;
  }
  return parameters;
}

} // namespace

std::string read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::vector<SourceParameter>> kernel_parameters(std::string_view source, std::string_view function) {
  const std::string text = without_comments(source);
  for (std::size_t at = text.find(function); at != std::string::npos; at = text.find(function, at + 1)) {
    const std::size_t end = at + function.size();
    if ((at > 0 && is_identifier_char(text[at - 1])) || (end < text.size() && is_identifier_char(text[end]))) continue;
    std::size_t open = text.find_first_not_of(" \t\r\n", end);
    if (open == std::string::npos || text[open] != '(') continue;
    // The declaration starts after the previous statement or block boundary.
    const std::size_t boundary = text.find_last_of(";{}", at);
    const std::size_t head_start = boundary == std::string::npos ? 0 : boundary + 1;
    const std::string_view head = std::string_view(text).substr(head_start, at - head_start);
    if (head.find("__global__") == std::string_view::npos) continue;
    int depth = 0;
    for (std::size_t close = open; close < text.size(); ++close) {
      depth += text[close] == '(' ? 1 : text[close] == ')' ? -1 : 0;
      if (depth == 0) return split_parameters(std::string_view(text).substr(open + 1, close - open - 1));
    }
  }
  return std::nullopt;
}

} // namespace cachewise::frontend
