// cachewise::advisor::RejectionTally — rejections counted by stage and reason, as a suggestion
// reports them (RejectionCount).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/advisor/rejection.hpp"
#include "cachewise/model.hpp"

namespace cachewise::advisor {

struct RejectionCount {
  RejectionStage stage = RejectionStage::family_rules;
  std::string reason; ///< the model's message with numbers replaced by '#'
  std::int64_t count = 0;
  std::string message; ///< the first full message with this reason
  std::string example; ///< the config that got it
};

/// Rejections counted by stage and reason (the message with its numbers replaced by '#'), each
/// with the first message and config that got it.
class RejectionTally {
public:
  void add(RejectionStage stage, const Config& config, const std::string& message);
  /// Adds the counts of `later`, tallied after this one: a reason both hold keeps this one's
  /// first message and config.
  void merge(const RejectionTally& later);
  std::int64_t total() const;
  std::vector<RejectionCount> sorted() const; ///< most frequent first

private:
  struct Entry {
    std::int64_t count = 0;
    std::string message;
    std::string example;
  };
  std::map<std::pair<RejectionStage, std::string>, Entry> by_reason_;
};

} // namespace cachewise::advisor
