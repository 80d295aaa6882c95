// cachewise::frontend::SpecExpressions — a kernel spec's expressions, parsed once: the parameter
// space with its constraints, and per candidate (EvaluatedSpec) the launch shape (grid, block,
// dynamic shared memory), buffer sizes, useful bytes and template arguments, in exact integer
// arithmetic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cachewise/model/search_space.hpp"
#include "cachewise/frontend/contents.hpp"
#include "cachewise/frontend/expression.hpp"
#include "cachewise/frontend/spec.hpp"
#include "cachewise/model.hpp"

namespace cachewise::frontend {

/// A kernel spec's expressions evaluated for one config.
struct EvaluatedSpec {
  /// The declared contents of buffer `name`; nullptr when none are declared.
  const DeclaredContents* contents_of(std::string_view name) const;

  Config config;
  Bindings bindings; ///< the config's parameters and the spec's args
  Dim3 grid;
  Dim3 block;
  std::int64_t dynamic_shared_bytes = 0;
  std::vector<std::int64_t> buffer_bytes; ///< in the spec's buffer order
  std::vector<DeclaredContents> contents; ///< in the spec's contents order
  std::int64_t useful_bytes = 0;
  /// The C++ text of each template argument: "32", "true", "float"; empty: parameters are macros.
  std::vector<std::string> template_arguments;
};

class SpecExpressions {
public:
  /// Parses every expression; throws InputError on a syntax error or a name that is neither
  /// a parameter nor an arg ("--grid: unknown name 'widht' (known: ...)"); contents may also
  /// name `i`, the element index.
  explicit SpecExpressions(const KernelSpec& spec);

  /// The parameters with the spec's constraints.
  SearchSpace search_space() const;

  /// `config` with its type parameters' values shown as their types (T=float).
  Config with_types(Config config) const;

  /// Throws InputError on division by zero, overflow, a launch dimension below 1 or a
  /// buffer size below 1 (naming the expression and the config).
  EvaluatedSpec evaluate(const Config& config) const;

  /// Whether the grid, block, shared, buffer, contents or useful-bytes expressions name `parameter`.
  bool evaluation_uses(std::string_view parameter) const;

  bool templated() const { return !template_arguments_.empty(); }

  /// One template argument of the entry: an integer expression, or (no expression) a fixed
  /// text ("true", "float") or a type parameter's name.
  struct TemplateArgument {
    std::optional<Expression> expression;
    std::string text;
  };

private:
  Bindings bindings_for(const Config& config) const;

  KernelSpec spec_;
  std::vector<Expression> grid_;
  std::vector<Expression> block_;
  std::vector<Expression> dynamic_shared_;
  std::vector<Expression> useful_;
  std::vector<Expression> buffers_;
  std::vector<Expression> contents_;
  std::vector<Expression> constraints_;
  std::vector<TemplateArgument> template_arguments_;
};

} // namespace cachewise::frontend
