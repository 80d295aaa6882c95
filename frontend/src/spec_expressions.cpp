// The spec's expressions per candidate: search space, launch shape, buffer sizes.
#include "cachewise/frontend/spec_expressions.hpp"

#include <algorithm>
#include <set>

namespace cachewise::frontend {
namespace {

/// The names every candidate shares: the args and the defines whose value is an integer (a
/// size #define'd for the kernel, "--define N=4096", may size the grid too).
Bindings constant_bindings(const KernelSpec& spec) {
  Bindings bindings;
  for (const NamedValue& define : integer_defines(spec)) bindings[define.name] = define.value;
  for (const NamedValue& arg : spec.args) bindings[arg.name] = arg.value;
  return bindings;
}

Bindings bindings_of(Bindings constants, const Config& config) {
  for (const auto& [name, value] : config.values()) constants[name] = value;
  return constants;
}

void check_names(const Expression& expression, const std::set<std::string>& known,
                 const std::vector<ArgumentText>& value_args = {}) {
  for (const std::string& name : expression.names()) {
    if (known.contains(name)) continue;
    if (std::ranges::find(value_args, name, &ArgumentText::name) != value_args.end()) {
      throw InputError(expression.context() + ": '" + name +
                       "' is a floating-point arg; expressions are integer (give --arg " + name +
                       "=N with an integer to use it here)");
    }
    std::string listed;
    for (const std::string& k : known) listed += (listed.empty() ? "" : ", ") + k;
    throw InputError(expression.context() + ": unknown name '" + name +
                     "' (known: " + (listed.empty() ? "none" : listed) + ")");
  }
}

std::vector<Expression> parse_dims(const std::string& text, const std::string& context) {
  std::vector<Expression> dims = parse_expression_list(text, context);
  if (dims.size() > 3)
    throw InputError(context + ": at most 3 dimensions (x, y, z), got " + std::to_string(dims.size()));
  return dims;
}

Dim3 evaluate_dims(const std::vector<Expression>& dims, const Bindings& bindings, const Config& config) {
  std::array<std::int64_t, 3> values = {1, 1, 1};
  for (std::size_t i = 0; i < dims.size(); ++i) {
    values[i] = dims[i].evaluate(bindings);
    if (values[i] < 1) {
      throw InputError(dims[i].context() + ": " + std::string(1, "xyz"[i]) + " = '" + dims[i].text() + "' is " +
                       std::to_string(values[i]) + " for " + config.to_string() +
                       "; launch dimensions must be at least 1");
    }
  }
  return {values[0], values[1], values[2]};
}

std::optional<Expression> parsed_or_none(const std::string& text) {
  try {
    return Expression::parse(text, "--entry");
  } catch (const InputError&) {
    return std::nullopt;
  }
}

/// "true"/"false" and a type parameter's name are kept as text; an integer expression over
/// known names is evaluated per candidate; anything else that reads as a type ("float",
/// "unsigned int", "my::vec3") is passed to the compiler as written. What is left is an
/// expression whose unknown names or syntax error are reported.
SpecExpressions::TemplateArgument template_argument(const std::string& text, const std::set<std::string>& known,
                                                    const std::set<std::string>& types) {
  if (text == "true" || text == "false" || types.contains(text)) return {std::nullopt, text};
  const std::optional<Expression> expression = parsed_or_none(text);
  if (expression && std::ranges::all_of(expression->names(), [&](const std::string& n) { return known.contains(n); })) {
    return {expression, text};
  }
  if (is_type_name(text)) return {std::nullopt, text};
  return {Expression::parse(text, "--entry"), text};
}

} // namespace

SpecExpressions::SpecExpressions(const KernelSpec& spec) : spec_(spec) {
  validate_kernel_spec(spec_);
  std::set<std::string> known;
  for (const ParameterValues& parameter : spec_.parameters) known.insert(parameter.name);
  for (const auto& [name, value] : constant_bindings(spec_)) known.insert(name);
  grid_ = parse_dims(spec_.grid, "--grid");
  block_ = parse_dims(spec_.block, "--block");
  if (!spec_.dynamic_shared_bytes.empty())
    dynamic_shared_.push_back(Expression::parse(spec_.dynamic_shared_bytes, "--shared"));
  if (!spec_.useful_bytes.empty()) useful_.push_back(Expression::parse(spec_.useful_bytes, "--useful-bytes"));
  for (const BufferSpec& buffer : spec_.buffers)
    buffers_.push_back(Expression::parse(buffer.bytes, "--buffer " + buffer.name));
  for (const std::string& constraint : spec_.constraints)
    constraints_.push_back(Expression::parse(constraint, "--constraint"));
  std::set<std::string> types;
  for (const ParameterValues& parameter : spec_.parameters) {
    if (parameter.is_type()) types.insert(parameter.name);
  }
  for (const std::string& argument : parse_entry_name(spec_.entry).template_arguments) {
    template_arguments_.push_back(template_argument(argument, known, types));
  }
  // A type parameter has no integer value: expressions may not name it.
  for (const std::string& type : types) known.erase(type);
  for (const auto* list : {&grid_, &block_, &dynamic_shared_, &useful_, &buffers_, &constraints_}) {
    for (const Expression& expression : *list) check_names(expression, known, spec_.value_args);
  }
  for (const TemplateArgument& argument : template_arguments_) {
    if (argument.expression) check_names(*argument.expression, known, spec_.value_args);
  }
  if (!spec_.contents.empty() && known.contains("i")) {
    throw InputError("--contents: 'i' is the element index there; rename the parameter or arg 'i'");
  }
  known.insert("i");
  for (const ContentsSpec& contents : spec_.contents) {
    contents_.push_back(Expression::parse(contents.value, "contents of '" + contents.name + "'"));
    check_names(contents_.back(), known);
  }
}

const DeclaredContents* EvaluatedSpec::contents_of(std::string_view name) const {
  const auto found = std::ranges::find(contents, name, &DeclaredContents::buffer);
  return found == contents.end() ? nullptr : &*found;
}

SearchSpace SpecExpressions::search_space() const {
  SearchSpace space;
  for (const ParameterValues& parameter : spec_.parameters) space.add_parameter(parameter.name, parameter.values);
  // Counted, not enumerated: a space past the cap is refused before any candidate exists.
  if (const std::uint64_t size = space.unconstrained_size(); size > spec_.max_candidates) {
    throw InputError("kernel spec: the parameters span " + std::to_string(size) + " candidates, more than the cap of " +
                     std::to_string(spec_.max_candidates) +
                     " (give fewer values, or raise the cap with --max-candidates N)");
  }
  std::set<std::string> parameter_names;
  for (const ParameterValues& parameter : spec_.parameters) parameter_names.insert(parameter.name);
  for (const Expression& constraint : constraints_) {
    std::vector<std::string> used;
    std::ranges::copy_if(constraint.names(), std::back_inserter(used),
                         [&](const std::string& n) { return parameter_names.contains(n); });
    if (used.empty()) throw InputError("--constraint: '" + constraint.text() + "' names no parameter");
    // By value, not `this`: the space outlives the model (KernelCandidates keeps only the space).
    space.add_constraint(
        used,
        [constants = constant_bindings(spec_), constraint](const Config& config) {
          return constraint.evaluate(bindings_of(constants, config)) != 0;
        },
        constraint.text());
  }
  return space;
}

Config SpecExpressions::with_types(Config config) const {
  for (const ParameterValues& parameter : spec_.parameters) {
    if (!parameter.is_type() || !config.has(parameter.name)) continue;
    const std::int64_t index = config.get(parameter.name);
    config.set_word(parameter.name, index, parameter.types.at(static_cast<std::size_t>(index)));
  }
  return config;
}

Bindings SpecExpressions::bindings_for(const Config& config) const {
  return bindings_of(constant_bindings(spec_), config);
}

EvaluatedSpec SpecExpressions::evaluate(const Config& config) const {
  EvaluatedSpec evaluated;
  evaluated.config = with_types(config);
  evaluated.bindings = bindings_for(config);
  evaluated.grid = evaluate_dims(grid_, evaluated.bindings, config);
  evaluated.block = evaluate_dims(block_, evaluated.bindings, config);
  if (!dynamic_shared_.empty()) {
    evaluated.dynamic_shared_bytes = dynamic_shared_.front().evaluate(evaluated.bindings);
    if (evaluated.dynamic_shared_bytes < 0) {
      throw InputError("--shared: '" + dynamic_shared_.front().text() + "' is " +
                       std::to_string(evaluated.dynamic_shared_bytes) + " bytes for " + config.to_string() +
                       "; sizes must not be negative");
    }
  }
  std::int64_t total_bytes = 0;
  for (const Expression& buffer : buffers_) {
    const std::int64_t bytes = buffer.evaluate(evaluated.bindings);
    if (bytes < 1) {
      throw InputError(buffer.context() + ": '" + buffer.text() + "' is " + std::to_string(bytes) + " bytes for " +
                       config.to_string() + "; a buffer needs at least 1 byte");
    }
    if (__builtin_add_overflow(total_bytes, bytes, &total_bytes))
      throw InputError("--buffer: the buffers' sizes overflow 64 bits");
    evaluated.buffer_bytes.push_back(bytes);
  }
  evaluated.useful_bytes = useful_.empty() ? total_bytes : useful_.front().evaluate(evaluated.bindings);
  for (const TemplateArgument& argument : template_arguments_) {
    if (argument.expression)
      evaluated.template_arguments.push_back(std::to_string(argument.expression->evaluate(evaluated.bindings)));
    else
      evaluated.template_arguments.push_back(evaluated.config.has(argument.text) ? evaluated.config.text(argument.text)
                                                                                 : argument.text);
  }
  for (std::size_t i = 0; i < contents_.size(); ++i) {
    const ContentsSpec& contents = spec_.contents[i];
    evaluated.contents.emplace_back(contents.name, contents_[i],
                                    contents_element_type(contents.type, "--contents " + contents.name),
                                    evaluated.bindings);
  }
  return evaluated;
}

bool SpecExpressions::evaluation_uses(std::string_view parameter) const {
  for (const auto* list : {&grid_, &block_, &dynamic_shared_, &useful_, &buffers_, &contents_}) {
    for (const Expression& expression : *list) {
      const auto names = expression.names();
      if (std::ranges::find(names, parameter) != names.end()) return true;
    }
  }
  return false;
}

} // namespace cachewise::frontend
