#include <gtest/gtest.h>

#include "cachewise/model.hpp"

namespace cachewise {
namespace {

TEST(Config, ParsesAndPrintsCanonically) {
  const Config config = Config::parse(" tile=32, smem=1,block_x=32 ,block_y=8,pad=-1");
  EXPECT_EQ(config.get("tile"), 32);
  EXPECT_EQ(config.get("pad"), -1);
  EXPECT_EQ(config.to_string(), "block_x=32,block_y=8,pad=-1,smem=1,tile=32");
  EXPECT_EQ(Config::parse(config.to_string()), config);
  EXPECT_EQ(config.get_or("vector", 4), 4);
}

TEST(Config, RejectsMalformedText) {
  EXPECT_THROW(Config::parse("tile"), InputError);
  EXPECT_THROW(Config::parse("tile=32,,pad=1"), InputError);
  EXPECT_THROW(Config::parse("=3"), InputError);
  EXPECT_THROW(Config::parse("tile=abc"), InputError);
  EXPECT_THROW(Config::parse("tile=3x"), InputError);
  EXPECT_THROW(Config::parse("tile=99999999999999999999"), InputError);
  EXPECT_THROW(Config::parse("tile=1,tile=2"), InputError);
}

TEST(Config, MissingKeyNamesIt) {
  try {
    Config{}.get("tile");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "config: missing key 'tile'");
  }
}

TEST(DataTypes, SizesAndNames) {
  EXPECT_EQ(element_bytes(DataType::f16), 2);
  EXPECT_EQ(element_bytes(parse_data_type("f64")), 8);
  EXPECT_THROW(parse_data_type("bf16"), InputError);
}

} // namespace
} // namespace cachewise
