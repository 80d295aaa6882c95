// The built-in pattern families (docs/pattern-families.md): ProblemSpec + Config -> KernelPattern.
// Every family emits exactly the per-thread address order the contract states, so the CUDA
// kernels and the model count the same sectors.
// This file holds the table of families; each builds in its own <name>/<name>_pattern.cpp.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "cachewise/model/families/builtin_kernels.hpp"
#include "cachewise/model/families/device_pattern.hpp"
#include "families/family_support.hpp"

namespace cachewise {
namespace {

using family_detail::read_sizes;

/// Rejects keys the family does not read, naming the valid ones.
void check_known_keys(const FamilyInfo& info, const Config& config) {
  for (const auto& [key, value] : config.values()) {
    if (std::find(info.config_keys.begin(), info.config_keys.end(), key) != info.config_keys.end()) continue;
    std::string valid;
    for (const std::string& name : info.config_keys) valid += (valid.empty() ? "" : ", ") + name;
    throw InputError("config: unknown key '" + key + "' for " + info.name + " (valid: " + valid + ")");
  }
}

using Builder = KernelPattern (*)(const ProblemSpec&, const Config&, const Calibration&);
using FactsRule = void (*)(KernelPattern&, const ProblemSpec&, const Config&, const Calibration&);

struct Family {
  FamilyInfo info;
  Builder build;
  FactsRule apply_facts;
};

const std::vector<Family>& family_table() {
  static const std::vector<Family> table = {
      {{std::string(kFamilyNames[0]),
        "out[i] = in[i*stride]: vector width, elements per thread, block size",
        {"block", "ept", "stride", "vector"},
        {"n"}},
       family_detail::build_copy,
       family_detail::apply_copy_facts},
      {{std::string(kFamilyNames[1]),
        "C = A*B with shared-memory block tiles and register thread tiles",
        {"bk", "bm", "bn", "pad", "tm", "tn"},
        {"n", "m", "k"}},
       family_detail::build_gemm,
       family_detail::apply_gemm_facts},
      {{std::string(kFamilyNames[2]),
        "star stencil of a radius on an n x m grid, optional shared-memory tile or x vectors",
        {"block_x", "block_y", "ept_y", "radius", "smem", "vector"},
        {"n", "m"}},
       family_detail::build_stencil2d,
       family_detail::apply_stencil2d_facts},
      {{std::string(kFamilyNames[3]),
        "7-point stencil on an n x m x k volume: 3D blocking or 2.5D streaming (x vectors)",
        {"block_x", "block_y", "block_z", "mode", "vector", "z_chunk"},
        {"n", "m", "k"}},
       family_detail::build_stencil3d,
       family_detail::apply_stencil3d_facts},
      {{std::string(kFamilyNames[4]),
        "out[j][i] = in[i][j], direct or through a shared-memory tile",
        {"block_x", "block_y", "pad", "smem", "tile"},
        {"n", "m"}},
       family_detail::build_transpose,
       family_detail::apply_transpose_facts},
  };
  return table;
}

const Family& find_family(std::string_view name) {
  check_family_name(name);
  const std::vector<Family>& table = family_table();
  return *std::find_if(table.begin(), table.end(), [&](const Family& family) { return family.info.name == name; });
}

} // namespace

const std::vector<FamilyInfo>& families() {
  static const std::vector<FamilyInfo> infos = [] {
    std::vector<FamilyInfo> out;
    for (const Family& family : family_table()) out.push_back(family.info);
    return out;
  }();
  return infos;
}

const FamilyInfo& family_info(std::string_view name) { return find_family(name).info; }

void check_problem(const ProblemSpec& problem) {
  const FamilyInfo& info = family_info(problem.family);
  const auto reads = [&info](std::string_view key) {
    return std::ranges::find(info.size_keys, key) != info.size_keys.end();
  };
  read_sizes(problem, reads("m"), reads("k"));
}

KernelPattern build_pattern(const ProblemSpec& problem, const Config& config, const Calibration& calibration) {
  const Family& family = find_family(problem.family);
  check_known_keys(family.info, config);
  KernelPattern pattern = family.build(problem, config, calibration);
  family.apply_facts(pattern, problem, config, calibration);
  validate_pattern(pattern);
  return pattern;
}

KernelPattern build_pattern_before_kernel_facts(const ProblemSpec& problem, const Config& config) {
  const Family& family = find_family(problem.family);
  check_known_keys(family.info, config);
  KernelPattern pattern = family.build(problem, config, default_calibration());
  validate_pattern(pattern);
  return pattern;
}

KernelPattern build_pattern(const ProblemSpec& problem, const Config& config) {
  return build_pattern(problem, config, default_calibration());
}

} // namespace cachewise
