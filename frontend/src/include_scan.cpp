// include_scan.hpp's scan, by hand over each line.
#include "include_scan.hpp"

namespace cachewise::frontend {

/// The #include directives of a file, by a scan of each line (no regex: a hostile file must not
/// recurse the matcher). Names longer than a path can be are reported, not followed.
std::vector<IncludeDirective> include_directives(std::string_view text) {
  std::vector<IncludeDirective> directives;
  int line = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line;
    std::string_view rest = text.substr(start, end - start);
    start = end + 1;
    auto skip_blanks = [&] {
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    };
    skip_blanks();
    if (rest.empty() || rest.front() != '#') continue;
    rest.remove_prefix(1);
    skip_blanks();
    if (rest.substr(0, 7) != "include") continue;
    rest.remove_prefix(7);
    skip_blanks();
    if (rest.empty() || (rest.front() != '"' && rest.front() != '<')) continue;
    const char close = rest.front() == '"' ? '"' : '>';
    const std::size_t name_end = rest.find(close, 1);
    if (name_end == std::string_view::npos) continue; // the compiler reports it
    directives.push_back({std::string(rest.substr(1, name_end - 1)), close == '"', line});
  }
  return directives;
}

/// Where `directive` of `includer` resolves: next to the includer (quoted), then the include
/// directories in order. Empty when not found there: a system header, which enters the key
/// through the compiler's identity.
std::filesystem::path resolve_include(const IncludeDirective& directive, const std::filesystem::path& includer,
                                      const std::vector<std::filesystem::path>& directories) {
  const std::filesystem::path name = directive.name;
  if (name.is_absolute()) return name;
  std::error_code ignored;
  if (directive.quoted && std::filesystem::exists(includer.parent_path() / name, ignored))
    return includer.parent_path() / name;
  for (const auto& directory : directories) {
    if (std::filesystem::exists(directory / name, ignored)) return directory / name;
  }
  return {};
}

} // namespace cachewise::frontend
