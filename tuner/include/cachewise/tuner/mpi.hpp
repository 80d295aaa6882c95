// cachewise::tuner over MPI (`mpirun -np N advisor tune ... --mpi`): rank 0 plans (the
// strategy's order, widening, contenders) and only coordinates; ranks 1..N-1 ask for work,
// measure each candidate in their own child process on one GPU of their host (local rank mod
// its GPUs) and send the record back; rank 0 journals every record as it arrives. A rank
// silent past the candidate timeout (plus a grace) is taken for dead and its candidate is
// handed out again. Open MPI aborts the whole job when a rank dies unless mpirun runs with
// --enable-recovery; either way the journal on rank 0 lets a new run resume (docs/tuner.md).
// Built only when CMake finds MPI; otherwise Session says so.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cachewise/tuner/autotuner.hpp"
#include "cachewise/tuner/devices.hpp"

namespace cachewise::tuner::mpi {

bool built_with_mpi();

/// The process's MPI lifetime. Rank 0's host may lack a GPU; every other rank needs one.
class Session {
public:
  /// MPI_Init, then (collectively) each rank's device: host_devices[local rank % size]. Throws
  /// InputError on rank 0 when built without MPI, with one rank, when a measuring rank has no
  /// GPU or the measuring ranks' GPUs are of different models; the other ranks then exit 2
  /// quietly, so the error is one line.
  explicit Session(const std::vector<MeasuringDevice>& host_devices);
  ~Session(); ///< MPI_Finalize, unless a rank died (Open MPI's finalize would wait for it): then _exit
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool coordinator() const { return rank_ == 0; }
  /// This rank's GPU (host, rank set); on rank 0, rank 1's, naming the model measured.
  const MeasuringDevice& device() const { return device_; }
  /// Ends every rank with `code` (MPI_Abort): for an error on one rank only.
  [[noreturn]] void abort(int code);

  // Used by tune(): ranks found dead stay dead for the rest of the session.
  std::vector<bool>& dead_ranks() { return dead_; }
  bool& rank_died() { return rank_died_; }
  int next_tune() {
    return ++tunes_;
  } ///< numbers each tune() of the session, so a late message of an earlier one is told apart

private:
  int rank_ = 0;
  int size_ = 1;
  MeasuringDevice device_;
  std::vector<bool> dead_;
  bool rank_died_ = false;
  int tunes_ = 0;
};

/// Every rank calls it with the same tuner (problem, space, strategy, options, measure): rank 0
/// runs tuner.tune() with the rounds handed out to the other ranks and returns the result; the
/// others measure what they are handed until rank 0 ends the run, and return nullopt.
std::optional<TuningResult> tune(Tuner& tuner, Session& session);

} // namespace cachewise::tuner::mpi
