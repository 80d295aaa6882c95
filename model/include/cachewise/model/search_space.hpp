// cachewise::SearchSpace — named integer parameters, each with a list of values, and
// constraints over subsets of them: the built-in families' spaces, a user kernel's parameters, the tuner's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cachewise/model/problem.hpp"

namespace cachewise {

class SearchSpace {
public:
  /// Throws InputError on an empty name, an empty value list, a repeated value or a name
  /// already added.
  void add_parameter(std::string name, std::vector<std::int64_t> values);

  /// `holds` is called with a Config in which exactly the parameters bound so far are set;
  /// it may read only `parameters`. Throws InputError when `parameters` is empty, names a
  /// parameter not added yet, or `holds` is empty.
  void add_constraint(std::vector<std::string> parameters, std::function<bool(const Config&)> holds,
                      std::string description);

  /// Every config that satisfies all constraints, in declaration order (the first parameter
  /// varies slowest, values in the order given). Parameters are bound in an order taken from
  /// the parameter/constraint graph, and each constraint is checked as soon as all of its
  /// parameters are bound, so a failing constraint prunes the whole subtree below it.
  std::vector<Config> enumerate() const;

  /// enumerate()'s configs as value indices, 4 bytes a parameter: config i's value of
  /// parameters()[p] is its values[indices[i * parameters().size() + p]], for building the
  /// configs a few at a time (config_at).
  std::vector<std::uint32_t> enumerate_indices() const;
  /// The config of one row of enumerate_indices().
  Config config_at(std::span<const std::uint32_t> value_indices) const;

  /// Product of the value counts (saturates at UINT64_MAX).
  std::uint64_t unconstrained_size() const;

  const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& parameters() const { return parameters_; }

  struct Constraint {
    std::vector<std::string> parameters;
    std::function<bool(const Config&)> holds;
    std::string description;
  };
  const std::vector<Constraint>& constraints() const { return constraints_; }

  /// Indices into parameters() in the order enumerate() binds them.
  std::vector<std::size_t> binding_order() const;

private:
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> parameters_;
  std::vector<Constraint> constraints_;
};

} // namespace cachewise
