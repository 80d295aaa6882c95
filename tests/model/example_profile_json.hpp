// The example profile as JSON, and the check that profile_from_json rejects a document with
// one exact message: shared by the profile and calibration tests.
#pragma once

#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"

namespace cachewise::testing_support {

inline nlohmann::json example_json() {
  std::ifstream in(CACHEWISE_EXAMPLE_PROFILE);
  return nlohmann::json::parse(in);
}

/// Expects profile_from_json to reject `document` with exactly `message`.
inline void expect_rejected(const nlohmann::json& document, const std::string& message) {
  try {
    profile_from_json(document);
    FAIL() << "accepted, expected: " << message;
  } catch (const InputError& error) {
    EXPECT_EQ(error.what(), message);
  }
}

} // namespace cachewise::testing_support
