// A small recursive-descent parser rather than a library: Debian's expression libraries
// (muparser, muparserx, exprtk) evaluate in double precision, so integer division, `%` and
// overflow would differ from the C++ the kernel computes; launch sizes need exact int64.
#include "cachewise/frontend/expression.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "cachewise/model.hpp"

namespace cachewise::frontend {

struct Expression::Node {
  enum class Kind { number, name, unary, binary, call };
  Kind kind = Kind::number;
  std::int64_t value = 0;
  std::string text; ///< the name, operator or function
  std::vector<std::shared_ptr<const Node>> operands;
  int depth = 1; ///< levels of the tree below and including this node
};

namespace {

using NodePtr = std::shared_ptr<const Expression::Node>;
using Kind = Expression::Node::Kind;

/// How deep parentheses, unary operators, calls and chained operators may nest: clang's default
/// -fbracket-depth. The parser and the evaluator recurse once per level, so a bound keeps the
/// stack small whatever the text.
constexpr int kMaxNesting = 256;

class Parser {
public:
  Parser(std::string_view text, const std::string& context) : text_(text), context_(context) {}

  NodePtr parse_whole() {
    NodePtr node = parse_or();
    skip_space();
    if (pos_ < text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return node;
  }

private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(context_ + ": " + what + " at column " + std::to_string(pos_ + 1) + " of '" + shown(text_) + "'");
  }

  /// The text in a message: whole up to 80 characters, else its first 60 and "...".
  static std::string shown(std::string_view text) {
    constexpr std::size_t kMaxShown = 80;
    return text.size() <= kMaxShown ? std::string(text) : std::string(text.substr(0, 60)) + "...";
  }

  /// One level deeper for as long as it lives; past kMaxNesting the parse fails.
  class Level {
  public:
    explicit Level(Parser& parser) : parser_(parser) {
      if (++parser_.nesting_ > kMaxNesting) parser_.fail_nesting();
    }
    ~Level() { --parser_.nesting_; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;

  private:
    Parser& parser_;
  };

  [[noreturn]] void fail_nesting() const { fail("nested deeper than " + std::to_string(kMaxNesting) + " levels"); }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    // "<" must not swallow the first half of "<=", nor "=" of "==" etc.
    if (token.size() == 1 && pos_ + 1 < text_.size() &&
        std::string_view("<>=!").find(token[0]) != std::string_view::npos && text_[pos_ + 1] == '=')
      return false;
    if (token == "!" && pos_ + 1 < text_.size() && text_[pos_ + 1] == '=') return false;
    pos_ += token.size();
    return true;
  }

  NodePtr make(Kind kind, std::string text, std::vector<NodePtr> operands, std::int64_t value = 0) const {
    auto node = std::make_shared<Expression::Node>();
    node->kind = kind;
    node->text = std::move(text);
    node->operands = std::move(operands);
    node->value = value;
    for (const NodePtr& operand : node->operands) node->depth = std::max(node->depth, operand->depth + 1);
    // "1 + 1 + ... + 1" nests no parenthesis, yet its tree is as deep as it has operators.
    if (node->depth > kMaxNesting) fail_nesting();
    return node;
  }

  template <typename Next>
  NodePtr parse_binary(std::initializer_list<std::string_view> ops, Next next) {
    NodePtr left = (this->*next)();
    for (;;) {
      auto op = std::find_if(ops.begin(), ops.end(), [&](std::string_view o) { return accept(o); });
      if (op == ops.end()) return left;
      left = make(Kind::binary, std::string(*op), {left, (this->*next)()});
    }
  }

  NodePtr parse_or() { return parse_binary({"||"}, &Parser::parse_and); }
  NodePtr parse_and() { return parse_binary({"&&"}, &Parser::parse_comparison); }
  NodePtr parse_comparison() { return parse_binary({"==", "!=", "<=", ">=", "<", ">"}, &Parser::parse_sum); }
  NodePtr parse_sum() { return parse_binary({"+", "-"}, &Parser::parse_product); }
  NodePtr parse_product() { return parse_binary({"*", "/", "%"}, &Parser::parse_unary); }

  NodePtr parse_unary() {
    for (std::string_view op : {"-", "+", "!"}) {
      if (!accept(op)) continue;
      const Level level(*this);
      return make(Kind::unary, std::string(op), {parse_unary()});
    }
    return parse_primary();
  }

  NodePtr parse_primary() {
    skip_space();
    if (pos_ >= text_.size()) fail("expected a value");
    if (accept("(")) {
      const Level level(*this);
      NodePtr inner = parse_or();
      if (!accept(")")) fail("expected ')'");
      return inner;
    }
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) return parse_number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return parse_name_or_call();
    fail("unexpected '" + std::string(1, c) + "'");
  }

  NodePtr parse_number() {
    std::int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_] - '0';
      if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, digit, &value))
        fail("integer literal overflows 64 bits");
      ++pos_;
    }
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      fail("malformed number");
    return make(Kind::number, {}, {}, value);
  }

  NodePtr parse_name_or_call() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    if (!accept("(")) return make(Kind::name, std::move(name), {});
    if (name != "min" && name != "max" && name != "ceil_div")
      fail("unknown function '" + name + "' (known: ceil_div, max, min)");
    const Level level(*this);
    std::vector<NodePtr> arguments{parse_or()};
    while (accept(",")) arguments.push_back(parse_or());
    if (!accept(")")) fail("expected ')' after the arguments of " + name);
    if (name == "ceil_div" && arguments.size() != 2)
      fail("ceil_div takes 2 arguments, got " + std::to_string(arguments.size()));
    if (arguments.size() < 2) fail(name + " takes at least 2 arguments");
    return make(Kind::call, std::move(name), std::move(arguments));
  }

  std::string_view text_;
  const std::string& context_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
};

class Evaluator {
public:
  Evaluator(const Bindings& bindings, const Expression& expression, std::string_view extra_name = {},
            std::int64_t extra_value = 0)
      : bindings_(bindings), expression_(expression), extra_name_(extra_name), extra_value_(extra_value) {}

  std::int64_t operator()(const Expression::Node& node) const {
    switch (node.kind) {
    case Kind::number: return node.value;
    case Kind::name: return lookup(node.text);
    case Kind::unary: return unary(node);
    case Kind::binary: return binary(node.text, (*this)(*node.operands[0]), node.operands[1]);
    case Kind::call: return call(node);
    }
    return 0;
  }

private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(expression_.context() + ": " + what + " in '" + expression_.text() + "'");
  }

  std::int64_t lookup(const std::string& name) const {
    if (!extra_name_.empty() && name == extra_name_) return extra_value_;
    if (auto it = bindings_.find(name); it != bindings_.end()) return it->second;
    std::string known;
    for (const auto& [key, value] : bindings_) known += (known.empty() ? "" : ", ") + key;
    if (!extra_name_.empty()) known += (known.empty() ? "" : ", ") + std::string(extra_name_);
    throw InputError(expression_.context() + ": unknown name '" + name +
                     "' (known: " + (known.empty() ? "none" : known) + ")");
  }

  std::int64_t unary(const Expression::Node& node) const {
    const std::int64_t operand = (*this)(*node.operands[0]);
    if (node.text == "!") return operand == 0 ? 1 : 0;
    if (node.text == "+") return operand;
    std::int64_t result = 0;
    if (__builtin_sub_overflow(std::int64_t{0}, operand, &result)) fail("integer overflow");
    return result;
  }

  std::int64_t binary(const std::string& op, std::int64_t a, const NodePtr& right) const {
    // && and || short-circuit like C++, so "B != 0 && A / B > 1" never divides by zero.
    if (op == "&&") return a != 0 && (*this)(*right) != 0 ? 1 : 0;
    if (op == "||") return a != 0 || (*this)(*right) != 0 ? 1 : 0;
    return arithmetic(op, a, (*this)(*right));
  }

  std::int64_t arithmetic(const std::string& op, std::int64_t a, std::int64_t b) const {
    std::int64_t result = 0;
    bool overflow = false;
    if (op == "+") overflow = __builtin_add_overflow(a, b, &result);
    else if (op == "-") overflow = __builtin_sub_overflow(a, b, &result);
    else if (op == "*") overflow = __builtin_mul_overflow(a, b, &result);
    else if (op == "/" || op == "%") {
      if (b == 0) fail("division by zero");
      if (a == INT64_MIN && b == -1) fail("integer overflow");
      result = op == "/" ? a / b : a % b;
    } else if (op == "==") result = a == b;
    else if (op == "!=") result = a != b;
    else if (op == "<") result = a < b;
    else if (op == "<=") result = a <= b;
    else if (op == ">") result = a > b;
    else if (op == ">=") result = a >= b;
    if (overflow) fail("integer overflow");
    return result;
  }

  std::int64_t call(const Expression::Node& node) const {
    std::vector<std::int64_t> values;
    for (const auto& operand : node.operands) values.push_back((*this)(*operand));
    if (node.text == "min") return *std::min_element(values.begin(), values.end());
    if (node.text == "max") return *std::max_element(values.begin(), values.end());
    // ceil_div(a, b) for b > 0: a / b rounded up; a negative divisor is almost surely a mistake.
    const std::int64_t a = values[0], b = values[1];
    if (b == 0) fail("division by zero");
    if (b < 0) fail("ceil_div divisor must be positive, got " + std::to_string(b));
    return a / b + (a % b > 0 ? 1 : 0);
  }

  const Bindings& bindings_;
  const Expression& expression_;
  std::string_view extra_name_;
  std::int64_t extra_value_ = 0;
};

NodePtr substitute(const NodePtr& node, const Bindings& bindings) {
  if (node->kind == Kind::name) {
    const auto found = bindings.find(node->text);
    if (found == bindings.end()) return node;
    auto number = std::make_shared<Expression::Node>();
    number->value = found->second;
    return number;
  }
  if (node->operands.empty()) return node;
  auto copy = std::make_shared<Expression::Node>(*node);
  for (NodePtr& operand : copy->operands) operand = substitute(operand, bindings);
  return copy;
}

void collect_names(const Expression::Node& node, std::set<std::string>& names) {
  if (node.kind == Kind::name) names.insert(node.text);
  for (const auto& operand : node.operands) collect_names(*operand, names);
}

} // namespace

Expression Expression::parse(std::string_view text, std::string context) {
  Expression expression;
  expression.text_ = std::string(text);
  expression.context_ = std::move(context);
  expression.root_ = Parser(expression.text_, expression.context_).parse_whole();
  return expression;
}

std::int64_t Expression::evaluate(const Bindings& bindings) const {
  if (!root_) throw InputError(context_ + ": empty expression");
  return Evaluator(bindings, *this)(*root_);
}

std::int64_t Expression::evaluate(const Bindings& bindings, std::string_view name, std::int64_t value) const {
  if (!root_) throw InputError(context_ + ": empty expression");
  return Evaluator(bindings, *this, name, value)(*root_);
}

Expression Expression::bound(const Bindings& bindings) const {
  Expression copy = *this;
  if (root_) copy.root_ = substitute(root_, bindings);
  return copy;
}

std::vector<std::string> Expression::names() const {
  std::set<std::string> names;
  if (root_) collect_names(*root_, names);
  return {names.begin(), names.end()};
}

std::vector<Expression> parse_expression_list(std::string_view text, const std::string& context) {
  std::vector<Expression> expressions;
  const auto add = [&](std::string_view item) {
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
    expressions.push_back(Expression::parse(item, context));
  };
  int depth = 0;
  std::size_t item_start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c != ',' || depth > 0) continue;
    add(text.substr(item_start, i - item_start));
    item_start = i + 1;
  }
  // An unclosed '(' hid the final comma: the rest is one item, whose parse names the problem
  // ("((n" is no launch dimension, never an empty list taken as 1).
  if (item_start <= text.size()) add(text.substr(item_start));
  return expressions;
}

} // namespace cachewise::frontend
