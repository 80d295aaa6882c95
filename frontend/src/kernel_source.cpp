// Reading a __global__ function's parameter names from the source text.
#include "cachewise/frontend/kernel_source.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
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

/// The type's words without qualifiers and `struct`, one space apart: "const unsigned  int" ->
/// "unsigned int".
std::string canonical_type(std::string_view text) {
  std::string type, word;
  auto flush = [&] {
    if (!word.empty() && word != "const" && word != "volatile" && word != "__restrict__" && word != "struct" &&
        word != "class") {
      type += (type.empty() ? "" : " ") + word;
    }
    word.clear();
  };
  for (const char c : text) {
    if (is_identifier_char(c) || c == ':') {
      word += c;
    } else {
      flush();
    }
  }
  flush();
  return type;
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
  parameter.type = canonical_type(only_type ? text : text.substr(0, start));
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

struct KernelDeclaration {
  std::size_t head_start = 0; ///< after the previous statement or block boundary
  std::size_t name_at = 0;
  std::size_t open = 0; ///< the parameter list's '('
};

/// The first __global__ function named `function` in comment-free `text`.
std::optional<KernelDeclaration> find_kernel(const std::string& text, std::string_view function) {
  for (std::size_t at = text.find(function); at != std::string::npos; at = text.find(function, at + 1)) {
    const std::size_t end = at + function.size();
    if ((at > 0 && is_identifier_char(text[at - 1])) || (end < text.size() && is_identifier_char(text[end]))) continue;
    const std::size_t open = text.find_first_not_of(" \t\r\n", end);
    if (open == std::string::npos || text[open] != '(') continue;
    const std::size_t boundary = text.find_last_of(";{}", at);
    const std::size_t head_start = boundary == std::string::npos ? 0 : boundary + 1;
    const std::string_view head = std::string_view(text).substr(head_start, at - head_start);
    if (head.find("__global__") == std::string_view::npos) continue;
    return KernelDeclaration{head_start, at, open};
  }
  return std::nullopt;
}

/// The `{...}` body that starts at `open`, without the braces (npos-safe: to the end).
std::string_view braced_body(std::string_view text, std::size_t open) {
  int depth = 0;
  for (std::size_t close = open; close < text.size(); ++close) {
    depth += text[close] == '{' ? 1 : text[close] == '}' ? -1 : 0;
    if (depth == 0) return text.substr(open + 1, close - open - 1);
  }
  return text.substr(open + 1);
}

/// The body of NAME's definition: `struct NAME {` or `typedef struct [TAG] { ... } NAME;`.
std::optional<std::string_view> struct_body(std::string_view text, std::string_view name) {
  for (std::size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    if ((at > 0 && is_identifier_char(text[at - 1])) || (end < text.size() && is_identifier_char(text[end]))) continue;
    const std::size_t next = text.find_first_not_of(" \t\r\n", end);
    std::size_t before = text.find_last_not_of(" \t\r\n", at == 0 ? 0 : at - 1);
    // "struct __align__(16) Name" or "struct alignas(16) Name": the keyword is before the alignment.
    if (before != std::string_view::npos && text[before] == ')' && next != std::string_view::npos &&
        text[next] == '{') {
      const std::size_t open = text.find_last_of('(', before);
      std::size_t word =
          open == std::string_view::npos ? open : text.find_last_not_of(" \t\r\n", open == 0 ? 0 : open - 1);
      const std::size_t word_end = word;
      while (word != std::string_view::npos && word > 0 && is_identifier_char(text[word - 1])) --word;
      const std::string_view attribute =
          word == std::string_view::npos ? std::string_view() : text.substr(word, word_end + 1 - word);
      if (attribute == "__align__" || attribute == "alignas")
        before = word == 0 ? std::string_view::npos : text.find_last_not_of(" \t\r\n", word - 1);
    }
    if (next != std::string_view::npos && text[next] == '{' && before != std::string_view::npos && before >= 5 &&
        (text.substr(before - 5, 6) == "struct" || text.substr(before - 4, 5) == "class")) {
      return braced_body(text, next);
    }
    if (next != std::string_view::npos && text[next] == ';' && before != std::string_view::npos &&
        text[before] == '}') {
      int depth = 0; // back to the body's opening brace, then "typedef struct" before it
      for (std::size_t open = before + 1; open-- > 0;) {
        depth += text[open] == '}' ? 1 : text[open] == '{' ? -1 : 0;
        if (depth != 0) continue;
        const std::size_t head = open == 0 ? std::string_view::npos : text.find_last_of(";{}", open - 1);
        const std::size_t from = head == std::string_view::npos ? 0 : head + 1;
        const std::string_view declaration = text.substr(from, open - from);
        if (declaration.find("typedef") != std::string_view::npos) return braced_body(text, open);
        break;
      }
    }
  }
  return std::nullopt;
}

/// Comment-free `text` with its character literals blanked too ('{' opens no block). A quote
/// after a hexadecimal digit is a digit separator (1'000).
std::string without_character_literals(std::string text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\'' || (i > 0 && std::isxdigit(static_cast<unsigned char>(text[i - 1])) != 0)) continue;
    for (++i; i < text.size() && text[i] != '\'' && text[i] != '\n'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) text[i++] = ' ';
      text[i] = ' ';
    }
  }
  return text;
}

/// Which characters of `text` belong to preprocessor lines (with their continuations).
std::vector<bool> directive_characters(const std::string& text) {
  std::vector<bool> directive(text.size(), false);
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = std::min(text.find('\n', start), text.size());
    const std::size_t first = text.find_first_not_of(" \t", start);
    if (first < end && text[first] == '#') {
      while (end < text.size() && end > start && text[end - 1] == '\\')
        end = std::min(text.find('\n', end + 1), text.size());
      std::fill(directive.begin() + static_cast<std::ptrdiff_t>(start),
                directive.begin() + static_cast<std::ptrdiff_t>(end), true);
    }
    start = end + 1;
  }
  return directive;
}

} // namespace

bool names_identifier(std::string_view source, std::string_view name) {
  const std::string text = without_comments(source);
  for (std::size_t at = text.find(name); !name.empty() && at != std::string::npos; at = text.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    if ((at == 0 || !is_identifier_char(text[at - 1])) && (end == text.size() || !is_identifier_char(text[end])))
      return true;
  }
  return false;
}

std::optional<std::vector<SourceField>> struct_fields(std::string_view source, std::string_view type_name) {
  const std::string text = without_comments(source);
  const std::optional<std::string_view> body = struct_body(text, type_name);
  if (!body) return std::nullopt;
  std::vector<SourceField> fields;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < body->size(); ++i) {
    depth += (*body)[i] == '{' || (*body)[i] == '(' ? 1 : (*body)[i] == '}' || (*body)[i] == ')' ? -1 : 0;
    if ((*body)[i] != ';' || depth != 0) continue;
    std::string declaration = trim(body->substr(start, i - start));
    start = i + 1;
    // A member function's body ends in '}' with no ';': what precedes the next field is dropped.
    if (const std::size_t brace = declaration.find_last_of('}'); brace != std::string::npos)
      declaration = trim(declaration.substr(brace + 1));
    if (declaration.empty() || declaration.find('(') != std::string::npos || declaration.starts_with("static ") ||
        declaration.starts_with("public") || declaration.starts_with("private")) {
      continue;
    }
    // "int width, height" or "float w[4]": the type, then declarators.
    std::vector<std::string> declarators;
    std::size_t from = 0;
    for (std::size_t comma = declaration.find(',');; comma = declaration.find(',', from)) {
      declarators.push_back(declaration.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    const SourceParameter first = read_parameter(declarators.front());
    for (std::size_t d = 0; d < declarators.size(); ++d) {
      const std::string& declarator = declarators[d];
      SourceParameter field = d == 0 ? first : read_parameter(first.type + " " + declarator);
      if (field.pointer && declarator.find('*') != std::string::npos) field.type += " *";
      std::int64_t elements = 1;
      for (std::size_t open = declarator.find('['); open != std::string::npos; open = declarator.find('[', open + 1)) {
        elements *= std::max<std::int64_t>(1, std::atoll(declarator.c_str() + open + 1));
      }
      fields.push_back({field.name, field.type, elements});
    }
  }
  return fields;
}

std::optional<std::string> device_side_source(std::string_view source) {
  const std::string text = without_character_literals(without_comments(source));
  if (text.find("R\"") != std::string::npos) return std::nullopt; // a raw string literal may hold anything
  const std::vector<bool> directive = directive_characters(text);
  const auto has_directive = [&](std::size_t from, std::size_t to) {
    return std::find(directive.begin() + static_cast<std::ptrdiff_t>(from),
                     directive.begin() + static_cast<std::ptrdiff_t>(to),
                     true) != directive.begin() + static_cast<std::ptrdiff_t>(to);
  };
  std::string device(source);
  int open_namespaces = 0;    // namespace and extern "C" blocks: their bodies are namespace scope
  std::size_t head_start = 0; // where the declaration being read began
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (directive[i]) continue;
    if (text[i] == ';') {
      head_start = i + 1;
    } else if (text[i] == '}') {
      if (open_namespaces-- == 0) return std::nullopt; // unbalanced
      head_start = i + 1;
    } else if (text[i] == '{') {
      while (head_start < i &&
             (directive[head_start] || std::isspace(static_cast<unsigned char>(text[head_start])) != 0))
        ++head_start;
      const std::string_view head = std::string_view(text).substr(head_start, i - head_start);
      const bool parameters = head.find('(') != std::string_view::npos;
      if (names_identifier(head, "namespace") || (names_identifier(head, "extern") && !parameters)) {
        ++open_namespaces;
        head_start = i + 1;
        continue;
      }
      std::size_t close = i;
      for (int depth = 0; close < text.size(); ++close) {
        if (directive[close]) continue;
        depth += text[close] == '{' ? 1 : text[close] == '}' ? -1 : 0;
        if (depth == 0) break;
      }
      if (close == text.size()) return std::nullopt; // unbalanced
      // A function definition: a parameter list, no initializer, no class key. A class or an
      // initializer goes on to its ';'.
      bool function = parameters && head.find('=') == std::string_view::npos;
      for (const std::string_view key : {"struct", "class", "union", "enum"})
        function = function && !names_identifier(head, key);
      if (function) {
        bool host_only = !has_directive(head_start, close);
        for (const std::string_view word : {"__global__", "__device__", "constexpr", "consteval", "extern"}) {
          host_only = host_only && !names_identifier(head, word);
        }
        if (host_only) {
          for (std::size_t at = head_start; at <= close; ++at) {
            if (device[at] != '\n') device[at] = ' ';
          }
        }
        head_start = close + 1;
      }
      i = close;
    }
  }
  if (open_namespaces != 0) return std::nullopt;
  return device;
}

std::string read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::vector<SourceParameter>> kernel_parameters(std::string_view source, std::string_view function) {
  const std::string text = without_comments(source);
  const std::optional<KernelDeclaration> declaration = find_kernel(text, function);
  if (!declaration) return std::nullopt;
  int depth = 0;
  for (std::size_t close = declaration->open; close < text.size(); ++close) {
    depth += text[close] == '(' ? 1 : text[close] == ')' ? -1 : 0;
    if (depth != 0) continue;
    std::vector<SourceParameter> parameters =
        split_parameters(std::string_view(text).substr(declaration->open + 1, close - declaration->open - 1));
    for (SourceParameter& parameter : parameters) {
      if (!parameter.pointer && !parameter.type.empty()) parameter.fields = struct_fields(source, parameter.type);
    }
    return parameters;
  }
  return std::nullopt;
}

std::optional<int> unguarded_define_line(std::string_view source, std::string_view name) {
  const std::string text = without_comments(source);
  // Per open #if: whether it guards `name` (#ifndef name, #if !defined(name)) on its current branch.
  std::vector<bool> guards;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string directive = trim(line);
    if (directive.empty() || directive[0] != '#') continue;
    std::istringstream words(directive.substr(1)); // "# define N 4" as well as "#define N 4"
    std::string word, first;
    words >> word >> first;
    std::string rest = first;
    for (std::string more; words >> more;) rest += more; // "!defined ( N )" -> "!defined(N)"
    if (word == "ifndef") guards.push_back(first == name);
    else if (word == "if")
      guards.push_back(rest == "!defined(" + std::string(name) + ")" || rest == "!defined" + std::string(name));
    else if (word == "ifdef") guards.push_back(false);
    else if ((word == "else" || word == "elif") && !guards.empty()) guards.back() = false;
    else if (word == "endif" && !guards.empty()) guards.pop_back();
    else if (word == "define" && first.substr(0, first.find('(')) == name &&
             std::ranges::none_of(guards, [](bool g) { return g; }))
      return number;
  }
  return std::nullopt;
}

std::optional<TemplateDeclaration> kernel_template(std::string_view source, std::string_view function) {
  const std::string text = without_comments(source);
  const std::optional<KernelDeclaration> declaration = find_kernel(text, function);
  if (!declaration) return std::nullopt;
  const std::string_view head =
      std::string_view(text).substr(declaration->head_start, declaration->name_at - declaration->head_start);
  const std::size_t keyword = head.find("template");
  const std::size_t open = head.find('<', keyword);
  if (keyword == std::string_view::npos || open == std::string_view::npos) return std::nullopt;
  TemplateDeclaration result;
  result.line = 1 + static_cast<int>(std::count(
                        text.begin(), text.begin() + static_cast<std::ptrdiff_t>(declaration->name_at), '\n'));
  int depth = 0;
  std::size_t start = open + 1;
  for (std::size_t i = open; i < head.size(); ++i) {
    depth += head[i] == '<' || head[i] == '(' ? 1 : head[i] == '>' || head[i] == ')' ? -1 : 0;
    const bool last = depth == 0;
    if ((head[i] == ',' && depth == 1) || last) {
      std::string parameter = trim(head.substr(start, i - start));
      parameter = trim(parameter.substr(0, parameter.find('=')));
      std::size_t name_start = parameter.size();
      while (name_start > 0 && is_identifier_char(parameter[name_start - 1])) --name_start;
      result.parameters.push_back(parameter.substr(name_start));
      start = i + 1;
    }
    if (last) break;
  }
  return result;
}

} // namespace cachewise::frontend
