// SearchSpace: enumeration with early pruning. The binding order comes from the parameter
// interaction graph (an edge joins two parameters that share a constraint): a Cuthill-McKee
// ordering keeps the parameters of each constraint close together, so a constraint becomes
// fully bound, and can prune, soon after its first parameter is bound.
#include <algorithm>
#include <iterator>
#include <limits>
#include <numeric>
#include <span>
#include <set>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/cuthill_mckee_ordering.hpp>

#include "cachewise/model/search_space.hpp"
#include "cachewise/model/errors.hpp"

namespace cachewise {

namespace {
using Parameters = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;

std::size_t parameter_index(const Parameters& parameters, const std::string& name) {
  const auto found = std::ranges::find(parameters, name, &Parameters::value_type::first);
  return static_cast<std::size_t>(found - parameters.begin());
}
} // namespace

void SearchSpace::add_parameter(std::string name, std::vector<std::int64_t> values) {
  if (name.empty()) throw InputError("search space: parameter name is empty");
  if (values.empty()) throw InputError("search space: parameter '" + name + "' has no values");
  if (parameter_index(parameters_, name) != parameters_.size()) {
    throw InputError("search space: parameter '" + name + "' added twice");
  }
  const std::set<std::int64_t> distinct(values.begin(), values.end());
  if (distinct.size() != values.size()) throw InputError("search space: parameter '" + name + "' repeats a value");
  parameters_.emplace_back(std::move(name), std::move(values));
}

void SearchSpace::add_constraint(std::vector<std::string> parameters, std::function<bool(const Config&)> holds,
                                 std::string description) {
  if (parameters.empty()) throw InputError("search space: constraint '" + description + "' names no parameter");
  if (!holds) throw InputError("search space: constraint '" + description + "' has no predicate");
  for (const std::string& name : parameters) {
    if (parameter_index(parameters_, name) == parameters_.size()) {
      throw InputError("search space: constraint '" + description + "' names unknown parameter '" + name + "'");
    }
  }
  constraints_.push_back({std::move(parameters), std::move(holds), std::move(description)});
}

std::uint64_t SearchSpace::unconstrained_size() const {
  std::uint64_t size = 1;
  for (const auto& [name, values] : parameters_) {
    const std::uint64_t count = values.size();
    if (size > std::numeric_limits<std::uint64_t>::max() / count) return std::numeric_limits<std::uint64_t>::max();
    size *= count;
  }
  return size;
}

std::vector<std::size_t> SearchSpace::binding_order() const {
  using Graph = boost::adjacency_list<
      boost::setS, boost::vecS, boost::undirectedS,
      boost::property<boost::vertex_color_t, boost::default_color_type, boost::property<boost::vertex_degree_t, int>>>;
  const std::size_t count = parameters_.size();
  Graph graph(count);
  std::vector<bool> constrained(count, false);
  for (const Constraint& constraint : constraints_) {
    std::vector<std::size_t> members;
    for (const std::string& name : constraint.parameters) members.push_back(parameter_index(parameters_, name));
    for (std::size_t a : members) {
      constrained[a] = true;
      for (std::size_t b : members) {
        if (a < b) boost::add_edge(a, b, graph);
      }
    }
  }
  std::vector<std::size_t> cuthill_mckee;
  boost::cuthill_mckee_ordering(graph, std::back_inserter(cuthill_mckee), boost::get(boost::vertex_color, graph),
                                boost::make_degree_map(graph));
  // Parameters no constraint reads cannot prune anything: bind them last, in declaration order.
  std::vector<std::size_t> order;
  std::ranges::copy_if(cuthill_mckee, std::back_inserter(order), [&](std::size_t p) { return constrained[p]; });
  for (std::size_t p = 0; p < count; ++p) {
    if (!constrained[p]) order.push_back(p);
  }
  return order;
}

std::vector<std::uint32_t> SearchSpace::enumerate_indices() const {
  const std::size_t count = parameters_.size();
  if (count == 0) return {};
  const std::vector<std::size_t> order = binding_order();
  std::vector<std::size_t> position(count);
  for (std::size_t depth = 0; depth < count; ++depth) position[order[depth]] = depth;

  // Each constraint is checked at the depth where its last parameter gets bound.
  std::vector<std::vector<const Constraint*>> checks_at_depth(count);
  for (const Constraint& constraint : constraints_) {
    std::size_t last = 0;
    for (const std::string& name : constraint.parameters) {
      last = std::max(last, position[parameter_index(parameters_, name)]);
    }
    checks_at_depth[last].push_back(&constraint);
  }

  std::vector<std::uint32_t> accepted; // rows of value indices, declaration order, in binding order
  std::vector<std::uint32_t> chosen(count, 0);
  std::vector<Config> partial(count + 1); // partial[d]: the first d bound parameters
  auto bind = [&](auto&& self, std::size_t depth) -> void {
    if (depth == count) {
      accepted.insert(accepted.end(), chosen.begin(), chosen.end());
      return;
    }
    const std::size_t p = order[depth];
    const auto& [name, values] = parameters_[p];
    for (std::size_t v = 0; v < values.size(); ++v) {
      partial[depth + 1] = partial[depth];
      partial[depth + 1].set(name, values[v]);
      const bool holds = std::ranges::all_of(checks_at_depth[depth],
                                             [&](const Constraint* c) { return c->holds(partial[depth + 1]); });
      if (!holds) continue;
      chosen[p] = static_cast<std::uint32_t>(v);
      self(self, depth + 1);
    }
  };
  bind(bind, 0);

  const auto row = [&](std::size_t r) { return std::span(accepted).subspan(r * count, count); };
  std::vector<std::size_t> rows(accepted.size() / count);
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  std::ranges::sort(rows,
                    [&](std::size_t a, std::size_t b) { return std::ranges::lexicographical_compare(row(a), row(b)); });
  std::vector<std::uint32_t> sorted;
  sorted.reserve(accepted.size());
  for (const std::size_t r : rows) std::ranges::copy(row(r), std::back_inserter(sorted));
  return sorted;
}

Config SearchSpace::config_at(std::span<const std::uint32_t> value_indices) const {
  Config config;
  for (std::size_t p = 0; p < parameters_.size(); ++p)
    config.set(parameters_[p].first, parameters_[p].second.at(value_indices[p]));
  return config;
}

std::vector<Config> SearchSpace::enumerate() const {
  const std::vector<std::uint32_t> indices = enumerate_indices();
  const std::size_t count = parameters_.size();
  std::vector<Config> configs;
  configs.reserve(count == 0 ? 0 : indices.size() / count);
  for (std::size_t at = 0; at < indices.size(); at += count)
    configs.push_back(config_at(std::span(indices).subspan(at, count)));
  return configs;
}

} // namespace cachewise
