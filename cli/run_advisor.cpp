// `advisor`'s body: the registered subcommands parsed and run on the device source main()
// gives. Errors become one line on stderr: bad input or no GPU -> exit 2; any other failure -> exit 1.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <iostream>
#include <malloc.h>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cachewise/model.hpp"
#include "command.hpp"
#include "common.hpp"
#include "run_advisor.hpp"

namespace cachewise::cli {
namespace {
std::vector<std::pair<int, CommandRegistrar>>& registry() {
  static std::vector<std::pair<int, CommandRegistrar>> commands;
  return commands;
}

const tuner::DeviceSource* run_devices = nullptr;
} // namespace

bool register_command(int order, CommandRegistrar registrar) {
  registry().emplace_back(order, registrar);
  return true;
}

void add_registered_commands(CLI::App& root) {
  auto commands = registry();
  std::ranges::sort(commands, {}, &std::pair<int, CommandRegistrar>::first);
  for (const auto& [order, registrar] : commands) registrar(root);
}

const tuner::DeviceSource& device_source() {
  if (run_devices == nullptr) throw std::logic_error("device_source: run_advisor has not started");
  return *run_devices;
}

int run_advisor(int argc, char** argv, const tuner::DeviceSource& devices) {
  constexpr int kBadInput = 2;
  run_devices = &devices;
  // Traced blocks come and go by the thousand, each a few MB of steps: with glibc's defaults each
  // is a fresh mmap whose pages fault in one by one (on the development VM a GEMM candidate spent
  // 5 of its 7 s there). Keeping freed memory in the heap makes them reuse warm pages.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  CLI::App app{"cachewise advisor: measure a GPU's caches, model a kernel's memory accesses, and suggest its layout"};
  app.name("advisor");
  app.set_version_flag("--version", std::string("cachewise ") + CACHEWISE_VERSION);
  app.require_subcommand(1);
  add_registered_commands(app);
  const auto commands = app.get_subcommands([](const CLI::App*) { return true; });
  const bool known =
      std::ranges::any_of(commands, [&](const CLI::App* c) { return argc > 1 && c->get_name() == argv[1]; });
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::string valid;
    for (const CLI::App* command : commands) valid += (valid.empty() ? "" : ", ") + command->get_name();
    std::cerr << "advisor: unknown subcommand '" << argv[1] << "' (valid: " << valid << ")\n";
    return kBadInput;
  }
  set_command_line(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) { // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "advisor: " << e.what() << " (see --help)\n";
    return kBadInput;
  } catch (const cachewise::InputError& e) {
    std::cerr << "advisor: " << e.what() << '\n';
    return kBadInput;
  } catch (const cachewise::NoDeviceError& e) {
    std::cerr << "advisor: " << e.what() << '\n';
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "advisor: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

} // namespace cachewise::cli
