// cachewise built-in pattern families: ProblemSpec + Config -> KernelPattern
// (docs/pattern-families.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cachewise/model/pattern/pattern.hpp"
#include "cachewise/model/problem.hpp"

namespace cachewise {

struct FamilyInfo {
  std::string name;
  std::string summary;
  std::vector<std::string> config_keys; ///< every key build_pattern reads
  std::vector<std::string> size_keys;   ///< which of n, m, k the family reads
};

const std::vector<FamilyInfo>& families();
/// Throws InputError "unknown pattern 'x' (valid: copy, gemm, ...)".
const FamilyInfo& family_info(std::string_view name);

/// Throws InputError for an unknown family, a size <= 0, or sizes whose byte counts overflow
/// 64-bit integers: everything about the problem that no config can fix.
void check_problem(const ProblemSpec& problem);

/// Builds the pattern; throws InputError for an unknown family, a missing or unknown config
/// key, a config breaking the family's rules, or sizes that overflow 64-bit byte counts.
KernelPattern build_pattern(const ProblemSpec& problem, const Config& config);

} // namespace cachewise
