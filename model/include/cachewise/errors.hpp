// cachewise errors. Libraries never print: they throw these, and the CLI maps them to one line
// and an exit code (2 for both).
#pragma once

#include <stdexcept>

namespace cachewise {

/// Bad input from the user: a malformed file, an unknown name, an impossible size or config.
class InputError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The operation needs a CUDA device and none is usable ("no CUDA device: ...").
class NoDeviceError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace cachewise
