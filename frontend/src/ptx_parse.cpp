// PTX text -> PtxModule: a statement scanner (statements end at ';', labels at ':', function
// headers at '{', line directives at the end of the line) and the per-statement parsers.
#include <cctype>
#include <optional>
#include <unordered_map>

#include "cachewise/frontend/compile.hpp"
#include "cachewise/frontend/ptx.hpp"
#include "cachewise/model.hpp"
#include "ptx_syntax.hpp"

namespace cachewise::frontend {
namespace {

struct Statement {
  std::string text;
  char terminator = ';'; ///< ';', ':' (label), '{' (header or scope), '}' (scope end), '\n' (line directive), 0 (eof)
  int line = 0;
};

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}

bool contains_token(std::string_view text, std::string_view token) {
  for (std::size_t at = text.find(token); at != std::string_view::npos; at = text.find(token, at + 1)) {
    const bool left = at == 0 || std::isspace(static_cast<unsigned char>(text[at - 1]));
    const std::size_t end = at + token.size();
    const bool right = end == text.size() || !is_identifier_char(text[end]);
    if (left && right) return true;
  }
  return false;
}

/// A function or .section header runs up to its body's '{'; everything else that meets '{'
/// holds it as an operand (a vector, an initializer).
bool is_header(std::string_view text) {
  return contains_token(text, ".entry") || contains_token(text, ".func") || contains_token(text, ".section");
}

class Scanner {
public:
  explicit Scanner(std::string_view text) : text_(text) {}

  Statement next() {
    skip_space();
    Statement statement;
    statement.line = line_;
    if (pos_ >= text_.size()) {
      statement.terminator = 0;
      return statement;
    }
    const std::string_view rest = text_.substr(pos_);
    if (rest[0] == '{' || rest[0] == '}') {
      statement.terminator = rest[0];
      ++pos_;
      return statement;
    }
    for (std::string_view directive : {".loc", ".file", ".version", ".target", ".address_size"}) {
      if (starts_with(rest, directive) && rest.size() > directive.size() &&
          std::isspace(static_cast<unsigned char>(rest[directive.size()]))) {
        const std::size_t end = text_.find('\n', pos_);
        statement.text =
            std::string(text_.substr(pos_, end == std::string_view::npos ? std::string_view::npos : end - pos_));
        pos_ = end == std::string_view::npos ? text_.size() : end;
        statement.terminator = '\n';
        return statement;
      }
    }
    read_until_end(statement);
    return statement;
  }

  /// Skips a body: everything up to the '}' that closes the `depth`-th '{' read so far.
  void skip_block(int depth = 1) {
    while (pos_ < text_.size() && depth > 0) {
      const char c = text_[pos_++];
      if (c == '\n') ++line_;
      if (c == '{') ++depth;
      if (c == '}') --depth;
    }
  }

private:
  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (text_.substr(pos_, 2) == "//") {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (text_.substr(pos_, 2) == "/*") {
        const std::size_t end = text_.find("*/", pos_ + 2);
        const std::size_t stop = end == std::string_view::npos ? text_.size() : end + 2;
        for (std::size_t i = pos_; i < stop; ++i) line_ += text_[i] == '\n';
        pos_ = stop;
      } else {
        return;
      }
    }
  }

  void read_until_end(Statement& statement) {
    int nesting = 0; // ( [ { inside the statement
    bool in_string = false;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (in_string) {
        in_string = c != '"';
      } else if (c == '"') {
        in_string = true;
      } else if (text_.substr(pos_, 2) == "//") {
        skip_space();
        statement.text += ' ';
        continue;
      } else if (c == '(' || c == '[') {
        ++nesting;
      } else if (c == ')' || c == ']') {
        --nesting;
      } else if (c == '{') {
        if (nesting == 0 && is_header(statement.text)) {
          ++pos_;
          statement.terminator = '{';
          return;
        }
        ++nesting;
      } else if (c == '}') {
        --nesting;
      } else if (c == ';' && nesting <= 0) {
        ++pos_;
        statement.terminator = ';';
        return;
      } else if (c == ':' && nesting == 0 && is_label(statement.text) && text_.substr(pos_, 2) != "::") {
        ++pos_;
        statement.terminator = ':';
        return;
      }
      if (c == '\n') ++line_;
      statement.text += c == '\n' || c == '\t' ? ' ' : c;
      ++pos_;
    }
    throw InputError("ptx:" + std::to_string(statement.line) + ": statement not terminated by ';'");
  }

  static bool is_label(std::string_view text) {
    if (text.empty()) return false;
    for (char c : text)
      if (!is_identifier_char(c)) return false;
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

[[noreturn]] void fail(int line, const std::string& message) {
  throw InputError("ptx:" + std::to_string(line) + ": " + message);
}

constexpr std::size_t kMaxRegisters = 65536;

/// Registers of one function, with the nested scopes that inline assembly opens.
class RegisterScope {
public:
  explicit RegisterScope(PtxFunction& function) : function_(function) {}
  void open() { undo_.emplace_back(); }
  void close() {
    for (auto it = undo_.back().rbegin(); it != undo_.back().rend(); ++it) {
      if (it->second < 0) names_.erase(it->first);
      else names_[it->first] = it->second;
    }
    undo_.pop_back();
  }
  void declare(const std::string& name, const std::string& type, int line) {
    // Real kernels declare a few thousand; the extractor keeps 32 lanes of each per warp.
    if (function_.registers.size() >= kMaxRegisters)
      fail(line, "more than " + std::to_string(kMaxRegisters) + " registers declared in '" + function_.name + "'");
    const auto existing = names_.find(name);
    if (!undo_.empty()) undo_.back().emplace_back(name, existing == names_.end() ? -1 : existing->second);
    names_[name] = static_cast<int>(function_.registers.size());
    function_.registers.push_back({name, type});
  }
  int find(const std::string& name) const {
    const auto it = names_.find(name);
    return it == names_.end() ? -1 : it->second;
  }

private:
  PtxFunction& function_;
  std::unordered_map<std::string, int> names_;
  std::vector<std::vector<std::pair<std::string, int>>> undo_;
};

/// ".reg .b32 %r<24>;" or ".reg .pred %p1, %p2;"
void parse_register_declaration(const std::vector<std::string>& words, RegisterScope& scope, int line) {
  if (words.size() < 3) fail(line, "malformed .reg declaration");
  std::string type;
  std::size_t at = 1;
  for (; at < words.size() && words[at][0] == '.'; ++at) type = words[at].substr(1);
  for (; at < words.size(); ++at) {
    std::string name = words[at];
    if (!name.empty() && name.back() == ',') name.pop_back();
    if (name.empty()) continue;
    const std::size_t open = name.find('<');
    if (open == std::string::npos) {
      scope.declare(name, type, line);
      continue;
    }
    const std::int64_t count = parse_integer(name.substr(open + 1, name.size() - open - 2), line);
    if (count < 0 || count > static_cast<std::int64_t>(kMaxRegisters))
      fail(line, "register count out of range in '" + name + "'");
    for (std::int64_t i = 0; i < count; ++i) scope.declare(name.substr(0, open) + std::to_string(i), type, line);
  }
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

/// ".loc 1 40 3" or ".loc 2 440 9, function_name $L__info_string0, inlined_at 1 40 3"
void parse_loc(std::string_view text, int line, PtxInstruction& location) {
  const std::vector<std::string> words = split_words(text);
  if (words.size() < 3) fail(line, "malformed .loc");
  const auto number = [&](const std::string& word) {
    std::string digits = word;
    if (!digits.empty() && digits.back() == ',') digits.pop_back();
    return static_cast<int>(parse_integer(digits, line));
  };
  const int source_line = number(words[2]);
  if (source_line == 0) return; // compiler-generated code keeps the previous line
  location.source_file = number(words[1]);
  location.source_line = source_line;
  location.inlined_at_file = 0;
  location.inlined_at_line = 0;
  for (std::size_t i = 3; i + 2 < words.size(); ++i) {
    if (words[i] == "inlined_at") {
      location.inlined_at_file = number(words[i + 1]);
      location.inlined_at_line = number(words[i + 2]);
    }
  }
}

/// ".file 1 "/path/x.cu"" or ".file 1 "x.cu", 1700000000, 1234"
void parse_file(std::string_view text, int line, PtxModule& module) {
  const std::size_t open = text.find('"');
  const std::size_t close = text.rfind('"');
  if (open == std::string_view::npos || close <= open) fail(line, "malformed .file");
  const std::vector<std::string> words = split_words(text.substr(0, open));
  if (words.size() < 2) fail(line, "malformed .file");
  module.files[static_cast<int>(parse_integer(words[1], line))] = std::string(text.substr(open + 1, close - open - 1));
}

class ModuleParser {
public:
  ModuleParser(std::string_view text, const PtxBodyFilter& parse_body) : scanner_(text), parse_body_(parse_body) {}

  PtxModule parse() {
    for (Statement statement = scanner_.next(); statement.terminator != 0; statement = scanner_.next()) {
      if (statement.terminator == '\n') {
        line_directive(statement);
      } else if (statement.terminator == '{' && statement.text.empty()) {
        fail(statement.line, "'{' outside a function");
      } else if (statement.terminator == '{' && contains_token(statement.text, ".section")) {
        scanner_.skip_block();
      } else if (statement.terminator == '{') {
        function(statement);
      } else if (statement.terminator == ';') {
        module_statement(statement);
      } else {
        fail(statement.line, "unexpected '" + std::string(1, statement.terminator) + "' at module scope");
      }
    }
    if (failure_) { // named once the .file table (at the module's end) is known
      const std::string where = source_location(module_, failure_->location);
      throw InputError(entry_instance_name(failure_->function) + (where.starts_with("ptx:") ? "" : " (" + where + ")") +
                       ": " + failure_->message);
    }
    return std::move(module_);
  }

private:
  struct BodyFailure {
    std::string function;
    PtxInstruction location; ///< the latest .loc before the failing statement
    std::string message;
  };

  void line_directive(const Statement& statement) {
    const std::vector<std::string> words = split_words(statement.text);
    if (words.empty()) return;
    if (words[0] == ".file") parse_file(statement.text, statement.line, module_);
    else if (words[0] == ".loc") parse_loc(statement.text, statement.line, location_);
    else if (words[0] == ".version" && words.size() > 1) module_.version = words[1];
    else if (words[0] == ".target" && words.size() > 1) module_.target = words[1];
    else if (words[0] == ".address_size" && words.size() > 1)
      module_.address_size = static_cast<int>(parse_integer(words[1], statement.line));
  }

  void module_statement(const Statement& statement) {
    const std::vector<std::string> words = split_words(statement.text);
    if (words.empty() || contains_token(statement.text, ".func") || contains_token(statement.text, ".entry"))
      return; // prototypes
    for (const std::string& word : words) {
      if (word == ".shared" || word == ".global" || word == ".const" || word == ".local") {
        module_.variables.push_back(parse_variable(statement.text, statement.line));
        return;
      }
    }
  }

  void function(const Statement& header) {
    PtxFunction function = parse_function_header(header.text, header.line);
    if (parse_body_ && !parse_body_(function.name)) {
      scanner_.skip_block();
      function.body_parsed = false;
      module_.functions.push_back(std::move(function));
      return;
    }
    location_ = {}; // a function's line info starts with its own first .loc
    RegisterScope scope(function);
    int depth = 1;
    while (depth > 0) {
      const Statement statement = scanner_.next();
      switch (statement.terminator) {
      case 0: fail(statement.line, "function '" + function.name + "' not closed by '}'");
      case '{':
        ++depth;
        scope.open();
        break;
      case '}':
        if (--depth > 0) scope.close();
        break;
      case ':': function.labels[statement.text] = static_cast<int>(function.instructions.size()); break;
      case '\n': line_directive(statement); break;
      default: try { body_statement(statement, function, scope);
        } catch (const InputError& error) {
          if (!failure_) failure_ = BodyFailure{function.name, location_, error.what()};
          scanner_.skip_block(depth);
          depth = 0;
        }
      }
    }
    module_.functions.push_back(std::move(function));
  }

  void body_statement(const Statement& statement, PtxFunction& function, RegisterScope& scope) {
    if (statement.text.empty()) return;
    if (statement.text[0] != '.') {
      PtxInstruction instruction = parse_instruction(statement.text, statement.line, scope_lookup(scope));
      instruction.source_file = location_.source_file;
      instruction.source_line = location_.source_line;
      instruction.inlined_at_file = location_.inlined_at_file;
      instruction.inlined_at_line = location_.inlined_at_line;
      function.instructions.push_back(std::move(instruction));
      return;
    }
    const std::vector<std::string> words = split_words(statement.text);
    if (words[0] == ".reg") parse_register_declaration(words, scope, statement.line);
    else if (words[0] == ".shared" || words[0] == ".local" || words[0] == ".global" || words[0] == ".const")
      function.variables.push_back(parse_variable(statement.text, statement.line));
    // .pragma, .param (call sequences) and the like carry nothing the extractor needs
  }

  static RegisterLookup scope_lookup(const RegisterScope& scope) {
    return [&scope](const std::string& name) { return scope.find(name); };
  }

  Scanner scanner_;
  const PtxBodyFilter& parse_body_;
  std::optional<BodyFailure> failure_;
  PtxModule module_;
  PtxInstruction location_; ///< only its source fields: the latest .loc
};

} // namespace

PtxModule parse_ptx(std::string text, const PtxBodyFilter& parse_body) {
  return ModuleParser(text, parse_body).parse();
}

std::vector<std::string> entry_names(const PtxModule& module) {
  std::vector<std::string> names;
  for (const PtxFunction& function : module.functions)
    if (function.is_entry) names.push_back(function.name);
  return names;
}

namespace {
std::string file_name(const PtxModule& module, int file) {
  const auto it = module.files.find(file);
  if (it == module.files.end()) return {};
  const std::size_t slash = it->second.find_last_of('/');
  return slash == std::string::npos ? it->second : it->second.substr(slash + 1);
}

/// Code inlined from the toolkit's headers (intrinsics) is reported at the user's call site.
bool is_toolkit_file(const PtxModule& module, int file) {
  const auto it = module.files.find(file);
  return it != module.files.end() &&
         (it->second.find("/cuda") != std::string::npos || it->second.find("/targets/") != std::string::npos);
}
} // namespace

std::string source_location(const PtxModule& module, const PtxInstruction& instruction) {
  int file = instruction.source_file;
  int line = instruction.source_line;
  if (instruction.inlined_at_line > 0 && is_toolkit_file(module, file)) {
    file = instruction.inlined_at_file;
    line = instruction.inlined_at_line;
  }
  const std::string name = file_name(module, file);
  if (name.empty() || line <= 0) return "ptx:" + std::to_string(instruction.ptx_line);
  return name + ":" + std::to_string(line);
}

} // namespace cachewise::frontend
