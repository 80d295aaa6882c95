// Strategies: the order candidates are visited in, and when model-ranked tuning stops widening.
#include <algorithm>
#include <numeric>
#include <random>

#include "cachewise/tuner/strategy.hpp"

namespace cachewise::tuner {

std::string Strategy::description() const {
  switch (kind) {
  case StrategyKind::exhaustive: return "exhaustive";
  case StrategyKind::random: return "random (seed " + std::to_string(seed) + ")";
  case StrategyKind::model_ranked: return "model-ranked (batch " + std::to_string(batch) + ")";
  }
  return {};
}

StrategyKind parse_strategy_kind(std::string_view text) {
  if (text == "exhaustive") return StrategyKind::exhaustive;
  if (text == "random") return StrategyKind::random;
  if (text == "model") return StrategyKind::model_ranked;
  throw InputError("unknown strategy '" + std::string(text) + "' (valid: exhaustive, random, model)");
}

std::vector<std::size_t> visiting_order(const std::vector<Config>& candidates, const Strategy& strategy) {
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (strategy.kind == StrategyKind::random) {
    // Fisher-Yates on mt19937_64, whose output the standard fixes (std::shuffle's is not).
    std::mt19937_64 generator(strategy.seed);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[generator() % i]);
  } else if (strategy.kind == StrategyKind::model_ranked) {
    if (!strategy.predict) throw InputError("model-ranked strategy needs a prediction function");
    std::vector<double> predicted(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) predicted[i] = strategy.predict(candidates[i]);
    std::ranges::stable_sort(order, {}, [&](std::size_t i) { return predicted[i]; });
  }
  return order;
}

std::optional<std::string> model_ranked_stop_reason(const std::vector<std::optional<double>>& times_ms, int batch,
                                                    double noise_fraction) {
  const std::size_t batch_size = static_cast<std::size_t>(std::max(batch, 1));
  const auto clearly_faster = [&](double a, double b) { return a < b * (1.0 - noise_fraction); };
  if (times_ms.size() <= batch_size) {
    for (std::size_t i = 0; i < times_ms.size(); ++i) {
      for (std::size_t j = i + 1; j < times_ms.size(); ++j) {
        if (times_ms[i] && times_ms[j] && clearly_faster(*times_ms[j], *times_ms[i])) return std::nullopt;
      }
    }
    if (std::ranges::none_of(times_ms, [](const auto& t) { return t.has_value(); })) return std::nullopt;
    return "measured order agrees with the prediction";
  }
  const std::size_t batch_start = times_ms.size() - std::min(batch_size, times_ms.size());
  std::optional<double> leader_before;
  for (std::size_t i = 0; i < batch_start; ++i) {
    if (times_ms[i] && (!leader_before || *times_ms[i] < *leader_before)) leader_before = times_ms[i];
  }
  if (!leader_before) return std::nullopt;
  for (std::size_t i = batch_start; i < times_ms.size(); ++i) {
    if (times_ms[i] && clearly_faster(*times_ms[i], *leader_before)) return std::nullopt;
  }
  return "widening found nothing faster than the leader";
}

} // namespace cachewise::tuner
