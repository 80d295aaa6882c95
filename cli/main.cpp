// `advisor`: the cachewise command line, on this host's CUDA devices.
#include "run_advisor.hpp"

int main(int argc, char** argv) {
  const cachewise::tuner::CudaDeviceSource devices;
  return cachewise::cli::run_advisor(argc, argv, devices);
}
