// Calibration <-> JSON (docs/calibration.md) and the time error bands a calibration gives.
#include "cachewise/model/profile/calibration.hpp"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cachewise/model/errors.hpp"
#include "cachewise/model/problem.hpp"
#include "json_node.hpp"

namespace cachewise {
namespace {

using detail::describe;
using detail::Node;
using nlohmann::json;

enum class Bound { positive, non_negative, at_least_one };

CalibratedValue read_value(const Node& parent, std::string_view key, Bound bound) {
  const Node node = parent.object(key);
  CalibratedValue value{node.number("value"), node.string("source")};
  const std::string shown = describe(node.required("value"));
  if (bound == Bound::positive && value.value <= 0) Node::fail(node.at("value"), "expected a value > 0, got " + shown);
  if (bound == Bound::non_negative && value.value < 0)
    Node::fail(node.at("value"), "expected a value >= 0, got " + shown);
  if (bound == Bound::at_least_one && value.value < 1)
    Node::fail(node.at("value"), "expected a value >= 1, got " + shown);
  if (value.source.empty()) Node::fail(node.at("source"), "expected where the value came from, got an empty string");
  return value;
}

/// A count (blocks, candidates): a whole number, at most 1e9.
CalibratedValue read_whole_value(const Node& parent, std::string_view key, Bound bound) {
  const CalibratedValue value = read_value(parent, key, bound);
  if (value.value != std::floor(value.value) || value.value > 1.0e9) {
    Node::fail(parent.at(key) + ".value", "expected a whole number up to 1000000000, got " + describe(value.value));
  }
  return value;
}

json write_value(const CalibratedValue& value) { return {{"value", value.value}, {"source", value.source}}; }

/// "TMxTN" with TM, TN in 1, 2, 4, 8: gemm's compiled thread tiles.
bool is_thread_tile(std::string_view key) {
  static const std::vector<std::string> kTiles = [] {
    std::vector<std::string> tiles;
    for (int tm : {1, 2, 4, 8}) {
      for (int tn : {1, 2, 4, 8}) tiles.push_back(std::to_string(tm) + "x" + std::to_string(tn));
    }
    return tiles;
  }();
  return std::ranges::find(kTiles, key) != kTiles.end();
}

GemmOverheadFit read_gemm_overhead(const Node& node) {
  GemmOverheadFit fit;
  fit.per_tile_element_instructions = read_value(node, "per_tile_element_instructions", Bound::non_negative);
  fit.per_k_step_instructions = read_value(node, "per_k_step_instructions", Bound::non_negative);
  const Node inner = node.object("inner_step_instructions");
  fit.inner_step_source = inner.string("source");
  const Node by_tile = inner.object("by_thread_tile");
  for (const auto& [key, value] : by_tile.raw().items()) {
    if (!is_thread_tile(key)) Node::fail(by_tile.at(key), "expected a thread tile TMxTN with TM, TN in 1, 2, 4, 8");
    const double instructions = by_tile.number(key);
    if (instructions < 0) Node::fail(by_tile.at(key), "expected a value >= 0, got " + describe(value));
    fit.inner_step_instructions_by_thread_tile[key] = instructions;
  }
  return fit;
}

json write_gemm_overhead(const GemmOverheadFit& fit) {
  json by_tile = json::object();
  for (const auto& [tile, instructions] : fit.inner_step_instructions_by_thread_tile) by_tile[tile] = instructions;
  return {{"per_tile_element_instructions", write_value(fit.per_tile_element_instructions)},
          {"per_k_step_instructions", write_value(fit.per_k_step_instructions)},
          {"inner_step_instructions", {{"by_thread_tile", by_tile}, {"source", fit.inner_step_source}}}};
}

TimeErrorBand read_band(const Node& node) {
  TimeErrorBand band;
  band.low_ratio = node.number("low_ratio");
  band.high_ratio = node.number("high_ratio");
  band.residuals = node.integer("residuals", 1, INT64_MAX);
  band.source = node.string("source");
  if (band.low_ratio <= 0)
    Node::fail(node.at("low_ratio"), "expected a ratio > 0, got " + describe(node.required("low_ratio")));
  if (band.high_ratio < band.low_ratio) {
    Node::fail(node.at("high_ratio"), "expected a ratio >= low_ratio, got " + describe(node.required("high_ratio")));
  }
  return band;
}

json write_band(const TimeErrorBand& band) {
  return {{"low_ratio", band.low_ratio},
          {"high_ratio", band.high_ratio},
          {"residuals", band.residuals},
          {"source", band.source}};
}

} // namespace

std::optional<TimeErrorBand> time_error_band(const Calibration& calibration, std::string_view family) {
  for (std::string_view key : {family, kAllFamiliesBand}) {
    if (const auto found = calibration.time_error_bands.find(key); found != calibration.time_error_bands.end()) {
      return found->second;
    }
  }
  return std::nullopt;
}

std::optional<TimeInterval> time_interval(const Calibration& calibration, std::string_view family, double time_us) {
  const std::optional<TimeErrorBand> band = time_error_band(calibration, family);
  if (!band) return std::nullopt;
  return TimeInterval{time_us * band->low_ratio, time_us * band->high_ratio};
}

std::string time_interval_text(const Calibration& calibration, std::string_view family, double time_us) {
  const std::optional<TimeInterval> interval = time_interval(calibration, family, time_us);
  if (!interval) return "no error band (calibration " + calibration.name + ")";
  char text[96];
  std::snprintf(text, sizeof text, "expected %.2f-%.2f us", interval->low_us, interval->high_us);
  return std::string(text) + " (calibration " + calibration.name + ")";
}

json time_interval_json(const Calibration& calibration, std::string_view family, double time_us) {
  const std::optional<TimeInterval> interval = time_interval(calibration, family, time_us);
  return {{"calibration", calibration.name},
          {"time_band_us", interval ? json{{"low", interval->low_us}, {"high", interval->high_us}} : json(nullptr)}};
}

Calibration calibration_from_json(const json& document, const std::string& path) {
  const Node root(document, path);
  Calibration calibration;
  calibration.name = root.string("name");
  if (calibration.name.empty()) Node::fail(root.at("name"), "expected a name, got an empty string");
  calibration.description = root.string_or_empty("description");
  calibration.combine_exponent = read_value(root, "combine_exponent", Bound::at_least_one);
  calibration.memory_levels_combine_exponent = read_value(root, "memory_levels_combine_exponent", Bound::at_least_one);
  calibration.loaded_dram_latency_factor = read_value(root, "loaded_dram_latency_factor", Bound::at_least_one);
  calibration.loaded_cache_latency_factor = read_value(root, "loaded_cache_latency_factor", Bound::at_least_one);
  calibration.block_launch_cycles = read_value(root, "block_launch_cycles", Bound::non_negative);
  calibration.barrier_cycles = read_value(root, "barrier_cycles", Bound::non_negative);
  calibration.launch_overhead_us = read_value(root, "launch_overhead_us", Bound::non_negative);
  calibration.write_run_neighbour_blocks = read_whole_value(root, "write_run_neighbour_blocks", Bound::non_negative);
  calibration.write_run_compact_factor = read_whole_value(root, "write_run_compact_factor", Bound::at_least_one);
  calibration.gemm_overhead = read_gemm_overhead(root.object("gemm_overhead"));
  if (root.has("same_address_atomic_cycles")) {
    calibration.same_address_atomic_cycles = read_value(root, "same_address_atomic_cycles", Bound::non_negative);
  }
  if (root.has("register_division_instructions")) {
    calibration.register_division_instructions =
        read_value(root, "register_division_instructions", Bound::at_least_one);
  }
  if (root.has("constant_request_cycles")) {
    calibration.constant_request_cycles = read_value(root, "constant_request_cycles", Bound::non_negative);
  }
  if (root.has("stencil3d_streaming_batch_rounds")) {
    calibration.stencil3d_streaming_batch_rounds =
        read_whole_value(root, "stencil3d_streaming_batch_rounds", Bound::at_least_one);
  }
  calibration.screening_refined_candidates =
      read_whole_value(root, "screening_refined_candidates", Bound::at_least_one);
  if (root.has("screening_refine_margin")) {
    calibration.screening_refine_margin = read_value(root, "screening_refine_margin", Bound::at_least_one);
  }
  if (root.has("time_error_bands")) {
    const Node bands = root.object("time_error_bands");
    for (const auto& [family, value] : bands.raw().items()) {
      if (family != kAllFamiliesBand) {
        try {
          check_family_name(family);
        } catch (const InputError& error) {
          Node::fail(bands.at(family), error.what());
        }
      }
      calibration.time_error_bands[family] = read_band(bands.object(family));
    }
  }
  return calibration;
}

json calibration_to_json(const Calibration& calibration) {
  json bands = json::object();
  for (const auto& [family, band] : calibration.time_error_bands) bands[family] = write_band(band);
  json out{{"name", calibration.name},
           {"combine_exponent", write_value(calibration.combine_exponent)},
           {"memory_levels_combine_exponent", write_value(calibration.memory_levels_combine_exponent)},
           {"loaded_dram_latency_factor", write_value(calibration.loaded_dram_latency_factor)},
           {"loaded_cache_latency_factor", write_value(calibration.loaded_cache_latency_factor)},
           {"block_launch_cycles", write_value(calibration.block_launch_cycles)},
           {"barrier_cycles", write_value(calibration.barrier_cycles)},
           {"launch_overhead_us", write_value(calibration.launch_overhead_us)},
           {"same_address_atomic_cycles", write_value(calibration.same_address_atomic_cycles)},
           {"register_division_instructions", write_value(calibration.register_division_instructions)},
           {"constant_request_cycles", write_value(calibration.constant_request_cycles)},
           {"write_run_neighbour_blocks", write_value(calibration.write_run_neighbour_blocks)},
           {"write_run_compact_factor", write_value(calibration.write_run_compact_factor)},
           {"gemm_overhead", write_gemm_overhead(calibration.gemm_overhead)},
           {"stencil3d_streaming_batch_rounds", write_value(calibration.stencil3d_streaming_batch_rounds)},
           {"screening_refined_candidates", write_value(calibration.screening_refined_candidates)},
           {"time_error_bands", bands}};
  if (calibration.screening_refine_margin.value > 0) // optional: absent means none
    out["screening_refine_margin"] = write_value(calibration.screening_refine_margin);
  if (!calibration.description.empty()) out["description"] = calibration.description;
  return out;
}

} // namespace cachewise
