// Custom access patterns <-> JSON (docs/pattern-format.md). Structure and types are checked
// here, meaning (array names, index ranks, loop scope) by validate_pattern; every error names
// the JSON path, e.g. "pattern.phases[0].accesses[1].index[0].thread_q: ...".
#include <limits>

#include "cachewise/model/pattern/pattern.hpp"
#include "json_node.hpp"
#include "pattern/launch_limits.hpp"

namespace cachewise {
namespace {

using detail::describe;
using detail::Node;
using detail::type_name;
using nlohmann::json;

constexpr std::int64_t kAnyInteger = std::numeric_limits<std::int64_t>::max();

const std::pair<const char*, IndexVar> kIndexVars[] = {{"thread_x", IndexVar::thread_x},
                                                       {"thread_y", IndexVar::thread_y},
                                                       {"thread_z", IndexVar::thread_z},
                                                       {"block_x", IndexVar::block_x},
                                                       {"block_y", IndexVar::block_y},
                                                       {"block_z", IndexVar::block_z},
                                                       {"thread_linear", IndexVar::thread_linear}};

std::string index_var_name(IndexVar variable) {
  for (const auto& [name, value] : kIndexVars) {
    if (value == variable) return name;
  }
  return "thread_x";
}

/// Rejects keys outside `allowed`, so a typo ("extent") is an error and not silently ignored.
void check_keys(const Node& node, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : node.raw().items()) {
    bool known = false;
    for (std::string_view name : allowed) known = known || key == name;
    if (known) continue;
    std::string valid;
    for (std::string_view name : allowed) valid += (valid.empty() ? "" : ", ") + std::string(name);
    Node::fail(node.at(key), "unknown key (valid: " + valid + ")");
  }
}

const json& array_of(const Node& node, std::string_view key) {
  const json& value = node.required(key);
  if (!value.is_array()) Node::fail(node.at(key), "expected an array, got " + type_name(value));
  return value;
}

std::string element(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::int64_t integer_or(const Node& node, std::string_view key, std::int64_t fallback, std::int64_t min,
                        std::int64_t max) {
  return node.has(key) ? node.integer(key, min, max) : fallback;
}

/// Terms shared by an index expression and a quotient: "const", thread/block variables, loops.
void read_term(const Node& node, const std::string& key, std::int64_t& constant,
               std::map<IndexVar, std::int64_t>& thread_terms,
               std::map<std::string, std::int64_t, std::less<>>& loop_terms) {
  const std::int64_t coefficient = node.integer(key, -kAnyInteger, kAnyInteger);
  if (key == "const") {
    constant = coefficient;
    return;
  }
  for (const auto& [name, variable] : kIndexVars) {
    if (key == name) {
      thread_terms[variable] = coefficient;
      return;
    }
  }
  loop_terms[key] = coefficient; // validate_pattern checks the loop is in scope
}

QuotientTerm read_quotient(const json& value, const std::string& path) {
  const Node node(value, path);
  QuotientTerm term;
  term.coefficient = integer_or(node, "coefficient", 1, -kAnyInteger, kAnyInteger);
  term.divisor = node.integer("divisor", 1, kAnyInteger);
  term.modulus = integer_or(node, "modulus", 0, 0, kAnyInteger);
  for (const auto& [key, item] : value.items()) {
    if (key == "coefficient" || key == "divisor" || key == "modulus") continue;
    read_term(node, key, term.constant, term.thread_terms, term.loop_terms);
  }
  return term;
}

/// An index expression: an integer constant, or {"const": c, "thread_x": 1, "<loop>": 4, "quotients": [...]}.
AffineIndex read_index(const json& value, const std::string& path) {
  AffineIndex index;
  if (value.is_number_integer()) {
    index.constant = value.get<std::int64_t>();
    return index;
  }
  const Node node(value, path);
  for (const auto& [key, item] : value.items()) {
    if (key != "quotients") {
      read_term(node, key, index.constant, index.thread_terms, index.loop_terms);
      continue;
    }
    const json& quotients = array_of(node, "quotients");
    for (std::size_t q = 0; q < quotients.size(); ++q) {
      index.quotient_terms.push_back(read_quotient(quotients[q], element(node.at("quotients"), q)));
    }
  }
  return index;
}

Dim3 read_dim3(const Node& parent, std::string_view key, const Dim3& max) {
  const Node node = parent.object(key);
  check_keys(node, {"x", "y", "z"});
  return {node.integer("x", 1, max.x), integer_or(node, "y", 1, 1, max.y), integer_or(node, "z", 1, 1, max.z)};
}

Loop read_loop(const json& value, const std::string& path) {
  const Node node(value, path);
  check_keys(node, {"name", "begin", "end", "step", "reversed_where_odd"});
  Loop loop;
  loop.name = node.string("name");
  loop.begin = integer_or(node, "begin", 0, -kAnyInteger, kAnyInteger);
  loop.end = node.integer("end", -kAnyInteger, kAnyInteger);
  loop.step = integer_or(node, "step", 1, -kAnyInteger, kAnyInteger);
  if (node.has("reversed_where_odd")) {
    const std::string name = node.string("reversed_where_odd");
    for (const auto& [known, variable] : kIndexVars) {
      if (name == known) loop.reversed_where_odd = variable;
    }
    if (!loop.reversed_where_odd)
      Node::fail(node.at("reversed_where_odd"), "expected block_x, block_y or block_z, got '" + name + "'");
  }
  return loop;
}

ArrayDecl read_array(const json& value, const std::string& path) {
  const Node node(value, path);
  check_keys(node, {"name", "space", "element_bytes", "extents"});
  ArrayDecl array;
  array.name = node.string("name");
  const std::string space = node.has("space") ? node.string("space") : "global";
  if (space != "global" && space != "shared") {
    Node::fail(node.at("space"), "expected \"global\" or \"shared\", got \"" + space + "\"");
  }
  array.space = space == "shared" ? MemorySpace::shared : MemorySpace::global;
  array.element_bytes = static_cast<int>(integer_or(node, "element_bytes", 4, 1, 16));
  const json& extents = array_of(node, "extents");
  for (std::size_t d = 0; d < extents.size(); ++d) {
    if (!extents[d].is_number_integer()) {
      Node::fail(element(node.at("extents"), d), "expected an integer, got " + describe(extents[d]));
    }
    array.extents.push_back(extents[d].get<std::int64_t>());
  }
  return array;
}

Access read_access(const json& value, const std::string& path) {
  const Node node(value, path);
  check_keys(node, {"array", "op", "index", "vector", "predicated", "guards"});
  Access access;
  access.array = node.string("array");
  const std::string op = node.string("op");
  if (op != "load" && op != "store") Node::fail(node.at("op"), "expected \"load\" or \"store\", got \"" + op + "\"");
  access.is_store = op == "store";
  const json& index = array_of(node, "index");
  for (std::size_t d = 0; d < index.size(); ++d)
    access.index.push_back(read_index(index[d], element(node.at("index"), d)));
  access.vector_elements = static_cast<int>(integer_or(node, "vector", 1, 1, 16));
  access.predicated = node.has("predicated") ? node.boolean("predicated") : true;
  if (node.has("guards")) {
    const json& guards = array_of(node, "guards");
    for (std::size_t g = 0; g < guards.size(); ++g) {
      const Node guard(guards[g], element(node.at("guards"), g));
      check_keys(guard, {"value", "lower", "upper"});
      access.guards.push_back({read_index(guard.required("value"), guard.at("value")),
                               guard.integer("lower", -kAnyInteger, kAnyInteger),
                               guard.integer("upper", -kAnyInteger, kAnyInteger)});
    }
  }
  return access;
}

Phase read_phase(const json& value, const std::string& path) {
  const Node node(value, path);
  check_keys(node, {"loops", "accesses"});
  Phase phase;
  if (node.has("loops")) {
    const json& loops = array_of(node, "loops");
    for (std::size_t l = 0; l < loops.size(); ++l)
      phase.loops.push_back(read_loop(loops[l], element(node.at("loops"), l)));
  }
  const json& accesses = array_of(node, "accesses");
  for (std::size_t a = 0; a < accesses.size(); ++a) {
    phase.accesses.push_back(read_access(accesses[a], element(node.at("accesses"), a)));
  }
  return phase;
}

json write_terms(std::int64_t constant, const std::map<IndexVar, std::int64_t>& thread_terms,
                 const std::map<std::string, std::int64_t, std::less<>>& loop_terms) {
  json out = json::object();
  if (constant != 0) out["const"] = constant;
  for (const auto& [variable, coefficient] : thread_terms) out[index_var_name(variable)] = coefficient;
  for (const auto& [name, coefficient] : loop_terms) out[name] = coefficient;
  return out;
}

json write_index(const AffineIndex& index) {
  if (index.thread_terms.empty() && index.loop_terms.empty() && index.quotient_terms.empty()) return index.constant;
  json out = write_terms(index.constant, index.thread_terms, index.loop_terms);
  for (const QuotientTerm& term : index.quotient_terms) {
    json quotient = write_terms(term.constant, term.thread_terms, term.loop_terms);
    quotient["coefficient"] = term.coefficient;
    quotient["divisor"] = term.divisor;
    quotient["modulus"] = term.modulus;
    out["quotients"].push_back(quotient);
  }
  return out;
}

json write_loop(const Loop& loop) {
  json out{{"name", loop.name}, {"begin", loop.begin}, {"end", loop.end}, {"step", loop.step}};
  if (loop.reversed_where_odd) out["reversed_where_odd"] = index_var_name(*loop.reversed_where_odd);
  return out;
}

} // namespace

KernelPattern pattern_from_json(const json& document) {
  const Node root(document, "pattern");
  check_keys(root, {"name", "grid", "block", "arrays", "phases", "phase_loops", "registers_per_thread",
                    "loads_in_flight", "store_burst", "flops", "overhead_instructions", "useful_bytes"});
  KernelPattern pattern;
  pattern.name = root.string("name");
  pattern.grid = read_dim3(root, "grid", detail::kMaxGridDims);
  pattern.block = read_dim3(root, "block", detail::kMaxBlockDims);
  if (pattern.block.count() > detail::kMaxBlockThreads) {
    Node::fail(root.at("block"), "expected at most " + std::to_string(detail::kMaxBlockThreads) + " threads, got " +
                                     std::to_string(pattern.block.count()));
  }
  pattern.registers_per_thread = integer_or(root, "registers_per_thread", 32, 1, 255);
  pattern.loads_in_flight = integer_or(root, "loads_in_flight", 4, 1, kMaxLoadsInFlight);
  pattern.store_burst = integer_or(root, "store_burst", 1, 1, kMaxLoadsInFlight);
  pattern.flops = root.has("flops") ? root.number("flops") : 0.0;
  pattern.overhead_instructions = root.has("overhead_instructions") ? root.number("overhead_instructions") : 0.0;
  pattern.useful_bytes = integer_or(root, "useful_bytes", 0, 0, kAnyInteger);
  const json& arrays = array_of(root, "arrays");
  for (std::size_t a = 0; a < arrays.size(); ++a)
    pattern.arrays.push_back(read_array(arrays[a], element(root.at("arrays"), a)));
  const json& phases = array_of(root, "phases");
  for (std::size_t p = 0; p < phases.size(); ++p)
    pattern.phases.push_back(read_phase(phases[p], element(root.at("phases"), p)));
  if (root.has("phase_loops")) {
    const json& loops = array_of(root, "phase_loops");
    for (std::size_t l = 0; l < loops.size(); ++l) {
      const Node node(loops[l], element(root.at("phase_loops"), l));
      check_keys(node, {"loop", "first_phase", "phase_count"});
      pattern.phase_loops.push_back({read_loop(node.required("loop"), node.at("loop")),
                                     static_cast<std::size_t>(node.integer("first_phase", 0, kAnyInteger)),
                                     static_cast<std::size_t>(node.integer("phase_count", 1, kAnyInteger))});
    }
  }
  validate_pattern(pattern);
  return pattern;
}

json pattern_to_json(const KernelPattern& pattern) {
  json arrays = json::array();
  for (const ArrayDecl& array : pattern.arrays) {
    arrays.push_back({{"name", array.name},
                      {"space", array.space == MemorySpace::shared ? "shared" : "global"},
                      {"element_bytes", array.element_bytes},
                      {"extents", array.extents}});
  }
  json phases = json::array();
  for (const Phase& phase : pattern.phases) {
    json loops = json::array();
    for (const Loop& loop : phase.loops) loops.push_back(write_loop(loop));
    json accesses = json::array();
    for (const Access& access : phase.accesses) {
      json index = json::array();
      for (const AffineIndex& dim : access.index) index.push_back(write_index(dim));
      json out{{"array", access.array},
               {"op", access.is_store ? "store" : "load"},
               {"index", index},
               {"vector", access.vector_elements},
               {"predicated", access.predicated}};
      for (const Guard& guard : access.guards) {
        out["guards"].push_back({{"value", write_index(guard.value)}, {"lower", guard.lower}, {"upper", guard.upper}});
      }
      accesses.push_back(out);
    }
    phases.push_back({{"loops", loops}, {"accesses", accesses}});
  }
  json out{{"name", pattern.name},
           {"grid", {{"x", pattern.grid.x}, {"y", pattern.grid.y}, {"z", pattern.grid.z}}},
           {"block", {{"x", pattern.block.x}, {"y", pattern.block.y}, {"z", pattern.block.z}}},
           {"registers_per_thread", pattern.registers_per_thread},
           {"loads_in_flight", pattern.loads_in_flight},
           {"store_burst", pattern.store_burst},
           {"flops", pattern.flops},
           {"overhead_instructions", pattern.overhead_instructions},
           {"useful_bytes", pattern.useful_bytes},
           {"arrays", arrays},
           {"phases", phases}};
  for (const PhaseLoop& loop : pattern.phase_loops) {
    out["phase_loops"].push_back(
        {{"loop", write_loop(loop.loop)}, {"first_phase", loop.first_phase}, {"phase_count", loop.phase_count}});
  }
  return out;
}

KernelPattern load_pattern(const std::filesystem::path& path) {
  return detail::read_json_file(path, "pattern", [](const json& document) { return pattern_from_json(document); });
}

} // namespace cachewise
