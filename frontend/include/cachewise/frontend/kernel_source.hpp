// cachewise::frontend — what the front end reads from the CUDA source text itself: the entry's
// parameter names and types, so that --buffer odata=... can name the pointer parameter `odata`
// and --arg alpha=2.5 or --arg p.width=4096 can be encoded as the parameter's type; the fields
// of a struct passed by value; and what makes a --param unable to reach the code (a #define
// that overrides it, a template parameter given as a macro). Everything about the kernel's
// behaviour comes from the compiled code, never from here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cachewise::frontend {

/// One field of a struct definition, in declaration order.
struct SourceField {
  std::string name;
  std::string type;          ///< as for SourceParameter::type; a pointer's ends in " *"
  std::int64_t elements = 1; ///< an array field "int dims[3]": 3
};

struct SourceParameter {
  std::string name; ///< empty for an unnamed parameter
  bool pointer = false;
  std::string type; ///< without qualifiers and `struct`: "float", "unsigned int", "Params"; empty when unknown
  /// A struct passed by value whose definition is in the source: its fields.
  std::optional<std::vector<SourceField>> fields;
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
/// Whether `source` names the identifier `name` outside comments (a macro a size may set).
bool names_identifier(std::string_view source, std::string_view name);

/// `source` with every namespace-scope definition of a host-only function blanked out (same
/// length, newlines kept, so lines and columns stay): a function with a parameter list and a
/// body, without __global__, __device__, constexpr, consteval or extern, and with no
/// preprocessor line inside it. What remains is what the device compiles, plus the file's
/// includes and declarations. nullopt when the braces do not balance outside preprocessor lines
/// or the file holds a raw string literal: then nothing can be set aside safely.
std::optional<std::string> device_side_source(std::string_view source);

/// The data fields of `struct NAME { ... }` or `typedef struct { ... } NAME;` in `source`
/// (comments ignored; member functions and static members skipped), or nullopt when there is
/// no such definition.
std::optional<std::vector<SourceField>> struct_fields(std::string_view source, std::string_view type_name);

} // namespace cachewise::frontend
