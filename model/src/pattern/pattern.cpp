// KernelPattern checks (validate_pattern) and the shared memory a pattern declares.
#include <algorithm>
#include <limits>
#include <set>

#include "cachewise/model/pattern/pattern.hpp"

namespace cachewise {
namespace {

[[noreturn]] void invalid(const std::string& path, const std::string& what) { throw InputError(path + ": " + what); }

std::string indexed(const std::string& path, std::string_view key, std::size_t i) {
  return path + "." + std::string(key) + "[" + std::to_string(i) + "]";
}

void check_dim3(const Dim3& dim, const std::string& path) {
  for (auto [name, value] : {std::pair{"x", dim.x}, std::pair{"y", dim.y}, std::pair{"z", dim.z}}) {
    if (value < 1 || value > (std::int64_t{1} << 31)) {
      invalid(path + "." + name, "expected an integer in [1, 2147483648], got " + std::to_string(value));
    }
  }
}

void check_loop_names(const std::map<std::string, std::int64_t, std::less<>>& terms,
                      const std::set<std::string>& in_scope, const std::string& path) {
  for (const auto& [name, coefficient] : terms) {
    if (!in_scope.contains(name)) {
      std::string valid;
      for (const std::string& loop : in_scope) valid += (valid.empty() ? "" : ", ") + loop;
      invalid(path + "." + name,
              "unknown loop variable '" + name + "' (in scope: " + (valid.empty() ? "none" : valid) + ")");
    }
  }
}

void check_index(const AffineIndex& index, const std::set<std::string>& in_scope, const std::string& path) {
  check_loop_names(index.loop_terms, in_scope, path);
  for (std::size_t q = 0; q < index.quotient_terms.size(); ++q) {
    const QuotientTerm& term = index.quotient_terms[q];
    const std::string term_path = indexed(path, "quotients", q);
    if (term.divisor < 1)
      invalid(term_path + ".divisor", "expected an integer >= 1, got " + std::to_string(term.divisor));
    if (term.modulus < 0)
      invalid(term_path + ".modulus", "expected an integer >= 0, got " + std::to_string(term.modulus));
    check_loop_names(term.loop_terms, in_scope, term_path);
  }
}

void check_loop(const Loop& loop, const std::string& path) {
  if (loop.name.empty()) invalid(path + ".name", "expected a non-empty loop name");
  for (const char* reserved : {"const", "quotients", "thread_x", "thread_y", "thread_z", "thread_linear", "block_x",
                               "block_y", "block_z", "coefficient", "divisor", "modulus"}) {
    if (loop.name == reserved) invalid(path + ".name", "'" + loop.name + "' is reserved for index expressions");
  }
  if (loop.step < 1) invalid(path + ".step", "expected an integer >= 1, got " + std::to_string(loop.step));
  if (loop.end < loop.begin) {
    invalid(path + ".end",
            "expected at least begin (" + std::to_string(loop.begin) + "), got " + std::to_string(loop.end));
  }
  if (loop.reversed_where_odd && *loop.reversed_where_odd != IndexVar::block_x &&
      *loop.reversed_where_odd != IndexVar::block_y && *loop.reversed_where_odd != IndexVar::block_z) {
    invalid(path + ".reversed_where_odd", "expected block_x, block_y or block_z");
  }
}

const PhaseLoop* enclosing_loop(const KernelPattern& pattern, std::size_t phase) {
  for (const PhaseLoop& loop : pattern.phase_loops) {
    if (phase >= loop.first_phase && phase < loop.first_phase + loop.phase_count) return &loop;
  }
  return nullptr;
}

constexpr std::int64_t kMaxArrayBytes = std::int64_t{1} << 50;

/// The cap on simulated work (docs/pattern-format.md): a thread runs a phase at most 2^24 times,
/// its loops' trip counts times its phase loop's. Far past any kernel's, and a block of the
/// simulation then ends in seconds (a loop to 1e18 ran for ever).
constexpr std::int64_t kMaxPhaseIterations = std::int64_t{1} << 24;

/// A loop's trip count, overflow-safe (begin -2^62, end 2^62); check_loop has checked step >= 1.
std::int64_t trips_of(const Loop& loop) {
  std::int64_t span = 0;
  if (loop.end <= loop.begin) return 0;
  if (__builtin_sub_overflow(loop.end, loop.begin, &span)) return std::numeric_limits<std::int64_t>::max();
  return span / loop.step + (span % loop.step != 0 ? 1 : 0);
}

/// Throws when `iterations` times the trips of `loop` passes kMaxPhaseIterations; returns the product.
std::int64_t add_iterations(std::int64_t iterations, const Loop& loop, const std::string& path) {
  std::int64_t total = 0;
  if (__builtin_mul_overflow(iterations, trips_of(loop), &total) || total > kMaxPhaseIterations) {
    invalid(path + ".end", "a thread would run its phase more than " + std::to_string(kMaxPhaseIterations) +
                               " times (2^24, the cap on simulated work)");
  }
  return total;
}

/// The pattern's scalar fields: launch shape, registers, load rounds, work.
void check_scalars(const KernelPattern& pattern, const std::string& root) {
  check_dim3(pattern.grid, root + ".grid");
  check_dim3(pattern.block, root + ".block");
  if (pattern.registers_per_thread < 1 || pattern.registers_per_thread > 255) {
    invalid(root + ".registers_per_thread",
            "expected an integer in [1, 255], got " + std::to_string(pattern.registers_per_thread));
  }
  if (pattern.loads_in_flight < 1 || pattern.loads_in_flight > kMaxLoadsInFlight) {
    invalid(root + ".loads_in_flight", "expected an integer in [1, " + std::to_string(kMaxLoadsInFlight) + "], got " +
                                           std::to_string(pattern.loads_in_flight));
  }
  if (pattern.store_burst < 1 || pattern.store_burst > kMaxLoadsInFlight) {
    invalid(root + ".store_burst", "expected an integer in [1, " + std::to_string(kMaxLoadsInFlight) + "], got " +
                                       std::to_string(pattern.store_burst));
  }
  if (!(pattern.flops >= 0)) invalid(root + ".flops", "expected a number >= 0");
  if (!(pattern.overhead_instructions >= 0)) invalid(root + ".overhead_instructions", "expected a number >= 0");
  if (pattern.useful_bytes < 0) invalid(root + ".useful_bytes", "expected an integer >= 0");
}

/// Array names unique, element sizes and extents valid, no array beyond 2^50 bytes.
void check_arrays(const KernelPattern& pattern, const std::string& root) {
  std::set<std::string> names;
  for (std::size_t a = 0; a < pattern.arrays.size(); ++a) {
    const ArrayDecl& array = pattern.arrays[a];
    const std::string path = indexed(root, "arrays", a);
    if (array.name.empty()) invalid(path + ".name", "expected a non-empty array name");
    if (!names.insert(array.name).second) invalid(path + ".name", "duplicate array name '" + array.name + "'");
    if (array.element_bytes != 1 && array.element_bytes != 2 && array.element_bytes != 4 && array.element_bytes != 8 &&
        array.element_bytes != 16) {
      invalid(path + ".element_bytes", "expected 1, 2, 4, 8 or 16, got " + std::to_string(array.element_bytes));
    }
    if (array.extents.empty()) invalid(path + ".extents", "expected at least one extent");
    std::int64_t bytes = array.element_bytes;
    for (std::size_t d = 0; d < array.extents.size(); ++d) {
      if (array.extents[d] < 1) {
        invalid(indexed(path, "extents", d), "expected an integer >= 1, got " + std::to_string(array.extents[d]));
      }
      if (__builtin_mul_overflow(bytes, array.extents[d], &bytes) || bytes > kMaxArrayBytes) {
        invalid(path + ".extents", "array larger than 2^50 bytes");
      }
    }
  }
}

/// Phase loops name valid phase ranges that do not overlap.
void check_phase_loops(const KernelPattern& pattern, const std::string& root) {
  for (std::size_t l = 0; l < pattern.phase_loops.size(); ++l) {
    const PhaseLoop& loop = pattern.phase_loops[l];
    const std::string path = indexed(root, "phase_loops", l);
    check_loop(loop.loop, path + ".loop");
    add_iterations(1, loop.loop, path + ".loop");
    if (loop.loop.reversed_where_odd) invalid(path + ".loop.reversed_where_odd", "applies to a phase's own loops only");
    if (loop.phase_count < 1 || loop.first_phase + loop.phase_count > pattern.phases.size()) {
      invalid(path, "expected phases [first_phase, first_phase + phase_count) within the " +
                        std::to_string(pattern.phases.size()) + " phases");
    }
    for (std::size_t other = 0; other < l; ++other) {
      const PhaseLoop& before = pattern.phase_loops[other];
      if (loop.first_phase < before.first_phase + before.phase_count &&
          before.first_phase < loop.first_phase + loop.phase_count) {
        invalid(path, "overlaps phase_loops[" + std::to_string(other) + "]");
      }
    }
  }
}

void check_access(const KernelPattern& pattern, const Access& access, const std::set<std::string>& in_scope,
                  const std::string& access_path) {
  const auto array = std::find_if(pattern.arrays.begin(), pattern.arrays.end(),
                                  [&](const ArrayDecl& decl) { return decl.name == access.array; });
  if (array == pattern.arrays.end()) invalid(access_path + ".array", "unknown array '" + access.array + "'");
  if (access.index.size() != array->extents.size()) {
    invalid(access_path + ".index", "expected " + std::to_string(array->extents.size()) +
                                        " indices (one per extent of '" + access.array + "'), got " +
                                        std::to_string(access.index.size()));
  }
  const int vector = access.vector_elements;
  if (vector != 1 && vector != 2 && vector != 4 && vector != 8) {
    invalid(access_path + ".vector", "expected 1, 2, 4 or 8, got " + std::to_string(vector));
  }
  if (vector * array->element_bytes > 16) {
    invalid(access_path + ".vector",
            "a thread accesses at most 16 bytes at once, got " + std::to_string(vector * array->element_bytes));
  }
  for (std::size_t d = 0; d < access.index.size(); ++d)
    check_index(access.index[d], in_scope, indexed(access_path, "index", d));
  for (std::size_t g = 0; g < access.guards.size(); ++g) {
    check_index(access.guards[g].value, in_scope, indexed(access_path, "guards", g));
  }
}

/// Every phase's loops and accesses, each index naming only the loop variables in scope.
void check_phases(const KernelPattern& pattern, const std::string& root) {
  if (pattern.phases.empty()) invalid(root + ".phases", "expected at least one phase");
  for (std::size_t p = 0; p < pattern.phases.size(); ++p) {
    const Phase& phase = pattern.phases[p];
    const std::string path = indexed(root, "phases", p);
    std::set<std::string> in_scope;
    std::int64_t iterations = 1;
    if (const PhaseLoop* outer = enclosing_loop(pattern, p)) {
      in_scope.insert(outer->loop.name);
      iterations = trips_of(outer->loop);
    }
    for (std::size_t l = 0; l < phase.loops.size(); ++l) {
      check_loop(phase.loops[l], indexed(path, "loops", l));
      iterations = add_iterations(iterations, phase.loops[l], indexed(path, "loops", l));
      if (!in_scope.insert(phase.loops[l].name).second) {
        invalid(indexed(path, "loops", l) + ".name", "loop variable '" + phase.loops[l].name + "' already in scope");
      }
    }
    for (std::size_t i = 0; i < phase.accesses.size(); ++i) {
      check_access(pattern, phase.accesses[i], in_scope, indexed(path, "accesses", i));
    }
  }
}

} // namespace

void validate_pattern(const KernelPattern& pattern) {
  const std::string root = "pattern";
  check_scalars(pattern, root);
  check_arrays(pattern, root);
  check_phase_loops(pattern, root);
  check_phases(pattern, root);
}

std::int64_t shared_bytes_per_block(const KernelPattern& pattern) {
  std::int64_t total = 0;
  for (const ArrayDecl& array : pattern.arrays) {
    if (array.space != MemorySpace::shared) continue;
    std::int64_t bytes = array.element_bytes;
    for (std::int64_t extent : array.extents) bytes *= extent;
    total += bytes;
  }
  return total;
}

} // namespace cachewise
