// Fuzzes the kernel spec's integer expressions (frontend/expression.hpp): any text must either be
// rejected with InputError or parse; a parsed expression evaluates, with every name it reads
// bound, to a value or an InputError (overflow, division by zero), and binding the names first
// (Expression::bound) gives the same outcome. Any other exception escapes and counts as a crash.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cachewise/frontend/expression.hpp"
#include "cachewise/model.hpp"

namespace {

std::optional<std::int64_t> value_of(const cachewise::frontend::Expression& expression,
                                     const cachewise::frontend::Bindings& bindings) {
  try {
    return expression.evaluate(bindings);
  } catch (const cachewise::InputError&) {
    return std::nullopt;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using cachewise::frontend::Expression;
  try {
    (void)cachewise::frontend::parse_expression_list(text, "fuzz");
  } catch (const cachewise::InputError&) {
  }
  std::optional<Expression> expression;
  try {
    expression = Expression::parse(text, "fuzz");
  } catch (const cachewise::InputError&) {
    return 0;
  }
  // Names bound to values that reach the edges of the arithmetic: 0, small, huge, negative.
  cachewise::frontend::Bindings bindings;
  const std::int64_t values[] = {0, 1, -1, 7, 32, INT64_MAX, INT64_MIN};
  std::size_t next = size;
  for (const std::string& name : expression->names()) bindings[name] = values[next++ % std::size(values)];
  const std::optional<std::int64_t> direct = value_of(*expression, bindings);
  const std::optional<std::int64_t> via_bound = value_of(expression->bound(bindings), {});
  if (direct != via_bound) __builtin_trap();
  return 0;
}
