// The latency plot: plain SVG with one polyline per latency-vs-working-set curve.
#include <string>

#include <gtest/gtest.h>

#include "analysis.hpp"
#include "cachewise/probe.hpp"

namespace cachewise::probe {
namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

DeviceProfile profile_with_curves() {
  DeviceProfile profile;
  profile.device.name = "Test <GPU>";
  profile.device.probed_at = "2026-11-29T12:00:00Z";
  profile.curves.push_back({"L1 chase", kWorkingSetUnit, kLatencyUnit, {{8192, 33}, {262144, 33}, {524288, 290}}});
  profile.curves.push_back({"L2 chase", kWorkingSetUnit, kLatencyUnit, {{1048576, 370}, {268435456, 700}}});
  profile.curves.push_back({"bandwidth", kWorkingSetUnit, "GB/s", {{1048576, 9000}, {268435456, 4000}}});
  return profile;
}

TEST(LatencySvg, OnePolylinePerLatencyCurve) {
  const std::string svg = latency_svg(profile_with_curves());
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(count_of(svg, "<polyline"), 2u); // the GB/s curve is not a latency curve
  EXPECT_EQ(count_of(svg, "<circle"), 5u);
  EXPECT_NE(svg.find(">L1 chase</text>"), std::string::npos);
  EXPECT_EQ(svg.find("bandwidth"), std::string::npos);
  EXPECT_NE(svg.find("Test &lt;GPU&gt;"), std::string::npos); // escaped, never raw markup
  EXPECT_EQ(svg.find("<GPU>"), std::string::npos);
  // x axis from 8 KiB to 256 MiB in powers of two; y axis 10..1000 with 1-2-5 ticks.
  EXPECT_NE(svg.find(">8 KiB</text>"), std::string::npos);
  EXPECT_NE(svg.find(">128 MiB</text>"), std::string::npos); // every other power of two is labelled
  EXPECT_NE(svg.find(">500</text>"), std::string::npos);
}

TEST(LatencySvg, RefusesAProfileWithoutLatencyCurves) {
  DeviceProfile profile = profile_with_curves();
  profile.curves.resize(0);
  EXPECT_THROW(latency_svg(profile), InputError);
}

} // namespace
} // namespace cachewise::probe
