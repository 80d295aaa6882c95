// Small constructors for pattern pieces, shared by the built-in families and the tests.
#pragma once

#include "cachewise/model/pattern/pattern.hpp"

namespace cachewise::pattern_builders {

/// constant + thread/block terms + loop terms.
inline AffineIndex affine(std::int64_t constant, std::map<IndexVar, std::int64_t> thread_terms = {},
                          std::map<std::string, std::int64_t, std::less<>> loop_terms = {}) {
  AffineIndex index;
  index.constant = constant;
  index.thread_terms = std::move(thread_terms);
  index.loop_terms = std::move(loop_terms);
  return index;
}

/// coefficient * (floor(sum / divisor) mod modulus) over thread and loop terms.
inline QuotientTerm quotient(std::int64_t coefficient, std::int64_t divisor, std::int64_t modulus,
                             std::map<IndexVar, std::int64_t> thread_terms,
                             std::map<std::string, std::int64_t, std::less<>> loop_terms) {
  QuotientTerm term;
  term.coefficient = coefficient;
  term.divisor = divisor;
  term.modulus = modulus;
  term.thread_terms = std::move(thread_terms);
  term.loop_terms = std::move(loop_terms);
  return term;
}

/// A loop over begin = 0 <= value < end in steps of `step`, run forwards in every block.
inline Loop loop(std::string name, std::int64_t end, std::int64_t step = 1) {
  Loop made;
  made.name = std::move(name);
  made.end = end;
  made.step = step;
  return made;
}

/// radius <= value < extent - radius: the interior of a stencil along one axis.
inline Guard interior_guard(AffineIndex value, std::int64_t radius, std::int64_t extent) {
  return {std::move(value), radius, extent - radius};
}

} // namespace cachewise::pattern_builders
