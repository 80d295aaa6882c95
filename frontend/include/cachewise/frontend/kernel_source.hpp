// cachewise::frontend — what the front end reads from the CUDA source text itself: the entry's
// parameter names, so that --buffer odata=... can name the pointer parameter `odata`, and what
// makes a --param unable to reach the code (a #define that overrides it, a template parameter
// given as a macro). Everything about the kernel's behaviour comes from the compiled code.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cachewise::frontend {

struct SourceParameter {
  std::string name; ///< empty for an unnamed parameter
  bool pointer = false;
};

/// The file's bytes; throws InputError "PATH: cannot open file".
std::string read_file_bytes(const std::filesystem::path& path);

/// The parameter list of the first __global__ function named `function` in `source`
/// (comments ignored), or nullopt when there is none (e.g. the kernel comes from a macro).
std::optional<std::vector<SourceParameter>> kernel_parameters(std::string_view source, std::string_view function);

/// The line (1-based) of a `#define name` in `source` that no enclosing `#ifndef name` or
/// `#if !defined(name)` guards (so it overrides -Dname), or nullopt when there is none.
std::optional<int> unguarded_define_line(std::string_view source, std::string_view name);

/// The first __global__ function template named `function`: its line (1-based) and its
/// template parameters' names in order; nullopt when `function` is no such template.
struct TemplateDeclaration {
  int line = 0;
  std::vector<std::string> parameters;
};
std::optional<TemplateDeclaration> kernel_template(std::string_view source, std::string_view function);

} // namespace cachewise::frontend
