// The latency plot: plain SVG text written here, so no plotting dependency is needed.
#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "analysis.hpp"
#include "cachewise/probe.hpp"

namespace cachewise::probe {
namespace {

constexpr double kWidth = 900;
constexpr double kHeight = 520;
constexpr double kLeft = 80;
constexpr double kRight = 250; // room for the legend
constexpr double kTop = 40;
constexpr double kBottom = 60;

std::string size_label(double bytes) {
  std::ostringstream out;
  if (bytes >= 1024.0 * 1024 * 1024) {
    out << bytes / (1024.0 * 1024 * 1024) << " GiB";
  } else if (bytes >= 1024.0 * 1024) {
    out << bytes / (1024.0 * 1024) << " MiB";
  } else if (bytes >= 1024.0) {
    out << bytes / 1024.0 << " KiB";
  } else {
    out << bytes << " B";
  }
  return out.str();
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

/// Maps a value onto [0, 1] on a log axis.
double log_position(double value, double low, double high) {
  return (std::log(value) - std::log(low)) / (std::log(high) - std::log(low));
}

} // namespace

std::string latency_svg(const DeviceProfile& profile) {
  std::vector<const Curve*> curves;
  for (const Curve& curve : profile.curves) {
    if (curve.x_unit == kWorkingSetUnit && curve.y_unit == kLatencyUnit && !curve.points.empty())
      curves.push_back(&curve);
  }
  if (curves.empty()) throw InputError("profile has no latency-vs-working-set curve to plot");

  double x_low = INFINITY, x_high = 0, y_low = INFINITY, y_high = 0;
  for (const Curve* curve : curves) {
    for (const auto& [x, y] : curve->points) {
      if (x <= 0 || y <= 0) continue;
      x_low = std::min(x_low, x);
      x_high = std::max(x_high, x);
      y_low = std::min(y_low, y);
      y_high = std::max(y_high, y);
    }
  }
  // Whole powers of two on x and of ten-ish steps on y keep the ticks readable.
  x_low = std::exp2(std::floor(std::log2(x_low)));
  x_high = std::exp2(std::ceil(std::log2(x_high)));
  if (x_high <= x_low) x_high = x_low * 2;
  y_low = std::pow(10.0, std::floor(std::log10(y_low)));
  y_high = std::pow(10.0, std::ceil(std::log10(y_high)));
  if (y_high <= y_low) y_high = y_low * 10;

  const double plot_width = kWidth - kLeft - kRight;
  const double plot_height = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + plot_width * log_position(x, x_low, x_high); };
  auto py = [&](double y) { return kTop + plot_height * (1.0 - log_position(y, y_low, y_high)); };

  std::ostringstream svg;
  svg << std::fixed << std::setprecision(1);
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << ' ' << kHeight << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kLeft << "\" y=\"24\" font-size=\"15\">" << escape(profile.device.name)
      << ": load latency vs working set (" << escape(profile.device.probed_at) << ")</text>\n";

  // Grid and ticks.
  int x_tick_index = 0;
  for (double x = x_low; x <= x_high * 1.0001; x *= 2, ++x_tick_index) {
    svg << "<line x1=\"" << px(x) << "\" y1=\"" << kTop << "\" x2=\"" << px(x) << "\" y2=\"" << kTop + plot_height
        << "\" stroke=\"#e4e4e4\"/>\n";
    // Label every other power of two when there are many.
    if (x_high / x_low <= 4096 || x_tick_index % 2 == 0) {
      svg << "<text x=\"" << px(x) << "\" y=\"" << kTop + plot_height + 18 << "\" text-anchor=\"middle\">"
          << size_label(x) << "</text>\n";
    }
  }
  for (double decade = y_low; decade < y_high * 1.0001; decade *= 10) {
    for (double factor : {1.0, 2.0, 5.0}) {
      const double y = decade * factor;
      if (y > y_high * 1.0001) break;
      svg << "<line x1=\"" << kLeft << "\" y1=\"" << py(y) << "\" x2=\"" << kLeft + plot_width << "\" y2=\"" << py(y)
          << "\" stroke=\"#e4e4e4\"/>\n"
          << "<text x=\"" << kLeft - 6 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">" << std::setprecision(0)
          << y << std::setprecision(1) << "</text>\n";
    }
  }
  svg << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << plot_width << "\" height=\"" << plot_height
      << "\" fill=\"none\" stroke=\"black\"/>\n"
      << "<text x=\"" << kLeft + plot_width / 2 << "\" y=\"" << kHeight - 15
      << "\" text-anchor=\"middle\">working set (log scale)</text>\n"
      << "<text transform=\"translate(20," << kTop + plot_height / 2
      << ") rotate(-90)\" text-anchor=\"middle\">cycles per load (log scale)</text>\n";

  static constexpr std::array<const char*, 8> kColors{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const char* color = kColors[i % kColors.size()];
    std::vector<Point> points = curves[i]->points;
    std::ranges::sort(points, {}, &Point::first);
    svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    for (const auto& [x, y] : points) {
      if (x > 0 && y > 0) svg << px(x) << ',' << py(y) << ' ';
    }
    svg << "\"/>\n";
    for (const auto& [x, y] : points) {
      if (x > 0 && y > 0)
        svg << "<circle cx=\"" << px(x) << "\" cy=\"" << py(y) << "\" r=\"2.5\" fill=\"" << color << "\"/>\n";
    }
    const double legend_y = kTop + 14 + 20 * static_cast<double>(i);
    svg << "<line x1=\"" << kWidth - kRight + 15 << "\" y1=\"" << legend_y - 4 << "\" x2=\"" << kWidth - kRight + 35
        << "\" y2=\"" << legend_y - 4 << "\" stroke=\"" << color << "\" stroke-width=\"2\"/>\n"
        << "<text x=\"" << kWidth - kRight + 40 << "\" y=\"" << legend_y << "\">" << escape(curves[i]->name)
        << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

} // namespace cachewise::probe
