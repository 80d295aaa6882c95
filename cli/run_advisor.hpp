// The `advisor` command line as a call: main() passes the device source (the CUDA driver's
// GPUs), a test executable built from the same sources a fake one (tests/cli/).
#pragma once

#include "cachewise/tuner/device_source.hpp"

namespace cachewise::cli {

/// Parses argv, runs the subcommand on `devices` and returns the exit status (0; 2 for bad
/// input or no GPU, the error as one line on stderr; 1 for any other failure).
int run_advisor(int argc, char** argv, const tuner::DeviceSource& devices);

/// The device source run_advisor was given: where `advisor tune` lists and measures GPUs.
const tuner::DeviceSource& device_source();

} // namespace cachewise::cli
