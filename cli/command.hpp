// Subcommand registry for the `advisor` CLI. A cmd_<name>.cpp file defines a function that
// adds its CLI11 subcommand and registers it with CACHEWISE_REGISTER_COMMAND(order, fn).
#pragma once

#include <CLI/CLI.hpp>

namespace cachewise::cli {

using CommandRegistrar = void (*)(CLI::App& root);

/// Returns true so it can initialise a file-scope constant.
bool register_command(int order, CommandRegistrar registrar);
void add_registered_commands(CLI::App& root);

} // namespace cachewise::cli

#define CACHEWISE_REGISTER_COMMAND(order, fn) \
  [[maybe_unused]] static const bool cachewise_registered_##fn = ::cachewise::cli::register_command(order, fn)
