#include "cachewise/model/strict_json.hpp"

#include <string>

#include <gtest/gtest.h>

namespace cachewise {
namespace {

std::string error_of(const std::string& text) {
  try {
    (void)parse_strict_json(text);
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

TEST(StrictJson, DuplicateKeyIsNamedByItsPath) {
  EXPECT_EQ(error_of(R"({"a": 1, "a": 2})"), "duplicate key 'a'");
  EXPECT_EQ(error_of(R"({"l1": {"ways": 4, "line_bytes": 128, "ways": 8}})"), "duplicate key 'l1.ways'");
  // Array elements count from 0: the second element's object repeats "b".
  EXPECT_EQ(error_of(R"({"a": [{"b": 1}, {"c": [1, [2]], "b": 1, "b": 2}]})"), "duplicate key 'a[1].b'");
  // The same key in two objects, or as a value, is no duplicate.
  EXPECT_EQ(error_of(R"({"x": {"k": 1}, "y": {"k": 2}, "k": "k"})"), "no error");
  EXPECT_EQ(parse_strict_json(R"({"x": {"k": 1}, "y": [3, {"k": 2}]})")["y"][1]["k"], 2);
}

TEST(StrictJson, NestingIsBoundedAt256Levels) {
  EXPECT_EQ(error_of(std::string(256, '[') + std::string(256, ']')), "no error");
  EXPECT_EQ(
      error_of(std::string(100000, '[') + std::string(100000, ']')), "nested deeper than 256 levels at '" + [] {
        std::string path;
        for (int i = 0; i < 256; ++i) path += "[0]";
        return path;
      }() + "'");
  EXPECT_EQ(
      error_of(R"({"a": )" + std::string(300, '[')), "nested deeper than 256 levels at 'a" + [] {
        std::string path;
        for (int i = 0; i < 255; ++i) path += "[0]";
        return path;
      }() + "'");
}

TEST(StrictJson, SyntaxErrorsAreNlohmanns) {
  EXPECT_THROW((void)parse_strict_json(std::string(R"({"a": )")), nlohmann::json::parse_error);
  EXPECT_TRUE(parse_strict_json(std::string(R"({"a": )"), false).is_discarded());
  EXPECT_EQ(error_of(R"({"a": 1, "a": )"), "duplicate key 'a'"); // found before the text ends
}

} // namespace
} // namespace cachewise
