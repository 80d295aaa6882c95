// cachewise::frontend — integer expressions of a kernel spec ("width / TILE_DIM",
// "TILE_DIM % BLOCK_ROWS == 0"): parsed once, evaluated per candidate in exact 64-bit integer
// arithmetic. Overflow, division by zero and unknown names are InputErrors, never wrapped values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cachewise::frontend {

/// Values of the names an expression may use: the candidate's parameters and the --arg values.
using Bindings = std::map<std::string, std::int64_t, std::less<>>;

/// Grammar, loosest first: `||`, `&&`, `== != < <= > >=`, `+ -`, `* / %`, unary `- + !`, then
/// integers, names, `(e)` and the calls min(a, b, ...), max(a, b, ...), ceil_div(a, b).
/// `/` and `%` truncate toward zero as in C++; comparisons and logic give 1 or 0.
class Expression {
public:
  /// `context` prefixes every message ("--grid: ..."). Throws InputError on a syntax error.
  static Expression parse(std::string_view text, std::string context);

  /// Throws InputError "<context>: unknown name 'x' (known: a, b)", on division by zero and
  /// on a result or intermediate outside int64.
  std::int64_t evaluate(const Bindings& bindings) const;
  /// The same with one more name bound (`i`, a buffer's element index): no copy of `bindings`
  /// per value, for expressions evaluated once per element.
  std::int64_t evaluate(const Bindings& bindings, std::string_view name, std::int64_t value) const;

  /// A copy in which every name `bindings` holds is its value: evaluating it once per element
  /// then looks up only the names left (`i`). Same text and context, so the same messages.
  Expression bound(const Bindings& bindings) const;

  /// Every name the expression reads, sorted, once each.
  std::vector<std::string> names() const;

  const std::string& text() const { return text_; }
  const std::string& context() const { return context_; }

  struct Node;

private:
  std::string text_;
  std::string context_;
  std::shared_ptr<const Node> root_;
};

/// A comma-separated list at the top level ("width / TILE_DIM, height / TILE_DIM"); commas
/// inside min(...) belong to the call. Throws InputError on an empty item.
std::vector<Expression> parse_expression_list(std::string_view text, const std::string& context);

} // namespace cachewise::frontend
