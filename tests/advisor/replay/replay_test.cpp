// Replays the recorded H200 measurements (tests/data/recorded, scripts/eval/extract_recorded.py)
// through today's model and asserts the figures docs/validation-h200.md and the README print
// (tests/data/recorded/figures.json, written by scripts/eval/held_out.py): top-1/best per
// family in-sample and held out, the time error of the predicted top 32 (what suggest
// refines), and the unfitted counters' mean absolute errors. A model change that moves a figure fails here until the
// docs follow.
#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/advisor.hpp"
#include "cachewise/model.hpp"
#include "cachewise/model/families/device_pattern.hpp"

namespace cachewise::advisor {
namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return json::parse(in);
}

const std::string kRecorded = std::string(CACHEWISE_TEST_DATA_DIR) + "/recorded/";

struct Predicted {
  std::vector<std::int64_t> ranks; ///< by the space's config order; 0: not among the ranked
  std::vector<double> times_us;
};

/// The figures of one (run, case) under one prediction, as held_out.py's pair_figures takes them.
struct PairFigures {
  double top1_over_best = 0;
  std::vector<double> top_errors; ///< |predicted / measured - 1| of the ranked configs
};

ProblemSpec problem_of(const json& space) {
  const json& p = space.at("problem");
  return {p.at("family").get<std::string>(), p.at("n").get<std::int64_t>(), p.at("m").get<std::int64_t>(),
          p.at("k").get<std::int64_t>(), parse_data_type(p.at("dtype").get<std::string>())};
}

std::string config_text(const json& keys, const json& values) {
  std::string text;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    text += (i ? "," : "") + keys[i].get<std::string>() + "=" + std::to_string(values[i].get<std::int64_t>());
  }
  return text;
}

/// suggest() as a user runs it: every config screened, the best refined and ranked.
Predicted predict_space(const json& space, const DeviceProfile& profile) {
  SuggestOptions options;
  options.top = static_cast<std::size_t>(profile.calibration.screening_refined_candidates.value);
  const Suggestion suggestion = suggest(problem_of(space), profile, options);
  std::map<std::string, std::pair<std::int64_t, double>> by_config;
  for (std::size_t i = 0; i < suggestion.ranked.size(); ++i) {
    by_config[suggestion.ranked[i].config.to_string()] = {static_cast<std::int64_t>(i + 1),
                                                          suggestion.ranked[i].prediction.time_us};
  }
  Predicted predicted;
  for (const json& values : space.at("configs")) {
    const auto found = by_config.find(config_text(space.at("keys"), values));
    predicted.ranks.push_back(found == by_config.end() ? 0 : found->second.first);
    predicted.times_us.push_back(found == by_config.end() ? 0.0 : found->second.second);
  }
  return predicted;
}

PairFigures pair_figures(const json& run_case, const Predicted& predicted) {
  const json& measured = run_case.at("times_us");
  const auto time = [&](std::size_t i) { return measured[i].get<double>(); };
  std::vector<std::size_t> ranked;
  double best_us = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < measured.size(); ++i) {
    if (measured[i].is_null()) continue;
    best_us = std::min(best_us, time(i));
    if (predicted.ranks[i] > 0) ranked.push_back(i);
  }
  std::ranges::sort(ranked, {}, [&](std::size_t i) { return predicted.ranks[i]; });
  PairFigures figures;
  figures.top1_over_best = time(ranked.front()) / best_us;
  for (std::size_t i : ranked) figures.top_errors.push_back(std::abs(predicted.times_us[i] / time(i) - 1.0));
  return figures;
}

double median(std::vector<double> values) {
  std::ranges::sort(values);
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

std::string family_of(const std::string& case_key) { return case_key.substr(0, case_key.find(' ')); }

/// Asserts one summary (held_out.py's summarize) per family and for "all".
void expect_summary(const std::map<std::string, std::vector<PairFigures>>& pairs_by_case, const json& expected,
                    const std::string& what) {
  for (const auto& [family, figures] : expected.items()) {
    std::vector<double> ratios;
    std::vector<double> errors;
    for (const auto& [key, pairs] : pairs_by_case) {
      if (family != "all" && family_of(key) != family) continue;
      for (const PairFigures& pair : pairs) {
        ratios.push_back(pair.top1_over_best);
        errors.insert(errors.end(), pair.top_errors.begin(), pair.top_errors.end());
      }
    }
    ASSERT_EQ(ratios.size(), figures.at("pairs").get<std::size_t>()) << what << " " << family;
    EXPECT_NEAR(median(ratios), figures.at("top1_over_best_median").get<double>(), 6e-5) << what << " " << family;
    EXPECT_NEAR(std::ranges::max(ratios), figures.at("top1_over_best_worst").get<double>(), 6e-5)
        << what << " " << family;
    const double mean_error = std::accumulate(errors.begin(), errors.end(), 0.0) / static_cast<double>(errors.size());
    EXPECT_NEAR(mean_error, figures.at("top_time_error_mean").get<double>(), 6e-5) << what << " " << family;
  }
}

class Replay : public testing::Test {
protected:
  static void SetUpTestSuite() {
    spaces_ = new json(read_json(kRecorded + "spaces.json"));
    figures_ = new json(read_json(kRecorded + "figures.json"));
    runs_ = new std::vector<json>();
    for (int run = 11; run <= 21; ++run) runs_->push_back(read_json(kRecorded + "run" + std::to_string(run) + ".json"));
  }
  static void TearDownTestSuite() {
    delete spaces_;
    delete figures_;
    delete runs_;
  }

  /// Today's prediction of every case with `values` in place of the H200 calibration's.
  static const std::map<std::string, Predicted>& predictions(const json& values) {
    DeviceProfile profile = load_profile(CACHEWISE_H200_PROFILE);
    Calibration& calibration = profile.calibration;
    for (const auto& [key, value] : values.items()) {
      if (key == "memory_levels_combine_exponent")
        calibration.memory_levels_combine_exponent.value = value.get<double>();
      else if (key == "loaded_cache_latency_factor")
        calibration.loaded_cache_latency_factor.value = value.get<double>();
      else if (key == "loaded_dram_latency_factor") calibration.loaded_dram_latency_factor.value = value.get<double>();
      else if (key == "block_launch_cycles") calibration.block_launch_cycles.value = value.get<double>();
      else ADD_FAILURE() << "figures.json fits an unknown calibration value " << key;
    }
    // Folds that chose the same values share one prediction.
    static std::map<std::string, std::map<std::string, Predicted>> cache;
    auto& entry = cache[calibration_to_json(calibration).dump()];
    if (entry.empty()) {
      for (const json& space : spaces_->at("cases"))
        entry[space.at("case").get<std::string>()] = predict_space(space, profile);
    }
    return entry;
  }

  static std::map<std::string, std::vector<PairFigures>> pairs(const std::map<std::string, Predicted>& predicted,
                                                               const std::vector<std::string>& cases) {
    std::map<std::string, std::vector<PairFigures>> out;
    for (const json& run : *runs_) {
      for (const json& run_case : run.at("cases")) {
        const std::string key = run_case.at("case").get<std::string>();
        if (std::ranges::find(cases, key) != cases.end()) out[key].push_back(pair_figures(run_case, predicted.at(key)));
      }
    }
    return out;
  }

  static std::vector<std::string> all_cases() {
    std::vector<std::string> keys;
    for (const json& space : spaces_->at("cases")) keys.push_back(space.at("case").get<std::string>());
    return keys;
  }

  static json* spaces_;
  static json* figures_;
  static std::vector<json>* runs_;
};

json* Replay::spaces_ = nullptr;
json* Replay::figures_ = nullptr;
std::vector<json>* Replay::runs_ = nullptr;

TEST_F(Replay, AdoptedCalibrationGivesTheDocumentedInSampleFigures) {
  expect_summary(pairs(predictions(json::object()), all_cases()), figures_->at("adopted").at("figures"), "adopted");
}

TEST_F(Replay, HeldOutFiguresFollowFromEachFoldsChosenValues) {
  for (const auto& [split, content] : figures_->at("splits").items()) {
    std::map<std::string, std::vector<PairFigures>> held;
    for (const json& fold : content.at("folds")) {
      const auto cases = fold.at("held_out_cases").get<std::vector<std::string>>();
      for (auto& [key, value] : pairs(predictions(fold.at("chosen")), cases)) held[key] = std::move(value);
    }
    expect_summary(held, content.at("held_out"), split);
  }
}

TEST_F(Replay, UnfittedCountersKeepTheirDocumentedErrors) {
  // Mean absolute error over every profiled config of every recorded run, each config
  // simulated as `advisor validate` refines it (counters do not depend on the fitted time
  // constants).
  const DeviceProfile profile = load_profile(CACHEWISE_H200_PROFILE);
  std::map<std::pair<std::string, std::string>, std::map<std::string, double, std::less<>>> simulated;
  const auto predicted_metrics = [&](const std::string& case_key, const std::string& config) -> const auto& {
    auto& metrics = simulated[{case_key, config}];
    if (metrics.empty()) {
      for (const json& space : spaces_->at("cases")) {
        if (space.at("case") != case_key) continue;
        const ProblemSpec problem = problem_of(space);
        metrics = simulate(build_pattern(problem, Config::parse(config), profile.calibration), profile).metrics;
      }
    }
    return metrics;
  };
  const auto value = [](const auto& metrics, const std::string& name) -> std::optional<double> {
    const auto find = [&](const std::string& metric) -> std::optional<double> {
      const auto found = metrics.find(metric);
      if (found == metrics.end()) return std::nullopt;
      return found->second;
    };
    if (name == "L1 hit %") return find("l1tex__t_sector_hit_rate.pct");
    if (name == "L2 hit %") return find("lts__t_sector_hit_rate.pct");
    if (name == "DRAM read MB") {
      const auto read = find("dram__bytes_read.sum");
      return read ? std::optional(*read / 1e6) : std::nullopt;
    }
    if (name == "DRAM MB") {
      const auto read = find("dram__bytes_read.sum");
      const auto write = find("dram__bytes_write.sum");
      return read && write ? std::optional((*read + *write) / 1e6) : std::nullopt;
    }
    if (name == "bank conflicts") {
      const auto ld = find("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
      const auto st = find("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
      return ld && st ? std::optional(*ld + *st) : std::nullopt;
    }
    const std::string op = name == "sectors/req ld" ? "ld" : "st";
    const auto sectors = find("l1tex__t_sectors_pipe_lsu_mem_global_op_" + op + ".sum");
    const auto requests = find("l1tex__t_requests_pipe_lsu_mem_global_op_" + op + ".sum");
    if (!sectors || !requests || *requests == 0) return std::nullopt;
    return *sectors / *requests;
  };
  for (const auto& [name, expected] : figures_->at("adopted").at("counters").items()) {
    double sum = 0;
    std::size_t count = 0;
    for (const json& run : *runs_) {
      for (const json& run_case : run.at("cases")) {
        const auto names = run_case.at("counter_names").get<std::vector<std::string>>();
        for (const json& profiled : run_case.at("counters")) {
          std::map<std::string, double, std::less<>> measured;
          for (std::size_t i = 0; i < names.size(); ++i) measured[names[i]] = profiled.at("values")[i].get<double>();
          const auto m = value(measured, name);
          const auto p =
              value(predicted_metrics(run_case.at("case").get<std::string>(), profiled.at("config").get<std::string>()),
                    name);
          if (!m || !p) continue;
          sum += std::abs(*p - *m);
          ++count;
        }
      }
    }
    ASSERT_EQ(count, expected.at("configs").get<std::size_t>()) << name;
    EXPECT_NEAR(sum / static_cast<double>(count), expected.at("mae").get<double>(),
                6e-5 * std::max(1.0, expected.at("mae").get<double>()))
        << name;
  }
}

} // namespace
} // namespace cachewise::advisor
