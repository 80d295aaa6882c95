// The #include directives of a source file and where each resolves: the files a compile reads,
// which the compile cache hashes (compile.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cachewise::frontend {

/// One `#include` of a file: the name between the quotes or brackets, and whether it was quoted.
struct IncludeDirective {
  std::string name;
  bool quoted = false;
  int line = 0;
};

/// The #include directives of a file, by a scan of each line (no regex: a hostile file must not
/// recurse the matcher). Names longer than a path can be are reported, not followed.
std::vector<IncludeDirective> include_directives(std::string_view text);

/// Where `directive` of `includer` resolves: next to the includer (quoted), then the include
/// directories in order. Empty when not found there: a system header.
std::filesystem::path resolve_include(const IncludeDirective& directive, const std::filesystem::path& includer,
                                      const std::vector<std::filesystem::path>& directories);

} // namespace cachewise::frontend
