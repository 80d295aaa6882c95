// `advisor probe [-o FILE] [--quick] [--device N] [--force]`: measure the local GPU's cache model
// into a schema-v1 profile (raw curves embedded) plus a latency plot beside it.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "cachewise/kernels.hpp"
#include "cachewise/probe.hpp"
#include "command.hpp"
#include "common.hpp"

namespace cachewise::cli {
namespace {

volatile std::sig_atomic_t interrupted = 0;

extern "C" void on_interrupt(int) { interrupted = 1; }

/// SIGINT only raises a flag; the probe checks it between steps.
class InterruptGuard {
public:
  InterruptGuard() { previous_ = std::signal(SIGINT, on_interrupt); }
  ~InterruptGuard() { std::signal(SIGINT, previous_); }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
  void (*previous_)(int) = SIG_DFL;
};

std::filesystem::path svg_path_for(const std::filesystem::path& profile) {
  return profile.parent_path() / (profile.stem().string() + "-latency.svg");
}

/// Writes `text` to a temporary file beside `path`, then renames it into place.
void write_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out || !(out << text) || !out.flush()) {
      std::filesystem::remove(temporary);
      throw InputError(path.string() + ": cannot write file");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary);
    throw InputError(path.string() + ": cannot move file into place (" + error.message() + ")");
  }
}

std::string command_line(const std::string& output, bool quick, int device, bool force) {
  std::string text = "advisor probe -o " + output;
  if (quick) text += " --quick";
  if (device != 0) text += " --device " + std::to_string(device);
  if (force) text += " --force";
  return text;
}

void add_probe(CLI::App& root) {
  auto* command = root.add_subcommand("probe", "Measure the local GPU's caches into a device profile (needs a GPU)");
  auto output = std::make_shared<std::string>("cachewise-profile.json");
  auto quick = std::make_shared<bool>(false);
  auto device = std::make_shared<int>(0);
  auto force = std::make_shared<bool>(false);
  command->add_option("-o,--output", *output, "Profile to write; the latency plot goes beside it as <stem>-latency.svg")
      ->capture_default_str();
  command->add_flag("--quick", *quick, "Fewer points and repeats: a sanity profile in seconds");
  command->add_option("--device", *device, "CUDA device index")->capture_default_str();
  command->add_flag("--force", *force, "Overwrite existing output files");
  command->callback([output, quick, device, force] {
    const std::filesystem::path profile_path = *output;
    const std::filesystem::path svg_path = svg_path_for(profile_path);
    if (*device < 0) throw InputError("--device: expected an index >= 0, got " + std::to_string(*device));
    for (const auto& path : {profile_path, svg_path}) {
      if (!*force && std::filesystem::exists(path)) {
        throw InputError(path.string() + ": already exists (pass --force to overwrite)");
      }
    }
    const std::filesystem::path folder = profile_path.parent_path();
    if (!folder.empty() && !std::filesystem::is_directory(folder)) {
      throw InputError(folder.string() + ": no such directory");
    }
    kernels::require_device(*device);

    InterruptGuard guard;
    probe::ProbeOptions options;
    options.quick = *quick;
    options.device = *device;
    options.command_line = command_line(*output, *quick, *device, *force);
    const auto report = [](const probe::ProbeProgress& progress) {
      std::cerr << "probe: [" << std::setw(2) << progress.step << '/' << progress.steps << "] " << std::fixed
                << std::setprecision(1) << std::setw(5) << progress.elapsed_s << " s  " << progress.stage << std::endl;
    };
    DeviceProfile profile;
    try {
      profile = probe::run_probe(options, report, [] { return interrupted != 0; });
    } catch (const probe::ProbeCancelled&) {
      // Nothing has been written yet: the files are written only after the last step.
      std::cerr << "advisor: probe interrupted; no profile written\n";
      std::exit(130);
    }
    // Both files complete or neither replaced: write the plot, then the profile (temp + rename each).
    write_atomically(svg_path, probe::latency_svg(profile));
    save_profile(profile, profile_path);
    std::cout << "wrote " << profile_path.string() << " and " << svg_path.string() << '\n';
  });
}

} // namespace

CACHEWISE_REGISTER_COMMAND(40, add_probe);

} // namespace cachewise::cli
