// The launch layer's pieces that need no kernel: argument packing, launch limits, buffer
// sets, buffer contents and the output comparison. Every expected value is derived by hand.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "cachewise/tuner/kernel_arguments.hpp"
#include "cachewise/tuner/kernel_tuning.hpp"

namespace cachewise::tuner {
namespace {

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (const int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

std::vector<std::byte> floats(std::initializer_list<float> values) {
  std::vector<std::byte> out(values.size() * 4);
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

/// `value`'s low `size` bytes, little-endian (what frontend::kernel_parameter_values produces).
std::vector<std::uint8_t> little_endian(std::uint64_t value, int size) {
  std::vector<std::uint8_t> out;
  for (int b = 0; b < size; ++b) out.push_back(static_cast<std::uint8_t>(value >> (8 * b)));
  return out;
}

TEST(PackArguments, PointersAndIntegersAtTheirAlignment) {
  // float* out, int n, long long offset, int k, const float* in, short s:
  // 0..7 out; 8..11 n; 12..15 padding; 16..23 offset; 24..27 k; 28..31 padding; 32..39 in; 40..41 s.
  const std::vector<KernelParameter> parameters = {{"out", 8, 8}, {"n", 4, 4},  {"offset", 8, 8},
                                                   {"k", 4, 4},   {"in", 8, 8}, {"s", 2, 2}};
  const PackedArguments packed =
      pack_arguments(parameters, {little_endian(0x00007f0000100000, 8), little_endian(4096, 4),
                                  little_endian(static_cast<std::uint64_t>(std::int64_t{-3}), 8),
                                  little_endian(static_cast<std::uint64_t>(std::int64_t{-2}), 4),
                                  little_endian(0x00007f0000200000, 8), little_endian(0xBEEF, 2)});
  EXPECT_EQ(packed.offsets, (std::vector<std::size_t>{0, 8, 16, 24, 32, 40}));
  EXPECT_EQ(packed.bytes, bytes({0x00, 0x00, 0x10, 0x00, 0x00, 0x7f, 0x00, 0x00, // out
                                 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // n = 4096, padding
                                 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // offset = -3
                                 0xfe, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, // k = -2, padding
                                 0x00, 0x00, 0x20, 0x00, 0x00, 0x7f, 0x00, 0x00, // in
                                 0xef, 0xbe}));                                  // s
}

TEST(PackArguments, StructBytesAtTheirAlignment) {
  // int n; struct {int width; double scale;} p (.align 8 .b8 p[16]): n at 0..3, padding, p at 8..23.
  std::vector<std::uint8_t> p = little_endian(4096, 4);
  p.resize(16, 0x11);
  const PackedArguments packed = pack_arguments({{"n", 4, 4}, {"p", 16, 8, "b8"}}, {little_endian(7, 4), p});
  EXPECT_EQ(packed.offsets, (std::vector<std::size_t>{0, 8}));
  EXPECT_EQ(packed.bytes.size(), 24U);
  EXPECT_EQ(packed.bytes[8], std::byte{0x00}); // 4096 = 0x1000: low byte 0, next 0x10
  EXPECT_EQ(packed.bytes[9], std::byte{0x10});
  EXPECT_EQ(packed.bytes[23], std::byte{0x11});
}

TEST(PackArguments, RejectsWhatCannotBePassed) {
  EXPECT_THROW(pack_arguments({{"n", 4, 4}}, {}), InputError);
  try {
    pack_arguments({{"n", 4, 4}}, {little_endian(1, 8)});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "kernel parameter 'n' is 4 bytes, its value 8");
  }
  EXPECT_THROW(pack_arguments({{"n", 4, 3}}, {little_endian(0, 4)}), InputError);
}

TEST(LaunchLimits, NameTheLimitExceeded) {
  const DeviceLimits limits = [] {
    DeviceLimits l;
    l.max_threads_per_block = 1024;
    l.max_block = {1024, 1024, 64};
    l.max_grid = {2147483647, 65535, 65535};
    l.max_shared_bytes_per_block = 232448;
    return l;
  }();
  EXPECT_NO_THROW(check_launch_limits({{64, 64, 1}, {32, 32, 1}, 0}, limits));
  try {
    check_launch_limits({{64, 64, 1}, {64, 32, 1}, 0}, limits);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "launch past the device's limits: block 64x32x1 = 2048 threads > 1024 per block");
  }
  EXPECT_THROW(check_launch_limits({{1, 65536, 1}, {32, 1, 1}, 0}, limits), InputError);
  EXPECT_THROW(check_launch_limits({{1, 1, 1}, {1, 1, 128}, 0}, limits), InputError);
  EXPECT_THROW(check_launch_limits({{1, 1, 1}, {32, 1, 1}, 232449}, limits), InputError);
  EXPECT_THROW(check_launch_limits({{0, 1, 1}, {32, 1, 1}, 0}, limits), InputError);
}

TEST(BufferSets, EnoughToExceedTheL2) {
  constexpr std::int64_t MiB = 1 << 20;
  EXPECT_EQ(buffer_sets_for(8 * MiB, 50 * MiB, 140'000 * MiB), 7);   // 6 * 8 = 48 <= 50 < 56
  EXPECT_EQ(buffer_sets_for(512 * MiB, 50 * MiB, 140'000 * MiB), 1); // one set already exceeds it
  EXPECT_EQ(buffer_sets_for(1 * MiB, 100 * MiB, 140'000 * MiB), kMaxBufferSets);
  EXPECT_EQ(buffer_sets_for(1 * MiB, 50 * MiB, 8 * MiB), 4); // at most half of the 8 MiB memory
  EXPECT_EQ(buffer_sets_for(6 * MiB, 50 * MiB, 8 * MiB), 1); // never fewer than one
}

TEST(BufferContents, DeterministicFiniteAndDifferentPerSet) {
  const std::vector<std::byte> a = buffer_contents(4096 + 2, 0, 1);
  EXPECT_EQ(a, buffer_contents(4096 + 2, 0, 1));
  EXPECT_NE(a, buffer_contents(4096 + 2, 1, 1));
  EXPECT_NE(a, buffer_contents(4096 + 2, 0, 2));
  ASSERT_EQ(a.size(), 4098u);
  EXPECT_EQ(a[4096], std::byte{0}); // a partial word stays zero
  for (std::size_t i = 0; i + 4 <= 4096; i += 4) {
    float value = 0;
    std::memcpy(&value, a.data() + i, 4);
    ASSERT_TRUE(std::isfinite(value) && value >= 0.0f && value < 1.0f) << i;
  }
}

TEST(FirstDifference, IndexAndValuesOfTheFirstMismatch) {
  EXPECT_EQ(first_difference(floats({1, 2, 3.5f, 9}), floats({1, 2, 3, 8}), "f32", 0.0), "index 2: 3.5 vs 3");
  // Relative to the larger: 0.5 <= 0.15 * 3.5 = 0.525 and 1 <= 0.15 * 9 = 1.35, equal within 15%; 0.5 > 0.35, not
  // within 10%.
  EXPECT_EQ(first_difference(floats({1, 2, 3.5f, 9}), floats({1, 2, 3, 8}), "f32", 0.15), std::nullopt);
  EXPECT_EQ(first_difference(floats({1, 2, 3.5f, 9}), floats({1, 2, 3, 8}), "f32", 0.1), "index 2: 3.5 vs 3");
  EXPECT_EQ(first_difference(floats({NAN}), floats({NAN}), "f32", 0.0), std::nullopt);
  EXPECT_EQ(first_difference(floats({NAN}), floats({1}), "f32", 1.0), "index 0: nan vs 1");
  EXPECT_EQ(first_difference(bytes({1, 2, 3, 4}), bytes({1, 2, 3, 5}), "u8", 0.0), "index 3: 4 vs 5");
  EXPECT_EQ(first_difference(bytes({1, 0, 0, 0, 7, 0, 0, 0}), bytes({1, 0, 0, 0, 6, 0, 0, 0}), "i32", 0.0),
            "index 1: 7 vs 6");
  EXPECT_THROW(first_difference(bytes({1}), bytes({1, 2}), "u8", 0.0), InputError);
  EXPECT_THROW(first_difference(bytes({1}), bytes({1}), "f16", 0.0), InputError);
}

} // namespace
} // namespace cachewise::tuner
