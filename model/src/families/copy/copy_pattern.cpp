// copy (docs/pattern-families.md): out[i] = in[i*stride].
#include "families/family_support.hpp"

namespace cachewise::family_detail {

KernelPattern build_copy(const ProblemSpec& problem, const Config& config, const Calibration& /*calibration*/) {
  const std::string& family = problem.family;
  const Sizes sizes = read_sizes(problem, false, false);
  const std::int64_t block = at_least(family, config, "block", 32);
  const std::int64_t vector = config.get("vector");
  const std::int64_t ept = at_least(family, config, "ept", 1);
  const std::int64_t stride = at_least(family, config, "stride", 1, 1);
  const int bytes = sizes.element_bytes;
  check_vector_width(family, vector, bytes);
  require_multiple(family, "block", block, "the warp size", 32);
  if (stride > 1 && vector != 1) rule_broken(family, "vector must be 1 when stride > 1");
  require_multiple(family, "n", sizes.n, "vector", vector);

  const std::int64_t n = sizes.n;
  KernelPattern pattern;
  pattern.name = "copy";
  pattern.grid = {ceil_div(n, checked_product(family, {block, ept, vector})), 1, 1};
  pattern.block = {block, 1, 1};
  pattern.arrays = {global_array("in", bytes, {checked_product(family, {n, stride, bytes}) / bytes}),
                    global_array("out", bytes, {n})};
  pattern.useful_bytes = checked_product(family, {n, bytes, 2});
  // Vector index v = (blockIdx.x*ept + e)*block + threadIdx.x; element i = v*vector.
  const auto element = [&](std::int64_t scale) {
    return affine(0, {{V::block_x, scale * vector * ept * block}, {V::thread_x, scale * vector}},
                  {{"e", scale * vector * block}});
  };
  pattern.phases.push_back({{loop("e", ept)},
                            {load("in", {element(stride)}, {}, static_cast<int>(vector)),
                             store("out", {element(1)}, {}, static_cast<int>(vector))}});
  return pattern;
}

/// A thread stores its batch of loads (batched_moves): at most its ept elements.
void apply_copy_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config,
                      const Calibration& /*calibration*/) {
  set_kernel_facts(pattern, builtin_kernel_facts(problem, config), config.get("ept"));
}

} // namespace cachewise::family_detail
