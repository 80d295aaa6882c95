// Human units: binary byte units, one time unit per column, always labelled.
#include <gtest/gtest.h>

#include "cachewise/advisor/notes.hpp"
#include "cachewise/advisor/units.hpp"

namespace cachewise::advisor {
namespace {

TEST(Units, BytesInBinaryUnitsWithOneDecimalUnlessWhole) {
  EXPECT_EQ(bytes_text(512), "512 B");
  EXPECT_EQ(bytes_text(16384), "16 KiB");
  EXPECT_EQ(bytes_text(1.5 * 1024 * 1024), "1.5 MiB");
  // The H200's 150754820096 B of DRAM: 140.40 GiB, not "143771.2 MiB".
  EXPECT_EQ(bytes_text(150754820096.0), "140.4 GiB");
  EXPECT_EQ(bytes_text(65536.0 * 1024 * 1024), "64 GiB");
}

TEST(Units, TimesInMicrosecondsAndMillisecondsFromTenMilliseconds) {
  EXPECT_EQ(time_text(39.2), "39.20 µs");
  EXPECT_EQ(time_text(9999.0), "9999.00 µs");
  EXPECT_EQ(time_text(102350.0), "102.35 ms");
  // A column takes its largest value's unit.
  const TimeUnit unit = time_unit_for(20000.0);
  EXPECT_STREQ(unit.name, "ms");
  EXPECT_EQ(time_value(39.2, unit), "0.04");
}

TEST(Notes, AGridSmallerThanTheSmsLeavesTheRestIdle) {
  EXPECT_EQ(idle_sm_warning(32, 132).value_or(""), "32 blocks on 132 SMs: 100 SMs idle");
  EXPECT_EQ(idle_sm_warning(1, 132).value_or(""), "1 block on 132 SMs: 131 SMs idle");
  EXPECT_FALSE(idle_sm_warning(132, 132));
  EXPECT_FALSE(idle_sm_warning(4096, 132));
}

TEST(Notes, CopysNIsAnElementCount) {
  EXPECT_EQ(size_warning({"copy", 4096}).value_or(""),
            "copy n=4096 elements = 16 KiB per array (--n counts elements for copy)");
  EXPECT_EQ(size_warning({"copy", 4096, 0, 0, DataType::f64}).value_or(""),
            "copy n=4096 elements = 32 KiB per array (--n counts elements for copy)");
  EXPECT_FALSE(size_warning({"transpose", 4096}));
}

} // namespace
} // namespace cachewise::advisor
