// What the built-in families share (model/src/families/<family>/<family>_pattern.cpp): reading a config with the
// family's rules, the problem's sizes, and small constructors for arrays and accesses.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachewise/model/families/builtin_kernels.hpp"
#include "cachewise/model/errors.hpp"
#include "cachewise/model/families/families.hpp"
#include "cachewise/model/pattern/pattern.hpp"
#include "cachewise/model/problem.hpp"
#include "cachewise/model/profile/calibration.hpp"
#include "pattern/pattern_builders.hpp"

namespace cachewise::family_detail {

using pattern_builders::affine;
using pattern_builders::interior_guard;
using pattern_builders::loop;
using pattern_builders::quotient;
using V = IndexVar;

// ----- config reading and rule checks ------------------------------------------------

[[noreturn]] inline void rule_broken(const std::string& family, const std::string& what) {
  throw InputError(family + ": " + what);
}

inline std::int64_t at_least(const std::string& family, const Config& config, std::string_view key, std::int64_t min,
                             std::int64_t fallback_if_absent = -1) {
  const std::int64_t value = fallback_if_absent >= 0 ? config.get_or(key, fallback_if_absent) : config.get(key);
  if (value < min) {
    rule_broken(family, std::string(key) + " must be >= " + std::to_string(min) + ", got " + std::to_string(value));
  }
  return value;
}

inline void require_multiple(const std::string& family, std::string_view what, std::int64_t value, std::string_view of,
                             std::int64_t divisor) {
  if (value % divisor != 0) {
    rule_broken(family, std::string(what) + " (" + std::to_string(value) + ") must be a multiple of " +
                            std::string(of) + " (" + std::to_string(divisor) + ")");
  }
}

/// a * b, or InputError when the product leaves int64 (sizes from the command line can be anything).
inline std::int64_t checked_product(const std::string& family, std::initializer_list<std::int64_t> factors) {
  std::int64_t product = 1;
  for (std::int64_t factor : factors) {
    if (__builtin_mul_overflow(product, factor, &product)) {
      rule_broken(family, "sizes too large: byte counts overflow 64-bit integers");
    }
  }
  return product;
}

struct Sizes {
  std::int64_t n = 0;
  std::int64_t m = 0;
  std::int64_t k = 0;
  int element_bytes = 4;
};

inline std::int64_t positive_size(const std::string& family, std::string_view name, std::int64_t value) {
  if (value <= 0) rule_broken(family, std::string(name) + " must be > 0, got " + std::to_string(value));
  return value;
}

/// Reads n (and m, k defaulting to n when 0; 1 when the family does not read them).
inline Sizes read_sizes(const ProblemSpec& problem, bool uses_m, bool uses_k) {
  Sizes sizes;
  sizes.n = positive_size(problem.family, "n", problem.n);
  sizes.m = uses_m ? (problem.m == 0 ? sizes.n : positive_size(problem.family, "m", problem.m)) : 1;
  sizes.k = uses_k ? (problem.k == 0 ? sizes.n : positive_size(problem.family, "k", problem.k)) : 1;
  sizes.element_bytes = element_bytes(problem.dtype);
  // No array of a family holds more than n*m*k elements; 64x headroom covers several arrays
  // and the simulator's 1 MiB alignment, so no byte count or address can overflow later.
  checked_product(problem.family, {sizes.n, sizes.m, sizes.k, sizes.element_bytes, 64});
  return sizes;
}

/// `vector` elements moved as one access: 1, 2, 4 or 8 of them, at most 16 bytes.
inline void check_vector_width(const std::string& family, std::int64_t vector, int element_bytes) {
  if (vector != 1 && vector != 2 && vector != 4 && vector != 8) {
    rule_broken(family, "vector must be 1, 2, 4 or 8, got " + std::to_string(vector));
  }
  if (vector * element_bytes > 16) {
    rule_broken(family, "vector*sizeof(T) must be <= 16 bytes, got " + std::to_string(vector * element_bytes));
  }
}

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

inline ArrayDecl global_array(std::string name, int element_bytes, std::vector<std::int64_t> extents) {
  return {std::move(name), MemorySpace::global, element_bytes, std::move(extents)};
}

inline ArrayDecl shared_array(std::string name, int element_bytes, std::vector<std::int64_t> extents) {
  return {std::move(name), MemorySpace::shared, element_bytes, std::move(extents)};
}

inline Access load(std::string array, std::vector<AffineIndex> index, std::vector<Guard> guards = {}, int vector = 1) {
  return {std::move(array), false, std::move(index), vector, true, std::move(guards)};
}

inline Access store(std::string array, std::vector<AffineIndex> index, std::vector<Guard> guards = {}, int vector = 1) {
  return {std::move(array), true, std::move(index), vector, true, std::move(guards)};
}

/// A load whose lanes all issue even where an index leaves its dimension: the kernel indexes
/// flat (x-1 of x = 0 is the previous row's last point), so the address stays in the array.
inline Access unpredicated(Access access) {
  access.predicated = false;
  return access;
}

inline double flops_scale(DataType type) { return type == DataType::f64 ? 2.0 : 1.0; }

/// The stencils' `vector` key (points per thread along x, moved as one access): 1, 2, 4 or 8,
/// at most 16 bytes, and dividing m so that every vector is aligned and inside a row.
inline std::int64_t read_x_vector(const std::string& family, const Config& config, const Sizes& sizes) {
  const std::int64_t vector = config.get_or("vector", 1);
  check_vector_width(family, vector, sizes.element_bytes);
  require_multiple(family, "m", sizes.m, "vector", vector);
  return vector;
}

// ----- the compiled kernel's facts -------------------------------------------------------

/// Sets what the compiled kernel says (model/data/kernel_facts_sm90.json): its registers, the
/// loads a warp keeps in flight (a phase with fewer loads per thread has fewer: the simulator's
/// rounds end with the phase) and its store burst, at most the `stores_per_thread` the config
/// gives a thread between two of its loads (the facts are measured where every batch is full).
inline void set_kernel_facts(KernelPattern& pattern, const CompiledKernelFacts& facts, std::int64_t stores_per_thread,
                             std::int64_t loads_in_flight) {
  pattern.registers_per_thread = facts.registers_per_thread;
  pattern.loads_in_flight = loads_in_flight;
  pattern.store_burst = std::max<std::int64_t>(1, std::min(facts.stores_per_run, stores_per_thread));
}

inline void set_kernel_facts(KernelPattern& pattern, const CompiledKernelFacts& facts, std::int64_t stores_per_thread) {
  set_kernel_facts(pattern, facts, stores_per_thread, facts.loads_per_round);
}

// ----- the families' builders (one file each) -------------------------------------------

// build_<family>: the pattern's launch, arrays and accesses; apply_<family>_facts: the compiled
// kernel's facts on it, by the family's rule (build_pattern runs both).
KernelPattern build_copy(const ProblemSpec& problem, const Config& config, const Calibration& calibration);
KernelPattern build_gemm(const ProblemSpec& problem, const Config& config, const Calibration& calibration);
KernelPattern build_stencil2d(const ProblemSpec& problem, const Config& config, const Calibration& calibration);
KernelPattern build_stencil3d(const ProblemSpec& problem, const Config& config, const Calibration& calibration);
KernelPattern build_transpose(const ProblemSpec& problem, const Config& config, const Calibration& calibration);
void apply_copy_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config,
                      const Calibration& calibration);
void apply_gemm_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config,
                      const Calibration& calibration);
void apply_stencil2d_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config,
                           const Calibration& calibration);
void apply_stencil3d_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config,
                           const Calibration& calibration);
void apply_transpose_facts(KernelPattern& pattern, const ProblemSpec& problem, const Config& config,
                           const Calibration& calibration);

} // namespace cachewise::family_detail
