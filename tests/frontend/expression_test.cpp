#include "cachewise/frontend/expression.hpp"

#include <string>

#include <gtest/gtest.h>

#include "cachewise/model.hpp"

namespace cachewise::frontend {
namespace {

std::int64_t eval(std::string_view text, const Bindings& bindings = {}) {
  return Expression::parse(text, "--test").evaluate(bindings);
}

std::string error_of(std::string_view text, const Bindings& bindings = {}) {
  try {
    eval(text, bindings);
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

TEST(Expression, PrecedenceFollowsCpp) {
  EXPECT_EQ(eval("2 + 3 * 4"), 14);
  EXPECT_EQ(eval("(2 + 3) * 4"), 20);
  EXPECT_EQ(eval("20 / 4 / 5"), 1); // left-associative: (20/4)/5
  EXPECT_EQ(eval("20 - 4 - 5"), 11);
  EXPECT_EQ(eval("7 % 4 * 2"), 6); // (7%4)*2
  EXPECT_EQ(eval("-3 * -2"), 6);
  EXPECT_EQ(eval("- (1 + 2)"), -3);
  EXPECT_EQ(eval("1 + 2 == 3 && 4 < 5"), 1);
  EXPECT_EQ(eval("0 || 2 > 3"), 0);
  EXPECT_EQ(eval("1 < 2 == 1"), 1); // comparisons left to right: (1<2)==1
  EXPECT_EQ(eval("!0 + 1"), 2);
  EXPECT_EQ(eval("3 != 3"), 0);
  EXPECT_EQ(eval("3 >= 3 && 2 <= 1"), 0);
}

TEST(Expression, IntegerDivisionTruncatesTowardZero) {
  EXPECT_EQ(eval("7 / 2"), 3);
  EXPECT_EQ(eval("-7 / 2"), -3);
  EXPECT_EQ(eval("-7 % 2"), -1);
  EXPECT_EQ(eval("ceil_div(7, 2)"), 4);
  EXPECT_EQ(eval("ceil_div(8, 2)"), 4);
  EXPECT_EQ(eval("ceil_div(-7, 2)"), -3);
}

TEST(Expression, NamesAndCalls) {
  const Bindings launch{{"width", 4096}, {"TILE_DIM", 32}, {"BLOCK_ROWS", 8}};
  EXPECT_EQ(eval("width / TILE_DIM", launch), 128);
  EXPECT_EQ(eval("TILE_DIM % BLOCK_ROWS == 0", launch), 1);
  EXPECT_EQ(eval("min(width, TILE_DIM * 2, 100)", launch), 64);
  EXPECT_EQ(eval("max(1, BLOCK_ROWS - 10)", launch), 1);
  EXPECT_EQ(eval("ceil_div(width + 1, TILE_DIM)", launch), 129);
  EXPECT_EQ(Expression::parse("max(a, b) + a * c", "x").names(), (std::vector<std::string>{"a", "b", "c"}));
}

// Declared contents: one more name (`i`) per evaluation, the others bound once.
TEST(Expression, ElementIndexAndBoundNames) {
  const Expression col = Expression::parse("(i * 37) % n - 1", "contents of 'col'");
  EXPECT_EQ(col.evaluate({{"n", 100}}, "i", 3), 10); // 111 % 100 - 1
  const Expression bound = col.bound({{"n", 100}});
  EXPECT_EQ(bound.names(), std::vector<std::string>{"i"});
  EXPECT_EQ(bound.evaluate({}, "i", 5), 84); // 185 % 100 - 1
  EXPECT_EQ(bound.text(), "(i * 37) % n - 1");
  try {
    (void)Expression::parse("i / (n - 100)", "contents of 'col'").bound({{"n", 100}}).evaluate({}, "i", 1);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "contents of 'col': division by zero in 'i / (n - 100)'");
  }
  try {
    (void)col.evaluate({}, "i", 1);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "contents of 'col': unknown name 'n' (known: i)");
  }
}

TEST(Expression, ShortCircuitAvoidsDivisionByZero) {
  EXPECT_EQ(eval("B != 0 && 10 / B > 1", {{"B", 0}}), 0);
  EXPECT_EQ(eval("B == 0 || 10 / B > 1", {{"B", 0}}), 1);
}

TEST(Expression, ListSplitsAtTopLevelCommasOnly) {
  const auto list = parse_expression_list("width / T, min(a, b), 1", "--grid");
  ASSERT_EQ(list.size(), 3U);
  EXPECT_EQ(list[0].evaluate({{"width", 64}, {"T", 16}}), 4);
  EXPECT_EQ(list[1].evaluate({{"a", 5}, {"b", 3}}), 3);
  EXPECT_EQ(list[2].evaluate({}), 1);
  EXPECT_THROW(parse_expression_list("1,,2", "--grid"), InputError);
}

TEST(Expression, ErrorsNameTheProblem) {
  EXPECT_EQ(error_of("widht / 2", {{"width", 1}, {"TILE", 2}}), "--test: unknown name 'widht' (known: TILE, width)");
  EXPECT_EQ(error_of("4 / (2 - 2)"), "--test: division by zero in '4 / (2 - 2)'");
  EXPECT_EQ(error_of("4 % 0"), "--test: division by zero in '4 % 0'");
  EXPECT_EQ(error_of("9223372036854775807 + 1"), "--test: integer overflow in '9223372036854775807 + 1'");
  EXPECT_EQ(error_of("4294967296 * 4294967296"), "--test: integer overflow in '4294967296 * 4294967296'");
  EXPECT_EQ(error_of("99999999999999999999"),
            "--test: integer literal overflows 64 bits at column 19 of '99999999999999999999'");
  EXPECT_EQ(error_of("1 +"), "--test: expected a value at column 4 of '1 +'");
  EXPECT_EQ(error_of("(1 + 2"), "--test: expected ')' at column 7 of '(1 + 2'");
  EXPECT_EQ(error_of("pow(2, 3)"),
            "--test: unknown function 'pow' (known: ceil_div, max, min) at column 5 of 'pow(2, 3)'");
  EXPECT_EQ(error_of("1 $ 2"), "--test: unexpected '$' at column 3 of '1 $ 2'");
  EXPECT_EQ(error_of("ceil_div(1)"), "--test: ceil_div takes 2 arguments, got 1 at column 12 of 'ceil_div(1)'");
  EXPECT_EQ(error_of("ceil_div(4, -2)"), "--test: ceil_div divisor must be positive, got -2 in 'ceil_div(4, -2)'");
}

// Clang's default bracket depth: 256 levels parse; deeper text (5,000 parentheses, 40,000 unary
// minus, a chain of 1,000 '+') is one error instead of a stack overflow. Messages show 60 characters.
TEST(Expression, NestingIsBoundedAt256Levels) {
  EXPECT_EQ(eval(std::string(256, '(') + "7" + std::string(256, ')')), 7);
  EXPECT_EQ(error_of(std::string(5000, '(') + "7" + std::string(5000, ')')),
            "--test: nested deeper than 256 levels at column 258 of '" + std::string(60, '(') + "...'");
  EXPECT_EQ(eval(std::string(255, '-') + "7"), -7);
  EXPECT_EQ(error_of(std::string(40000, '-') + "7"),
            "--test: nested deeper than 256 levels at column 258 of '" + std::string(60, '-') + "...'");
  std::string chain = "1";
  for (int i = 0; i < 255; ++i) chain += "+1";
  EXPECT_EQ(eval(chain), 256);
  for (int i = 0; i < 745; ++i) chain += "+1";
  // The 256th '+' makes the tree 257 deep: after "1" and 256 "+1", column 514.
  EXPECT_EQ(error_of(chain), "--test: nested deeper than 256 levels at column 514 of '" + chain.substr(0, 60) + "...'");
}

} // namespace
} // namespace cachewise::frontend
