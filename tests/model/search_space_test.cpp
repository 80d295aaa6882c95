#include <algorithm>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "cachewise/model/search_space.hpp"
#include "cachewise/model/errors.hpp"

namespace cachewise {
namespace {

std::vector<std::int64_t> range(std::int64_t first, std::int64_t last) {
  std::vector<std::int64_t> values;
  for (std::int64_t v = first; v <= last; ++v) values.push_back(v);
  return values;
}

// Nested loops in declaration order, every constraint checked on the complete config.
std::vector<Config> brute_force(const SearchSpace& space) {
  std::vector<Config> configs{Config{}};
  for (const auto& [name, values] : space.parameters()) {
    std::vector<Config> extended;
    for (const Config& prefix : configs) {
      for (std::int64_t value : values) {
        Config config = prefix;
        config.set(name, value);
        extended.push_back(config);
      }
    }
    configs = extended;
  }
  std::erase_if(configs, [&](const Config& config) {
    return !std::ranges::all_of(space.constraints(), [&](const auto& c) { return c.holds(config); });
  });
  return configs;
}

TEST(SearchSpace, WithoutConstraintsEnumeratesTheProductInDeclarationOrder) {
  SearchSpace space;
  space.add_parameter("tile", {16, 32});
  space.add_parameter("pad", {0, 1, 2});
  const std::vector<Config> configs = space.enumerate();
  ASSERT_EQ(configs.size(), 6U);
  EXPECT_EQ(space.unconstrained_size(), 6U);
  EXPECT_EQ(configs[0].to_string(), "pad=0,tile=16");
  EXPECT_EQ(configs[1].to_string(), "pad=1,tile=16");
  EXPECT_EQ(configs[3].to_string(), "pad=0,tile=32");
  EXPECT_EQ(configs[5].to_string(), "pad=2,tile=32");
}

TEST(SearchSpace, ConstraintIsCheckedAsSoonAsItsParametersAreBound) {
  // c and d are declared first but no constraint reads them: binding a and b first means
  // a == b is evaluated once per (a, b) pair, 10 * 10 times, not once per full config (10^4).
  SearchSpace space;
  space.add_parameter("c", range(1, 10));
  space.add_parameter("d", range(1, 10));
  space.add_parameter("a", range(1, 10));
  space.add_parameter("b", range(1, 10));
  int calls = 0;
  std::size_t most_keys_seen = 0;
  space.add_constraint(
      {"a", "b"},
      [&](const Config& config) {
        ++calls;
        most_keys_seen = std::max(most_keys_seen, config.values().size());
        return config.get("a") == config.get("b");
      },
      "a == b");
  const std::vector<Config> configs = space.enumerate();
  EXPECT_EQ(calls, 100);
  EXPECT_EQ(most_keys_seen, 2U); // only what is bound so far
  EXPECT_EQ(configs.size(), 1000U);
  EXPECT_EQ(configs, brute_force(space));
}

TEST(SearchSpace, ChainOfConstraintsPrunesLevelByLevel) {
  // a < b < c < d over 1..8 with e unconstrained. Whichever end of the chain the graph order
  // starts from, the checks are: 8*8 pairs for the first link, C(8,2)=28 survivors * 8 for the
  // second, C(8,3)=56 survivors * 8 for the third: 64 + 224 + 448 = 736 calls.
  SearchSpace space;
  for (const char* name : {"e", "b", "d", "a", "c"}) space.add_parameter(name, range(1, 8));
  int calls = 0;
  auto less = [&calls](std::string left, std::string right) {
    return [&calls, left, right](const Config& config) {
      ++calls;
      return config.get(left) < config.get(right);
    };
  };
  space.add_constraint({"c", "d"}, less("c", "d"), "c < d");
  space.add_constraint({"a", "b"}, less("a", "b"), "a < b");
  space.add_constraint({"b", "c"}, less("b", "c"), "b < c");
  const std::vector<Config> configs = space.enumerate();
  EXPECT_EQ(calls, 736);
  EXPECT_EQ(configs.size(), 70U * 8U); // C(8,4) increasing chains times 8 values of e
  const std::vector<std::size_t> order = space.binding_order();
  EXPECT_EQ(order.back(), 0U); // e, unconstrained, is bound last
  EXPECT_EQ(configs, brute_force(space));
}

TEST(SearchSpace, MixedArityConstraintsEqualBruteForce) {
  SearchSpace space;
  space.add_parameter("tile", {8, 16, 32, 64});
  space.add_parameter("block_x", {8, 16, 32, 64});
  space.add_parameter("block_y", {1, 2, 4, 8, 16});
  space.add_parameter("pad", {0, 1, 2});
  space.add_parameter("smem", {0, 1});
  space.add_constraint(
      {"tile", "block_x"}, [](const Config& c) { return c.get("tile") % c.get("block_x") == 0; },
      "tile % block_x == 0");
  space.add_constraint(
      {"tile", "block_y"}, [](const Config& c) { return c.get("tile") % c.get("block_y") == 0; },
      "tile % block_y == 0");
  space.add_constraint(
      {"block_x", "block_y"}, [](const Config& c) { return c.get("block_x") * c.get("block_y") % 32 == 0; },
      "whole warps");
  space.add_constraint(
      {"pad", "smem"}, [](const Config& c) { return c.get("smem") == 1 || c.get("pad") == 0; }, "pad needs smem");
  space.add_constraint(
      {"block_y"}, [](const Config& c) { return c.get("block_y") != 2; }, "unary");
  const std::vector<Config> expected = brute_force(space);
  EXPECT_EQ(space.enumerate(), expected);
  EXPECT_FALSE(expected.empty());
  EXPECT_LT(expected.size(), space.unconstrained_size());
}

TEST(SearchSpace, ConstraintThatNeverHoldsGivesNothing) {
  SearchSpace space;
  space.add_parameter("x", {1, 2});
  space.add_parameter("y", {1, 2});
  space.add_constraint(
      {"x"}, [](const Config&) { return false; }, "never");
  EXPECT_TRUE(space.enumerate().empty());
  EXPECT_TRUE(SearchSpace{}.enumerate().empty());
}

TEST(SearchSpace, RejectsBadDefinitions) {
  SearchSpace space;
  space.add_parameter("tile", {16, 32});
  EXPECT_THROW(space.add_parameter("tile", {8}), InputError);
  EXPECT_THROW(space.add_parameter("pad", {}), InputError);
  EXPECT_THROW(space.add_parameter("pad", {1, 1}), InputError);
  EXPECT_THROW(space.add_parameter("", {1}), InputError);
  const auto always = [](const Config&) { return true; };
  EXPECT_THROW(space.add_constraint({}, always, "empty"), InputError);
  EXPECT_THROW(space.add_constraint({"tile", "vector"}, always, "unknown"), InputError);
  EXPECT_THROW(space.add_constraint({"tile"}, nullptr, "no predicate"), InputError);
  EXPECT_EQ(space.parameters().size(), 1U);
  EXPECT_TRUE(space.constraints().empty());
}

TEST(SearchSpace, UnconstrainedSizeSaturates) {
  SearchSpace space;
  for (int i = 0; i < 63; ++i) space.add_parameter("p" + std::to_string(i), {0, 1});
  EXPECT_EQ(space.unconstrained_size(), std::uint64_t{1} << 63);
  space.add_parameter("last", {0, 1});
  EXPECT_EQ(space.unconstrained_size(), std::numeric_limits<std::uint64_t>::max());
}

} // namespace
} // namespace cachewise
