// cachewise::tuner strategies: the order candidates are measured in, and when model-ranked
// tuning stops widening. Planning is apart from measuring so it can be replayed on recorded times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachewise/model/problem.hpp"

namespace cachewise::tuner {

/// Predicted time of a config (any unit: only the order matters), for the model-ranked strategy.
using Predict = std::function<double(const Config& config)>;

enum class StrategyKind { exhaustive, random, model_ranked };

struct Strategy {
  StrategyKind kind = StrategyKind::exhaustive;
  std::uint64_t seed = 1; ///< random: the visiting order is a seeded shuffle of the space
  Predict predict;        ///< model_ranked: candidates are visited by ascending prediction
  int batch = 3;          ///< model_ranked: measure this many, then widen by this many

  static Strategy exhaustive() { return {}; }
  static Strategy random(std::uint64_t seed) { return {StrategyKind::random, seed, {}, 3}; }
  /// Measures the `batch` best-predicted candidates. If their measured order contradicts the
  /// predicted one (a candidate predicted slower is faster beyond noise: half the policy's
  /// max_ci_width_fraction), widens by `batch`, and keeps widening while each new batch
  /// beats the leader found before it (model_ranked_stop_reason).
  static Strategy model_ranked(Predict predict, int batch = 3) {
    return {StrategyKind::model_ranked, 1, std::move(predict), batch};
  }
  /// "exhaustive", "random (seed 7)", "model-ranked (batch 3)".
  std::string description() const;
};

/// Parses "exhaustive", "random", "model" (CLI spelling); throws InputError naming the valid ones.
StrategyKind parse_strategy_kind(std::string_view text);

/// The order a strategy visits `candidates` in, before any measurement: all of them
/// (exhaustive, model_ranked sorted by prediction, ties kept in space order) or a seeded
/// shuffle (random; the same seed gives the same order on every platform).
std::vector<std::size_t> visiting_order(const std::vector<Config>& candidates, const Strategy& strategy);

/// The model-ranked widening rule. `times_ms` are the measured times of the first candidates
/// in predicted order (nullopt = failed), a whole number of batches. Returns why to stop, or
/// nothing to measure the next batch. After the first batch: stop when its measured order
/// agrees with the predicted one (no candidate predicted slower is faster by more than
/// `noise_fraction`). After a widening batch: stop when it found nothing faster than the
/// leader before it (again beyond `noise_fraction`).
std::optional<std::string> model_ranked_stop_reason(const std::vector<std::optional<double>>& times_ms, int batch,
                                                    double noise_fraction);

} // namespace cachewise::tuner
