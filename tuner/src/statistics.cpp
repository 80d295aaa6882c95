// Median and its distribution-free confidence interval: the number of samples below the true
// median is Binomial(n, 1/2), so the order statistics x_(l) and x_(n+1-l) bound the median
// with probability 1 - 2 P(B <= l - 1). No assumption about the timing distribution, which
// for GPU kernels is skewed (a slow tail from clocks, interrupts, other tenants).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/statistics.hpp"

namespace cachewise::tuner {
namespace {

double binomial_half_pmf(std::size_t n, std::size_t i) {
  const double log_choose = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                            std::lgamma(static_cast<double>(n - i) + 1);
  return std::exp(log_choose - static_cast<double>(n) * std::numbers::ln2);
}

} // namespace

double MedianEstimate::ci_width_fraction() const { return (ci_high - ci_low) / median; }

MedianEstimate estimate_median(std::vector<double> samples, double confidence) {
  if (samples.empty()) throw InputError("median of no samples");
  if (!(confidence > 0.0 && confidence < 1.0)) {
    throw InputError("confidence must be in (0, 1), got " + std::to_string(confidence));
  }
  std::ranges::sort(samples);
  const std::size_t n = samples.size();
  MedianEstimate estimate;
  estimate.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);

  // Largest l (1-based) with P(B <= l - 1) <= alpha / 2.
  const double tail = (1.0 - confidence) / 2.0;
  double cumulative = 0.0;
  std::size_t l = 0;
  for (std::size_t i = 0; i < (n + 1) / 2; ++i) {
    cumulative += binomial_half_pmf(n, i);
    if (cumulative > tail) break;
    l = i + 1;
  }
  if (l == 0) {
    estimate.ci_low = -std::numeric_limits<double>::infinity();
    estimate.ci_high = std::numeric_limits<double>::infinity();
  } else {
    estimate.ci_low = samples[l - 1];
    estimate.ci_high = samples[n - l];
  }
  return estimate;
}

} // namespace cachewise::tuner
