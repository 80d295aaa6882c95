// Helpers shared by the front end's spec-side tests.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "cachewise/model.hpp"

namespace cachewise::frontend::test_support {

/// The InputError message `run` throws, or "no error".
inline std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

/// An empty directory of its own for one test's compile cache, so its compilations are its own.
inline std::filesystem::path fresh_cache(const std::string& name) {
  const auto directory =
      std::filesystem::temp_directory_path() / ("cachewise-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(directory);
  return directory;
}

} // namespace cachewise::frontend::test_support
