// Suggestion -> JSON, for `advisor suggest --json` and other programs.
#include <nlohmann/json.hpp>

#include "cachewise/advisor.hpp"

namespace cachewise::advisor {
namespace {

nlohmann::json candidate_to_json(const Candidate& candidate) {
  nlohmann::json json = {
      {"config", candidate.config.to_string()},
      {"threads_per_block", candidate.threads_per_block},
      {"shared_bytes_per_block", candidate.shared_bytes_per_block},
      {"registers_per_thread", candidate.registers_per_thread},
      {"blocks_per_sm", candidate.blocks_per_sm},
      {"prediction", prediction_to_json(candidate.prediction)},
      {"reason", candidate.reason},
  };
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [key, value] : candidate.config.values()) {
    if (const std::string* word = candidate.config.word(key)) values[key] = *word; // a type or an entry
    else values[key] = value;
  }
  json["config_values"] = std::move(values);
  if (const auto& compiled = candidate.compiled) {
    json["compiler"] = {{"registers_per_thread", compiled->registers_per_thread},
                        {"stack_frame_bytes", compiled->stack_frame_bytes},
                        {"spill_store_bytes", compiled->spill_store_bytes},
                        {"spill_load_bytes", compiled->spill_load_bytes},
                        {"static_shared_bytes", compiled->static_shared_bytes}};
  }
  if (!candidate.prediction.summarised_loops.empty())
    json["summarised_loops"] = summarised_loops_to_json(candidate.prediction.summarised_loops);
  if (candidate.time_band) {
    json["time_band_us"] = {{"low", candidate.time_band->low_us}, {"high", candidate.time_band->high_us}};
  }
  json["tie_with_best"] = candidate.tie_with_best;
  return json;
}

nlohmann::json simulation_to_json(const SimulationOptions& options) {
  return {{"work_budget", options.work_budget}, {"max_simulated_blocks", options.max_simulated_blocks}};
}

} // namespace

std::string to_string(RejectionStage stage) {
  switch (stage) {
  case RejectionStage::compile: return "compile";
  case RejectionStage::family_rules: return "family rules";
  case RejectionStage::device_memory: return "device memory";
  case RejectionStage::device_limits: return "device limits";
  case RejectionStage::occupancy: return "occupancy";
  case RejectionStage::trace: return "trace";
  }
  return "family rules";
}

nlohmann::json suggestion_to_json(const Suggestion& suggestion) {
  nlohmann::json ranked = nlohmann::json::array();
  for (std::size_t i = 0; i < suggestion.ranked.size(); ++i) {
    nlohmann::json entry = candidate_to_json(suggestion.ranked[i]);
    entry["rank"] = i + 1;
    ranked.push_back(std::move(entry));
  }
  nlohmann::json rejections = nlohmann::json::array();
  for (const RejectionCount& rejection : suggestion.rejections) {
    rejections.push_back({{"stage", to_string(rejection.stage)},
                          {"reason", rejection.reason},
                          {"count", rejection.count},
                          {"message", rejection.message},
                          {"example", rejection.example}});
  }
  const ProblemSpec& problem = suggestion.problem;
  nlohmann::json out = {
      {"problem",
       {{"pattern", problem.family},
        {"n", problem.n},
        {"m", problem.m},
        {"k", problem.k},
        {"dtype", to_string(problem.dtype)}}},
      {"space_size", suggestion.space_size},
      {"enumerated", suggestion.enumerated},
      {"feasible", suggestion.feasible},
      {"rejected", suggestion.enumerated - suggestion.feasible},
      {"rejections", std::move(rejections)},
      {"screening", simulation_to_json(suggestion.screening)},
      {"refinement", simulation_to_json(suggestion.refinement)},
      {"refined", suggestion.refined},
      {"calibration", suggestion.calibration},
      {"time_error_band", suggestion.time_error_band
                              ? nlohmann::json{{"low_ratio", suggestion.time_error_band->low_ratio},
                                               {"high_ratio", suggestion.time_error_band->high_ratio},
                                               {"residuals", suggestion.time_error_band->residuals},
                                               {"source", suggestion.time_error_band->source}}
                              : nlohmann::json(nullptr)},
      {"elapsed_ms", suggestion.elapsed.count() * 1000.0},
      {"ranked", std::move(ranked)},
      {"worst", suggestion.worst ? candidate_to_json(*suggestion.worst) : nlohmann::json(nullptr)},
  };
  if (suggestion.refine_cut_us) out["refine_cut_us"] = *suggestion.refine_cut_us;
  return out;
}

} // namespace cachewise::advisor
