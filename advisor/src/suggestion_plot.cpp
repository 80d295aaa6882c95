// The ranking as SVG: a dot-and-band chart of every candidate and, over two varied parameters,
// a heat map.
#include "cachewise/advisor/suggestion_plot.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "cachewise/advisor/units.hpp"

namespace cachewise::advisor {
namespace {

constexpr double kWidth = 900;
constexpr double kLabelWidth = 330; // the config labels left of the chart
constexpr double kRowHeight = 16;
constexpr double kTop = 60;
constexpr double kCell = 56;

std::string xml_text(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const char* entity = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : nullptr;
    out += entity ? std::string(entity) : std::string(1, c);
  }
  return out;
}

std::string number(double value) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << value;
  return out.str();
}

/// The parameters whose value differs between candidates, `order` first.
std::vector<std::string> varied_parameters(const std::vector<Candidate>& ranked,
                                           const std::vector<std::string>& order) {
  std::map<std::string, std::set<std::int64_t>> values;
  for (const Candidate& c : ranked) {
    for (const auto& [name, value] : c.config.values()) values[name].insert(value);
  }
  std::vector<std::string> varied;
  for (const std::string& name : order) {
    if (values.contains(name) && values[name].size() > 1) varied.push_back(name);
  }
  for (const auto& [name, set] : values) {
    if (set.size() > 1 && std::ranges::find(varied, name) == varied.end()) varied.push_back(name);
  }
  return varied;
}

std::string label(const Candidate& c, const std::vector<std::string>& varied) {
  std::string text;
  for (const std::string& name : varied)
    text += (text.empty() ? "" : " ") + name + "=" + std::to_string(c.config.get(name));
  return text.empty() ? "(one candidate)" : text;
}

/// Fast green through yellow to slow red, by where `time` lies between the extremes on a log scale.
std::string heat_color(double time, double fastest, double slowest) {
  const double t = slowest > fastest ? std::log(time / fastest) / std::log(slowest / fastest) : 0.0;
  const int red = static_cast<int>(std::lround(255 * std::min(1.0, 2 * t)));
  const int green = static_cast<int>(std::lround(200 * std::min(1.0, 2 * (1 - t))));
  std::ostringstream out;
  out << "rgb(" << red << "," << green << ",60)";
  return out.str();
}

/// The band chart; returns the height it took.
double write_band_chart(std::ostringstream& svg, const std::vector<Candidate>& ranked,
                        const std::vector<std::string>& varied, const TimeUnit& unit, double top) {
  const std::size_t rows = std::min(ranked.size(), kPlottedCandidates);
  double high = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const Candidate& c = ranked[i];
    high = std::max(high, c.time_band ? c.time_band->high_us : c.prediction.time_us);
  }
  const double chart_left = kLabelWidth, chart_width = kWidth - kLabelWidth - 30;
  const double scale = high > 0 ? chart_width / high : 0.0; // time 0 at the left edge
  auto x_of = [&](double us) { return chart_left + us * scale; };
  const double bottom = top + static_cast<double>(rows) * kRowHeight;
  for (int tick = 0; tick <= 4; ++tick) { // 5 ticks from 0 to the largest time
    const double us = high * tick / 4.0;
    svg << "<line x1='" << number(x_of(us)) << "' y1='" << number(top - 4) << "' x2='" << number(x_of(us)) << "' y2='"
        << number(bottom) << "' stroke='#ddd'/>\n<text x='" << number(x_of(us)) << "' y='" << number(bottom + 14)
        << "' font-size='11' text-anchor='middle'>" << time_value(us, unit) << "</text>\n";
  }
  svg << "<text x='" << number(chart_left + chart_width / 2) << "' y='" << number(bottom + 30)
      << "' font-size='12' text-anchor='middle'>predicted time (" << unit.name << "), bar: error band</text>\n";
  for (std::size_t i = 0; i < rows; ++i) {
    const Candidate& c = ranked[i];
    const double y = top + (static_cast<double>(i) + 0.5) * kRowHeight;
    const std::string color = i == 0 ? "#1a7f37" : c.tie_with_best ? "#bf8700" : "#0969da";
    svg << "<text x='" << number(kLabelWidth - 8) << "' y='" << number(y + 4) << "' font-size='11' text-anchor='end'>"
        << i + 1 << ". " << xml_text(label(c, varied)) << "</text>\n";
    if (c.time_band) {
      svg << "<line x1='" << number(x_of(c.time_band->low_us)) << "' y1='" << number(y) << "' x2='"
          << number(x_of(c.time_band->high_us)) << "' y2='" << number(y) << "' stroke='" << color
          << "' stroke-width='3' stroke-opacity='0.4'/>\n";
    }
    svg << "<circle cx='" << number(x_of(c.prediction.time_us)) << "' cy='" << number(y) << "' r='4' fill='" << color
        << "'/>\n";
  }
  double height = bottom + 40 - top;
  if (ranked.size() > rows) {
    svg << "<text x='10' y='" << number(bottom + 50) << "' font-size='11'>" << ranked.size() - rows
        << " slower candidates not shown</text>\n";
    height += 16;
  }
  return height;
}

/// The heat map over two parameters; returns the height it took.
double write_heat_map(std::ostringstream& svg, const std::vector<Candidate>& ranked, const std::string& x_name,
                      const std::string& y_name, const TimeUnit& unit, double top) {
  std::set<std::int64_t> xs, ys;
  std::map<std::pair<std::int64_t, std::int64_t>, double> best_us;
  double fastest = std::numeric_limits<double>::infinity(), slowest = 0;
  for (const Candidate& c : ranked) {
    const std::int64_t x = c.config.get(x_name), y = c.config.get(y_name);
    xs.insert(x);
    ys.insert(y);
    const auto [cell, added] = best_us.try_emplace({x, y}, c.prediction.time_us);
    if (!added) cell->second = std::min(cell->second, c.prediction.time_us);
    fastest = std::min(fastest, c.prediction.time_us);
    slowest = std::max(slowest, c.prediction.time_us);
  }
  const double left = 120, grid_top = top + 30;
  svg << "<text x='10' y='" << number(top + 14) << "' font-size='13'>predicted time (" << unit.name << ") over "
      << xml_text(x_name) << " (across) and " << xml_text(y_name) << " (down); green is fast</text>\n";
  std::size_t column = 0;
  for (const std::int64_t x : xs) {
    svg << "<text x='" << number(left + (static_cast<double>(column++) + 0.5) * kCell) << "' y='"
        << number(grid_top - 6) << "' font-size='11' text-anchor='middle'>" << xml_text(x_name) << "=" << x
        << "</text>\n";
  }
  std::size_t row = 0;
  for (const std::int64_t y : ys) {
    const double cell_top = grid_top + static_cast<double>(row++) * kCell;
    svg << "<text x='" << number(left - 8) << "' y='" << number(cell_top + kCell / 2 + 4)
        << "' font-size='11' text-anchor='end'>" << xml_text(y_name) << "=" << y << "</text>\n";
    column = 0;
    for (const std::int64_t x : xs) {
      const double cell_left = left + static_cast<double>(column++) * kCell;
      const auto found = best_us.find({x, y});
      svg << "<rect x='" << number(cell_left) << "' y='" << number(cell_top) << "' width='" << kCell << "' height='"
          << kCell << "' fill='"
          << (found == best_us.end() ? std::string("#eee") : heat_color(found->second, fastest, slowest))
          << "' stroke='white'/>\n";
      if (found != best_us.end()) {
        svg << "<text x='" << number(cell_left + kCell / 2) << "' y='" << number(cell_top + kCell / 2 + 4)
            << "' font-size='11' text-anchor='middle'>" << time_value(found->second, unit) << "</text>\n";
      }
    }
  }
  return 30 + static_cast<double>(ys.size()) * kCell + 20;
}

} // namespace

std::string suggestion_svg(const Suggestion& suggestion, const std::string& title,
                           const std::vector<std::string>& parameter_order) {
  const std::vector<Candidate>& ranked = suggestion.ranked;
  const TimeUnit unit = time_unit_for(ranked.empty() ? 0.0 : ranked.front().prediction.time_us);
  const std::vector<std::string> varied = varied_parameters(ranked, parameter_order);
  std::ostringstream body;
  double y = kTop;
  y += write_band_chart(body, ranked, varied, unit, y);
  if (varied.size() == 2) y += write_heat_map(body, ranked, varied[0], varied[1], unit, y + 10) + 10;
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << kWidth << "' height='" << number(y + 10)
      << "' viewBox='0 0 " << kWidth << " " << number(y + 10) << "' font-family='sans-serif'>\n"
      << "<rect width='100%' height='100%' fill='white'/>\n"
      << "<text x='10' y='24' font-size='15'>" << xml_text(title) << "</text>\n"
      << "<text x='10' y='44' font-size='12'>" << ranked.size() << " feasible candidates, fastest first"
      << " (green: best; amber: a tie with it within the error bands)</text>\n"
      << body.str() << "</svg>\n";
  return svg.str();
}

} // namespace cachewise::advisor
