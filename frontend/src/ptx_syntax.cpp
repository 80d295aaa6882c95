// Parsers of single PTX statements: instructions and their operands, variable declarations,
// function headers, literals.
#include <cctype>
#include <charconv>
#include <limits>

#include "cachewise/model.hpp"
#include "ptx_syntax.hpp"

namespace cachewise::frontend {
namespace {

[[noreturn]] void fail(int line, const std::string& message) {
  throw InputError("ptx:" + std::to_string(line) + ": " + message);
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

/// Splits at `separator` outside () [] {}.
std::vector<std::string_view> split_top_level(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  int nesting = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[' || c == '{') ++nesting;
    if (c == ')' || c == ']' || c == '}') --nesting;
    if (c == separator && nesting == 0) {
      parts.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  const std::string_view last = trim(text.substr(start));
  if (!last.empty() || !parts.empty()) parts.push_back(last);
  return parts;
}

std::vector<std::string> split_dots(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '.') {
      if (i > start) parts.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

bool is_special_register(std::string_view name) {
  for (std::string_view special :
       {"%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid", "%clock",
        "%clock64", "%clock_hi", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%lanemask_eq", "%lanemask_le",
        "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%dynamic_smem_size", "%total_smem_size", "%aggr_smem_size",
        "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank", "%cluster_nctarank",
        "%is_explicit_cluster",
        // shared memory the toolkit reserves (cooperative groups' multi-warp tiles)
        "%reserved_smem_offset_begin", "%reserved_smem_offset_end", "%reserved_smem_offset_cap",
        "%reserved_smem_offset_0", "%reserved_smem_offset_1"}) {
    if (name == special) return true;
    if (name.size() == special.size() + 2 && name.substr(0, special.size()) == special && name[special.size()] == '.')
      return true;
  }
  return false;
}

bool is_float_literal(std::string_view text) {
  return text.size() > 2 && text[0] == '0' && (text[1] == 'f' || text[1] == 'F' || text[1] == 'd' || text[1] == 'D');
}

/// The bits of a floating-point literal: 0f and a float's 8 hex digits, or 0d and a double's 16.
std::int64_t parse_float_bits(std::string_view text, int line) {
  const std::string_view digits = text.substr(2);
  const std::size_t expected = text[1] == 'f' || text[1] == 'F' ? 8 : 16;
  std::uint64_t bits = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), bits, 16);
  if (digits.size() != expected || error != std::errc() || end != digits.data() + digits.size()) {
    fail(line, "malformed floating-point literal '" + std::string(text) + "' (0f and 8 hex digits, or 0d and 16)");
  }
  return static_cast<std::int64_t>(bits);
}

PtxOperand parse_register_or_special(std::string_view text, int line, const RegisterLookup& registers) {
  PtxOperand operand;
  const std::size_t bar = text.find('|');
  const std::string name(text.substr(0, bar));
  const int reg = registers(name);
  if (reg >= 0) {
    operand.kind = PtxOperand::Kind::reg;
    operand.reg = reg;
    if (bar != std::string_view::npos) {
      operand.second_reg = registers(std::string(text.substr(bar + 1)));
      if (operand.second_reg < 0) fail(line, "undeclared register '" + std::string(text.substr(bar + 1)) + "'");
    }
    return operand;
  }
  if (!is_special_register(name)) fail(line, "undeclared register '" + name + "'");
  operand.kind = PtxOperand::Kind::special;
  operand.symbol = name;
  return operand;
}

/// "sym", "sym+8", "%rd1+-256", "%r3-4", "64"
void parse_base_and_offset(std::string_view text, int line, const RegisterLookup& registers, PtxOperand& operand) {
  std::size_t split = std::string_view::npos;
  for (std::size_t i = 1; i < text.size(); ++i) {
    if (text[i] == '+' || text[i] == '-') {
      split = i;
      break;
    }
  }
  const std::string_view base = trim(text.substr(0, split));
  if (split != std::string_view::npos) {
    std::string_view offset = trim(text.substr(split));
    if (offset[0] == '+') offset = trim(offset.substr(1));
    operand.imm = parse_integer(offset, line);
  }
  if (base.empty()) fail(line, "empty address");
  if (base[0] == '%') {
    const PtxOperand reg = parse_register_or_special(base, line, registers);
    if (reg.kind != PtxOperand::Kind::reg)
      fail(line, "special register '" + std::string(base) + "' used as an address");
    operand.reg = reg.reg;
  } else if (std::isdigit(static_cast<unsigned char>(base[0])) || base[0] == '-') {
    operand.imm += parse_integer(base, line);
  } else {
    operand.symbol = std::string(base);
  }
}

PtxOperand parse_operand(std::string_view text, int line, const RegisterLookup& registers) {
  text = trim(text);
  if (text.empty()) fail(line, "empty operand");
  PtxOperand operand;
  if (text == "_") {
    operand.kind = PtxOperand::Kind::sink;
  } else if (text[0] == '!') {
    operand = parse_operand(text.substr(1), line, registers);
    operand.negated = true;
  } else if (text[0] == '[') {
    if (text.back() != ']') fail(line, "malformed address '" + std::string(text) + "'");
    operand.kind = PtxOperand::Kind::address;
    const std::string_view inside = trim(text.substr(1, text.size() - 2));
    if (inside.find(',') != std::string_view::npos)
      operand.symbol = std::string(inside); // texture / surface forms, which the extractor rejects by opcode
    else parse_base_and_offset(inside, line, registers, operand);
  } else if (text[0] == '{') {
    if (text.back() != '}') fail(line, "malformed vector '" + std::string(text) + "'");
    operand.kind = PtxOperand::Kind::vector;
    for (std::string_view element : split_top_level(text.substr(1, text.size() - 2), ','))
      operand.elements.push_back(parse_operand(element, line, registers));
  } else if (text[0] == '%') {
    operand = parse_register_or_special(text, line, registers);
  } else if (is_float_literal(text)) {
    operand.kind = PtxOperand::Kind::imm_float;
    operand.imm = parse_float_bits(text, line);
  } else if (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-' || text[0] == '+') {
    operand.kind = PtxOperand::Kind::imm_int;
    operand.imm = parse_integer(text, line);
  } else {
    operand.kind = PtxOperand::Kind::symbol;
    parse_base_and_offset(text, line, registers, operand);
  }
  return operand;
}

std::int64_t parse_dimensions(std::string_view text, int line, bool& is_extern_array) {
  std::int64_t elements = 1;
  for (std::size_t open = text.find('['); open != std::string_view::npos; open = text.find('[', open + 1)) {
    const std::size_t close = text.find(']', open);
    if (close == std::string_view::npos) fail(line, "malformed array declaration");
    const std::string_view count = trim(text.substr(open + 1, close - open - 1));
    if (count.empty()) {
      is_extern_array = true;
      return 0;
    }
    const std::int64_t n = parse_integer(count, line);
    if (n < 0 || n > (std::int64_t{1} << 40) / std::max<std::int64_t>(elements, 1))
      fail(line, "array size out of range");
    elements *= n;
  }
  return elements;
}

} // namespace

int type_bytes(std::string_view type) {
  if (type == "pred") return 1;
  if (type.size() < 2) return 0;
  const char kind = type[0];
  if (kind != 'b' && kind != 'u' && kind != 's' && kind != 'f') return 0;
  if (type == "f16x2" || type == "bf16x2") return 4;
  if (type == "bf16") return 2;
  if (type == "e4m3x2" || type == "e5m2x2") return 2;
  const std::string_view digits = type.substr(1);
  if (digits == "8") return 1;
  if (digits == "16") return 2;
  if (digits == "32") return 4;
  if (digits == "64") return 8;
  if (digits == "128") return 16;
  return 0;
}

std::int64_t parse_integer(std::string_view text, int line) {
  text = trim(text);
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (!text.empty() && (text.back() == 'U' || text.back() == 'u')) text.remove_suffix(1);
  int base = 10;
  if (text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  } else if (text.size() > 1 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) {
    base = 2;
    text.remove_prefix(2);
  } else if (text.size() > 1 && text[0] == '0') {
    base = 8;
    text.remove_prefix(1);
  }
  if (text.empty()) fail(line, "malformed integer");
  std::uint64_t value = 0;
  for (char c : text) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0 || digit >= base) fail(line, "malformed integer '" + std::string(text) + "'");
    if (value > (std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(digit)) /
                    static_cast<std::uint64_t>(base))
      fail(line, "integer out of range");
    value = value * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(digit);
  }
  const auto signed_value = static_cast<std::int64_t>(value); // PTX literals wrap to 64 bits
  return negative ? -signed_value : signed_value;
}

PtxInstruction parse_instruction(std::string_view text, int line, const RegisterLookup& registers) {
  PtxInstruction instruction;
  instruction.ptx_line = line;
  for (char c : trim(text)) { // one space between words, for messages
    const bool space = std::isspace(static_cast<unsigned char>(c));
    if (!space) instruction.text += c;
    else if (!instruction.text.empty() && instruction.text.back() != ' ') instruction.text += ' ';
  }
  std::string_view rest = trim(text);
  if (rest[0] == '@') {
    std::size_t end = 1;
    while (end < rest.size() && !std::isspace(static_cast<unsigned char>(rest[end]))) ++end;
    std::string_view guard = rest.substr(1, end - 1);
    if (!guard.empty() && guard[0] == '!') {
      instruction.guard_negated = true;
      guard.remove_prefix(1);
    }
    instruction.guard_reg = registers(std::string(guard));
    if (instruction.guard_reg < 0) fail(line, "undeclared guard predicate '" + std::string(guard) + "'");
    rest = trim(rest.substr(end));
  }
  std::size_t end = 0;
  while (end < rest.size() && !std::isspace(static_cast<unsigned char>(rest[end]))) ++end;
  instruction.opcode = split_dots(rest.substr(0, end));
  if (instruction.opcode.empty()) fail(line, "missing opcode");
  const std::string_view operands = trim(rest.substr(end));
  if (!operands.empty()) {
    for (std::string_view operand : split_top_level(operands, ','))
      instruction.operands.push_back(parse_operand(operand, line, registers));
  }
  return instruction;
}

PtxVariable parse_variable(std::string_view text, int line) {
  PtxVariable variable;
  const std::string_view declaration = trim(text.substr(0, text.find('=')));
  std::vector<std::string_view> words;
  for (std::size_t i = 0; i < declaration.size();) {
    while (i < declaration.size() && std::isspace(static_cast<unsigned char>(declaration[i]))) ++i;
    std::size_t j = i;
    while (j < declaration.size() && !std::isspace(static_cast<unsigned char>(declaration[j]))) ++j;
    if (j > i) words.push_back(declaration.substr(i, j - i));
    i = j;
  }
  int element_bytes = 0;
  std::int64_t vector = 1;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    if (word == ".extern") variable.is_extern = true;
    else if (word == ".shared" || word == ".local" || word == ".global" || word == ".const")
      variable.space = std::string(word.substr(1));
    else if (word == ".align" && i + 1 < words.size()) variable.align = parse_integer(words[++i], line);
    else if (word == ".v2" || word == ".v4" || word == ".v8") vector = word[2] - '0';
    else if (word[0] == '.' && type_bytes(word.substr(1)) > 0) element_bytes = type_bytes(word.substr(1));
    else if (word[0] != '.') variable.name = std::string(word.substr(0, word.find('[')));
  }
  if (variable.name.empty() || element_bytes == 0)
    fail(line, "malformed variable declaration '" + std::string(trim(text)) + "'");
  bool extern_array = false;
  const std::int64_t elements = parse_dimensions(declaration, line, extern_array);
  variable.bytes = extern_array ? 0 : elements * element_bytes * vector;
  variable.is_extern = variable.is_extern || extern_array;
  if (variable.align < 1) variable.align = element_bytes;
  return variable;
}

PtxFunction parse_function_header(std::string_view text, int line) {
  PtxFunction function;
  function.is_entry = text.find(".entry") != std::string_view::npos;
  std::string_view rest = text.substr(text.find(function.is_entry ? ".entry" : ".func") + (function.is_entry ? 6 : 5));
  rest = trim(rest);
  if (!rest.empty() && rest[0] == '(') { // .func (.param .b32 func_retval0) name(...)
    const std::size_t close = rest.find(')');
    if (close == std::string_view::npos) fail(line, "malformed function header");
    rest = trim(rest.substr(close + 1));
  }
  std::size_t name_end = 0;
  while (name_end < rest.size() && !std::isspace(static_cast<unsigned char>(rest[name_end])) && rest[name_end] != '(')
    ++name_end;
  function.name = std::string(rest.substr(0, name_end));
  if (function.name.empty()) fail(line, "function without a name");
  const std::size_t open = rest.find('(');
  if (open == std::string_view::npos) return function;
  const std::size_t close = rest.find(')', open);
  if (close == std::string_view::npos) fail(line, "parameter list of '" + function.name + "' not closed");
  for (std::string_view declaration : split_top_level(rest.substr(open + 1, close - open - 1), ',')) {
    if (declaration.empty()) continue;
    PtxParam param;
    std::int64_t element_bytes = 0;
    std::size_t i = 0;
    std::vector<std::string_view> words;
    while (i < declaration.size()) {
      while (i < declaration.size() && std::isspace(static_cast<unsigned char>(declaration[i]))) ++i;
      std::size_t j = i;
      while (j < declaration.size() && !std::isspace(static_cast<unsigned char>(declaration[j]))) ++j;
      if (j > i) words.push_back(declaration.substr(i, j - i));
      i = j;
    }
    for (std::size_t w = 0; w < words.size(); ++w) {
      if (words[w] == ".align" && w + 1 < words.size()) param.align = parse_integer(words[++w], line);
      else if (words[w][0] == '.' && type_bytes(words[w].substr(1)) > 0) {
        param.type = std::string(words[w].substr(1));
        element_bytes = type_bytes(param.type);
      } else if (words[w][0] != '.') param.name = std::string(words[w].substr(0, words[w].find('[')));
    }
    if (param.name.empty() || element_bytes == 0) fail(line, "malformed parameter '" + std::string(declaration) + "'");
    bool unsized = false;
    param.bytes = element_bytes * parse_dimensions(declaration, line, unsized);
    if (param.align < element_bytes) param.align = element_bytes;
    function.params.push_back(std::move(param));
  }
  return function;
}

} // namespace cachewise::frontend
