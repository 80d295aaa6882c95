// cachewise::tuner statistics: a sample's median and its confidence interval.
#pragma once

#include <vector>

namespace cachewise::tuner {

/// Median and its distribution-free confidence interval (order statistics of the binomial).
struct MedianEstimate {
  double median = 0.0;
  double ci_low = 0.0;              ///< -inf when too few samples for the confidence asked
  double ci_high = 0.0;             ///< +inf likewise
  double ci_width_fraction() const; ///< (ci_high - ci_low) / median
};

/// Throws InputError for an empty sample or a confidence outside (0, 1).
MedianEstimate estimate_median(std::vector<double> samples, double confidence = 0.95);

} // namespace cachewise::tuner
