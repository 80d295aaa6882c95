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

/// A limit of ours rather than a fault of the input: a block too long to trace. Ranking
/// several candidates, the one that hits it is rejected alone; otherwise it is an InputError.
class TraceLimitError : public InputError {
public:
  using InputError::InputError;
};

/// The operation needs a CUDA device and none is usable ("no CUDA device: ...").
class NoDeviceError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace cachewise
