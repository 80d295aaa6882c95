// A small tuning run for the kill -9 / resume test: the fake workload of fake_workload.hpp,
// every candidate in a child process, journaled; each evaluation start is logged (fsync'ed)
// so the test can tell what was measured in which run.
// Usage: tuner_resume_helper JOURNAL START_LOG RESULTS_JSON
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

#include "cachewise/tuner.hpp"
#include "fake_workload.hpp"

namespace {

void append_synced(const char* path, const std::string& line) {
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  const std::string text = line + '\n';
  if (::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size())) ::fsync(fd);
  ::close(fd);
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: tuner_resume_helper JOURNAL START_LOG RESULTS_JSON\n");
    return 2;
  }
  const char* start_log = argv[2];
  append_synced(start_log, "run " + std::to_string(::getpid()));
  try {
    using namespace cachewise;
    tuner::Tuner tuner(tuner::testing::fake_problem(), tuner::testing::fake_space());
    tuner.set_measure([start_log](const Config& config, std::int64_t iteration) {
      if (iteration == 0) append_synced(start_log, config.to_string());
      std::this_thread::sleep_for(std::chrono::milliseconds(15)); // slow enough to be killed mid-run
      return tuner::testing::fake_time_ms(config);
    });
    tuner::Options options;
    options.measurement.warmup_runs = 1;
    options.measurement.min_repeats = 4;
    options.journal = argv[1];
    tuner.set_options(options);
    tuner::save_results_json(tuner.tune(), argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tuner_resume_helper: %s\n", e.what());
    return 1;
  }
  return 0;
}
