// `advisor suggest`: rank a built-in family's configs (or predict one custom pattern) on a
// device profile and explain each with the mechanism behind its predicted time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>

#include "cachewise/advisor.hpp"
#include "cachewise/advisor/suggestion_plot.hpp"
#include "cachewise/tuner/tuned_header.hpp"
#include "cachewise/advisor/units.hpp"
#include "command.hpp"
#include "common.hpp"
#include "suggest_kernel.hpp"

namespace cachewise::cli {
namespace {

struct SuggestArguments {
  ProblemOptions problem;
  std::int64_t top = 5;
  std::string fix;
  bool json = false;
  bool verbose = false;
  bool wide = false;
  bool progress = false;
  std::string plot;
  KernelOptions kernel;
};

/// The default width of `suggest --kernel`'s table, in columns (--wide: every column, unbounded).
constexpr std::size_t kTableColumns = 100;

std::string fixed_text(std::optional<double> value, int precision) {
  if (!value) return "-";
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << *value;
  return out.str();
}

std::string pair_text(std::optional<double> first, std::optional<double> second, int precision) {
  return fixed_text(first, precision) + "/" + fixed_text(second, precision);
}

/// "39.20", or with the calibration's band "39.20 (36.12-42.40)", and " tie" within the best's.
std::string time_text(const advisor::Candidate& c, const advisor::TimeUnit& unit) {
  std::string text = advisor::time_value(c.prediction.time_us, unit);
  if (c.time_band) {
    text += " (" + advisor::time_value(c.time_band->low_us, unit) + "-" +
            advisor::time_value(c.time_band->high_us, unit) + ")";
  }
  return c.tie_with_best ? text + " tie" : text;
}

/// Widths in characters: UTF-8 continuation bytes ("µ") take no column.
std::size_t columns(const std::string& text) {
  return static_cast<std::size_t>(
      std::ranges::count_if(text, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// Rows under a header, each column as wide as its widest cell: text columns left-aligned, the
/// others right-aligned, two spaces apart.
void print_aligned(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                   const std::vector<bool>& text_column, std::ostream& out,
                   const std::vector<std::string>& after_row = {}) {
  std::vector<std::size_t> widths(header.size());
  for (std::size_t col = 0; col < header.size(); ++col) {
    widths[col] = columns(header[col]);
    for (const auto& row : rows) widths[col] = std::max(widths[col], columns(row[col]));
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    for (std::size_t col = 0; col < row.size(); ++col) {
      const bool last = col + 1 == row.size();
      const std::string padding(last ? 0 : widths[col] - columns(row[col]), ' ');
      out << (text_column[col] ? row[col] + padding : padding + row[col]) << (last ? "\n" : "  ");
    }
  };
  print_row(header);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    print_row(rows[i]);
    if (i < after_row.size()) out << after_row[i];
  }
}

/// A reason cut to `width` columns, keeping its verdict after the last "; " ("3.9x faster").
std::string shortened(const std::string& reason, std::size_t width) {
  if (columns(reason) <= width) return reason;
  const std::size_t verdict = reason.rfind("; ");
  const std::string tail =
      verdict == std::string::npos || reason.size() - verdict > width / 2 ? std::string() : reason.substr(verdict);
  std::string head = reason.substr(0, verdict == std::string::npos ? reason.size() : verdict);
  while (!head.empty() && columns(head) + columns(tail) + 3 > width) {
    // One whole character: its continuation bytes, then its first byte ("µ" is C2 B5).
    while (!head.empty() && (static_cast<unsigned char>(head.back()) & 0xC0) == 0x80) head.pop_back();
    if (!head.empty()) head.pop_back();
  }
  return head + "..." + tail;
}

/// `suggest --kernel`'s default table, for people: parameters with one value printed once above
/// it, one column per other parameter in the order given, the counters that explain a ranking,
/// and each row's reason on the line below it, all within kTableColumns.
void print_kernel_table(const advisor::Suggestion& suggestion, const std::vector<frontend::ParameterValues>& parameters,
                        std::ostream& out) {
  std::string fixed;
  std::vector<std::string> varied;
  for (const frontend::ParameterValues& parameter : parameters) {
    if (parameter.values.size() == 1) {
      const std::string value =
          parameter.is_type() ? parameter.types.front() : std::to_string(parameter.values.front());
      fixed += (fixed.empty() ? "" : ", ") + parameter.name + "=" + value;
    } else {
      varied.push_back(parameter.name);
    }
  }
  if (!fixed.empty()) out << "every candidate: " << fixed << '\n';
  const advisor::TimeUnit unit =
      advisor::time_unit_for(suggestion.ranked.empty() ? 0.0 : suggestion.ranked.front().prediction.time_us);
  // Several entries ranked together: the entry is a column of its own.
  const bool entries = !suggestion.ranked.empty() && suggestion.ranked.front().config.word("entry") != nullptr;
  if (entries) varied.insert(varied.begin(), "entry");
  std::vector<std::string> header = {"#"};
  header.insert(header.end(), varied.begin(), varied.end());
  for (const char* name : {"time", "GB/s", "sect ld/st", "ways ld/st", "blk/SM", "regs/spill/smem"})
    header.emplace_back(name);
  header[varied.size() + 1] += std::string(" ") + unit.name;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> reasons;
  const std::string indent = "   ";
  for (std::size_t i = 0; i < suggestion.ranked.size(); ++i) {
    const advisor::Candidate& c = suggestion.ranked[i];
    const advisor::CounterSummary counters = advisor::summarize(c.prediction);
    std::vector<std::string> row = {std::to_string(i + 1)};
    for (const std::string& name : varied) row.push_back(c.config.text(name));
    const std::int64_t spill = c.compiled ? c.compiled->spill_store_bytes + c.compiled->spill_load_bytes : 0;
    row.insert(row.end(),
               {advisor::time_value(c.prediction.time_us, unit) + (c.tie_with_best ? " tie" : ""),
                fixed_text(c.prediction.achieved_bandwidth_gb_per_s, 0),
                pair_text(counters.load_sectors_per_request, counters.store_sectors_per_request, 1),
                pair_text(counters.shared_load_ways, counters.shared_store_ways, 1), std::to_string(c.blocks_per_sm),
                (c.compiled ? std::to_string(c.compiled->registers_per_thread) : std::string("-")) + "/" +
                    std::to_string(spill) + "/" + std::to_string(c.shared_bytes_per_block)});
    rows.push_back(std::move(row));
    reasons.push_back(indent + shortened(c.reason, kTableColumns - indent.size()) + '\n');
  }
  std::vector<bool> text_column(header.size(), false);
  if (entries) text_column[1] = true;
  print_aligned(header, rows, text_column, out, reasons);
  out << "(predicted; --wide: every column, error bands, whole reasons; columns: docs/glossary.md)\n";
}

void print_table(const advisor::Suggestion& suggestion, std::ostream& out) {
  // One time unit for the column, the top row's (the fastest): µs, or ms where that is large.
  const advisor::TimeUnit unit =
      advisor::time_unit_for(suggestion.ranked.empty() ? 0.0 : suggestion.ranked.front().prediction.time_us);
  std::vector<std::string> header = {"#",
                                     "config",
                                     std::string("time ") + unit.name,
                                     "GB/s",
                                     "sectors/req ld/st",
                                     "smem ways ld/st",
                                     "L1 hit%",
                                     "L2 hit%",
                                     "blocks/SM",
                                     "reason"};
  // A compiled user kernel also shows what ptxas reported, before the reason.
  const bool compiled = !suggestion.ranked.empty() && suggestion.ranked.front().compiled.has_value();
  if (compiled) header.insert(header.end() - 1, "regs/spill B/smem B");
  // Several entries of a user kernel ranked together: the entry is a column of its own.
  const bool entries = !suggestion.ranked.empty() && suggestion.ranked.front().config.word("entry") != nullptr;
  if (entries) header.insert(header.begin() + 1, "entry");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < suggestion.ranked.size(); ++i) {
    const advisor::Candidate& c = suggestion.ranked[i];
    const advisor::CounterSummary counters = advisor::summarize(c.prediction);
    Config config = c.config;
    if (entries) config.erase("entry");
    rows.push_back({std::to_string(i + 1),
                    config.values().empty() ? (entries ? "-" : suggestion.problem.family) : config.to_string(),
                    time_text(c, unit), fixed_text(c.prediction.achieved_bandwidth_gb_per_s, 0),
                    pair_text(counters.load_sectors_per_request, counters.store_sectors_per_request, 1),
                    pair_text(counters.shared_load_ways, counters.shared_store_ways, 1),
                    fixed_text(counters.l1_hit_pct, 1), fixed_text(counters.l2_hit_pct, 1),
                    std::to_string(c.blocks_per_sm), c.reason});
    if (compiled && c.compiled) {
      rows.back().insert(rows.back().end() - 1,
                         std::to_string(c.compiled->registers_per_thread) + "/" +
                             std::to_string(c.compiled->spill_store_bytes + c.compiled->spill_load_bytes) + "/" +
                             std::to_string(c.shared_bytes_per_block));
    }
    if (entries) rows.back().insert(rows.back().begin() + 1, c.config.text("entry"));
  }
  std::vector<bool> text_column(header.size(), false);
  text_column[1] = text_column.back() = true; // the config (or the entry) and the reason
  if (entries) text_column[2] = true;
  print_aligned(header, rows, text_column, out);
  out << "(predicted on the profile; the columns are explained in docs/glossary.md)\n";
}

void print_verbose(const advisor::Suggestion& suggestion, std::chrono::duration<double> wall, std::ostream& err) {
  err << "space: " << suggestion.space_size << " configs, " << suggestion.enumerated << " after the search policy, "
      << suggestion.feasible << " feasible, " << suggestion.enumerated - suggestion.feasible << " rejected\n";
  for (const advisor::RejectionCount& rejection : suggestion.rejections) {
    err << "  rejected " << std::setw(5) << rejection.count << " by " << to_string(rejection.stage) << ": "
        << rejection.reason << "  (e.g. " << rejection.example << ")\n";
  }
  auto budget = [](const SimulationOptions& simulation) {
    return simulation.work_budget == 0 ? std::string("exact simulation")
                                       : "work budget " + std::to_string(simulation.work_budget);
  };
  err << "simulation: " << suggestion.feasible << " screened with " << budget(suggestion.screening) << ", best "
      << suggestion.refined << " again with " << budget(suggestion.refinement);
  if (suggestion.refine_cut_us)
    err << " (the refine margin left out those screened at " << *suggestion.refine_cut_us << " µs or more)";
  err << '\n';
  // What the shown candidates' traces extrapolated (each one's loops: --json).
  const auto summarised = std::ranges::count_if(
      suggestion.ranked, [](const advisor::Candidate& c) { return !c.prediction.summarised_loops.empty(); });
  if (summarised > 0) {
    err << "loop summaries: " << summarised << " of the " << suggestion.ranked.size()
        << " candidates shown jumped loops ahead (each one's loops: --json)\n";
    for (const SummarisedLoop& loop : suggestion.ranked.front().prediction.summarised_loops)
      err << "  the best's " << summarised_loop_text(loop) << '\n';
  }
  if (suggestion.worst)
    err << "worst: " << suggestion.worst->config.to_string() << ": " << suggestion.worst->reason << '\n';
  err << "time: " << std::fixed << std::setprecision(3) << suggestion.elapsed.count() << " s in the advisor, "
      << wall.count() << " s in total\n";
}

void run_suggest(const CLI::App& command, const SuggestArguments& args) {
  const auto start = std::chrono::steady_clock::now();
  const ProblemOptions& problem_options = args.problem;
  const int sources = (problem_options.family.empty() ? 0 : 1) + (problem_options.pattern_file.empty() ? 0 : 1) +
                      (args.kernel.given() ? 1 : 0);
  if (sources != 1) {
    throw InputError(
        "suggest: give exactly one of --pattern FAMILY, --pattern-file FILE or --kernel FILE.cu / --spec FILE.json");
  }
  if (!args.kernel.given()) {
    check_pattern_choice(command, problem_options);
    reject_flags(command, {"--max-candidates"}, "without --kernel/--spec (it caps a kernel spec's space)");
  }
  if (args.top <= 0) throw InputError("--top must be at least 1, got " + std::to_string(args.top));
  advisor::SuggestOptions options;
  // The plot shows every feasible candidate; the table and JSON still show --top.
  options.top = args.plot.empty() ? static_cast<std::size_t>(args.top) : std::numeric_limits<std::size_t>::max();

  advisor::Suggestion suggestion;
  LoadedProfile loaded;
  std::string subject;
  std::string compile_note;
  std::optional<nlohmann::json> out_of_bounds; // a kernel spec's loads outside every buffer, when it simulates them
  std::vector<frontend::ParameterValues> parameters; // a kernel spec's, in the order given
  if (args.kernel.given()) {
    if (problem_options.n != 0 || problem_options.m != 0 || problem_options.k != 0 || !args.fix.empty()) {
      throw InputError("--n/--m/--k/--fix describe a built-in pattern; a kernel spec has --param and --arg");
    }
    loaded = load_profile_for_cli(problem_options.profile);
    Progress progress(args.progress, !args.json);
    KernelRanking ranking = rank_kernel(args.kernel, loaded.profile, options, progress);
    suggestion = std::move(ranking.suggestion);
    subject = ranking.subject;
    parameters = std::move(ranking.parameters);
    compile_note = "compiled: " + std::to_string(ranking.compilations) + " of " + std::to_string(ranking.builds) +
                   " builds (the rest from the cache)\n";
    const frontend::OutOfBoundsLoads& outside = ranking.out_of_bounds_loads;
    if (ranking.out_of_bounds_reads_simulated) {
      out_of_bounds =
          nlohmann::json{{"candidates", ranking.out_of_bounds_candidates},
                         {"warp_loads", outside.warp_loads},
                         {"first", outside.first.empty() ? nlohmann::json(nullptr) : nlohmann::json(outside.first)}};
    }
    if (outside.warp_loads > 0) {
      compile_note += "out of bounds: " + std::to_string(outside.warp_loads) +
                      " warp loads outside every buffer in the traced blocks of " +
                      std::to_string(ranking.out_of_bounds_candidates) +
                      " candidates, simulated at their addresses; the first at " + outside.first + "\n";
    }
  } else if (!problem_options.pattern_file.empty()) {
    reject_flags(command, {"--fix", "--top"}, "with --pattern-file (the file describes one kernel: nothing to search)");
    const KernelPattern pattern = load_pattern(problem_options.pattern_file);
    loaded = load_profile_for_cli(problem_options.profile);
    suggestion = advisor::suggest_pattern(pattern, loaded.profile, options);
  } else {
    const ProblemSpec problem = problem_options.problem();
    options.fixed = Config::parse(args.fix);
    loaded = load_profile_for_cli(problem_options.profile);
    suggestion = advisor::suggest(problem, loaded.profile, options);
    warn_about_size(problem);
  }
  if (!args.plot.empty()) {
    std::vector<std::string> order; // a kernel spec's parameters as given; a family's keys as its configs list them
    for (const frontend::ParameterValues& parameter : parameters) order.push_back(parameter.name);
    if (order.empty() && !suggestion.ranked.empty()) {
      for (const auto& [name, value] : suggestion.ranked.front().config.values()) order.push_back(name);
    }
    const std::string title = subject.empty()
                                  ? (problem_options.pattern_file.empty() ? advisor::describe(suggestion.problem)
                                                                          : problem_options.pattern_file)
                                  : subject;
    tuner::write_text_file(args.plot,
                           advisor::suggestion_svg(suggestion, title + " on " + loaded.profile.device.name, order));
    suggestion.ranked.resize(std::min(suggestion.ranked.size(), static_cast<std::size_t>(args.top)));
  }
  if (!suggestion.ranked.empty()) {
    warn_about_grid(suggestion.ranked.front().prediction, loaded.profile,
                    suggestion.ranked.size() > 1 ? "top-1: " : "");
  }
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;

  if (args.json) {
    nlohmann::json json = advisor::suggestion_to_json(suggestion);
    json["cachewise_version"] = CACHEWISE_VERSION;
    json["profile"] = profile_json(loaded);
    if (!problem_options.pattern_file.empty())
      json["pattern"] = problem_options.subject_json(suggestion.problem.family);
    if (!subject.empty()) json["kernel"] = subject;
    if (out_of_bounds) json["out_of_bounds_loads"] = *out_of_bounds;
    print_json(json);
  } else {
    std::cout << "profile: " << loaded.profile.device.name << " from " << loaded.path.string() << " [" << loaded.source
              << "], calibration " << suggestion.calibration << "\n";
    if (subject.empty()) {
      subject =
          problem_options.pattern_file.empty() ? advisor::describe(suggestion.problem) : problem_options.pattern_file;
    }
    std::cout << subject << ": " << suggestion.feasible << " feasible of " << suggestion.enumerated
              << " candidates, ranked by predicted time\n";
    if (args.kernel.given() && !args.wide) {
      print_kernel_table(suggestion, parameters, std::cout);
    } else {
      print_table(suggestion, std::cout);
    }
  }
  if (args.verbose) {
    std::cout.flush(); // the table first, then the details on stderr
    std::cerr << compile_note;
    print_verbose(suggestion, wall, std::cerr);
  }
}

void add_suggest(CLI::App& root) {
  auto* command = root.add_subcommand(
      "suggest", "Rank a pattern's layouts (tile, pad, block, ept, vector) by predicted time, with reasons");
  auto args = std::make_shared<SuggestArguments>();
  add_problem_options(*command, args->problem, PatternFileOption::offered);
  command->add_option("--top", args->top, "How many configs to show")->capture_default_str();
  command->add_option("--fix", args->fix, "Pin keys, e.g. stride=4 or radius=2,smem=1");
  command->add_flag("--json", args->json, "Print JSON instead of the table");
  command->add_flag("--verbose", args->verbose, "Print what was considered, rejected and the time taken (stderr)");
  command->add_option("--plot", args->plot,
                      "Also draw every feasible candidate's predicted time and band (and a heat map over two varied "
                      "parameters) as SVG here");
  command->add_flag(
      "--progress", args->progress,
      "--kernel: report progress on stderr from the start, even with --json or when stderr is no terminal");
  command->add_flag("--wide", args->wide,
                    "--kernel: the full table (every column, error bands, whole reasons) instead of 100 columns");
  add_kernel_options(*command, args->kernel);
  add_max_candidates_option(*command, args->kernel);
  command->callback([args, command] { run_suggest(*command, *args); });
}

} // namespace

CACHEWISE_REGISTER_COMMAND(20, add_suggest);

} // namespace cachewise::cli
