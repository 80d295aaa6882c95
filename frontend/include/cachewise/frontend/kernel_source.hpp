// cachewise::frontend — what the front end reads from the CUDA source text itself: only the
// entry's parameter names, so that --buffer odata=... can name the pointer parameter `odata`.
// Everything about the kernel's behaviour comes from the compiled code, never from here.
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

} // namespace cachewise::frontend
