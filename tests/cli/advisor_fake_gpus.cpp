// advisor_fake_gpus: the `advisor` command line on fake GPUs, for tests. The list that
// CACHEWISE_FAKE_DEVICES names (tests/tuner/fake_gpus.hpp) is the device source; measuring
// children are forked from this process and mpirun starts it on every rank, so each process
// of a run has the same fakes.
#include <cstdlib>
#include <iostream>
#include <utility>

#include "cachewise/model/errors.hpp"
#include "fake_gpus.hpp"
#include "run_advisor.hpp"

int main(int argc, char** argv) {
  constexpr int kBadInput = 2;
  const char* path = std::getenv("CACHEWISE_FAKE_DEVICES");
  if (path == nullptr || *path == '\0') {
    std::cerr << "advisor: CACHEWISE_FAKE_DEVICES must name a fake device list\n";
    return kBadInput;
  }
  cachewise::tuner::FakeDevices fakes;
  try {
    fakes = cachewise::tuner::load_fake_devices(path);
  } catch (const cachewise::InputError& e) {
    std::cerr << "advisor: " << e.what() << '\n';
    return kBadInput;
  }
  const cachewise::tuner::FakeDeviceSource devices(std::move(fakes));
  return cachewise::cli::run_advisor(argc, argv, devices);
}
