// A build without MPI: --mpi says so and nothing else changes.
#include <cstdlib>

#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/mpi.hpp"

namespace cachewise::tuner::mpi {

bool built_with_mpi() { return false; }

Session::Session(const std::vector<MeasuringDevice>& /*host_devices*/) {
  throw InputError("tune --mpi: this advisor was built without MPI (install libopenmpi-dev and configure again)");
}

Session::~Session() = default;

void Session::abort(int code) { std::exit(code); }

std::optional<TuningResult> tune(Tuner& tuner, Session& /*session*/) { return tuner.tune(); }

} // namespace cachewise::tuner::mpi
