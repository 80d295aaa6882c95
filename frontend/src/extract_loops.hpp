// Internal to the extractor: loop summaries. A warp's loop whose iterations take one path and
// whose integer registers advance by the same amount every iteration (affine in the trip) is
// jumped ahead: its registers move by the skipped trips times their per-trip step, its counters
// grow by as many trips, and the steps of its last interpreted trips stand for the skipped ones
// (TraceStep::weight). docs/ptx-extraction.md, "Loop summaries", gives the rules.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "extract_program.hpp"

namespace cachewise::frontend {

class WarpState;

/// A frame of a warp's reconvergence stack: where its lanes run and where they wait to meet.
struct Frame {
  std::int32_t pc = 0;
  std::int32_t reconverge = kReconvergeAtExit;
  std::uint32_t mask = 0;
  friend bool operator==(const Frame&, const Frame&) = default;
};

/// Taint origin of a register a loop summary could not carry forward (not affine, and not read
/// before written in the loop): a decision on it means the block is traced again without summaries.
inline constexpr std::int32_t kOriginSkippedByLoopSummary = -2;

/// Thrown when a decision depends on a register marked kOriginSkippedByLoopSummary.
struct LoopSummaryInvalid {};

class LoopSummariser {
public:
  explicit LoopSummariser(const Program& program) : program_(program) {}

  void set_enabled(bool enabled) { enabled_ = enabled; }
  /// Forgets the previous warp's loops (their tallies go to tally() first).
  void start_warp();
  /// Whether before() must run for the next instruction.
  bool engaged() const { return enabled_ && !loops_.empty(); }
  bool recording() const { return recorder_ >= 0; }

  /// Before `instr` (at `pc`) runs on `active` lanes, of which `mask` pass its guard.
  void before(const WarpState& warp, std::int32_t pc, const Instr& instr, std::uint32_t active, std::uint32_t mask);
  /// After it ran: its destinations' steps per trip.
  void after(const WarpState& warp, const Instr& instr, std::uint32_t mask);
  /// A branch at `pc` back to `target`, taken by every active lane: a trip of that loop ended.
  /// May jump the loop ahead (registers of `warp`, counters and weights of `trace`).
  void back_edge(WarpState& warp, std::int32_t pc, std::int32_t target, const std::vector<Frame>& stack,
                 std::uint32_t exited, WarpTrace& trace);
  /// The warp ended: its loops' tallies go to tally().
  void end_warp();
  /// What the summaries did in the warps run so far, by loop (Program::loop_tally's keys).
  const std::map<std::int32_t, LoopTally>& tally() const { return tally_; }

private:
  using Lanes = std::array<std::int64_t, 32>;
  struct Loop {
    std::int32_t header = 0;
    std::int32_t last_back_edge = 0;    ///< the loop is [header, last_back_edge]
    std::int64_t trips_interpreted = 0; ///< ended by a back edge
    std::int64_t trips_skipped = 0;
    bool failed = false; ///< not summarisable in this run of the loop
  };
  /// One executed instruction of a recorded trip.
  struct Visit {
    std::int32_t pc = 0;
    std::uint32_t active = 0;
    std::uint32_t mask = 0;
    friend bool operator==(const Visit&, const Visit&) = default;
  };
  /// A memory access of the probed trip: its step and each lane's address step per trip.
  struct ProbedAccess {
    std::size_t step = 0;
    const Instr* instr = nullptr;
    Lanes delta{};
  };

  void pop_to(std::size_t size);
  void stop_recording();
  void start_recording(const WarpState& warp, const std::vector<Frame>& stack, std::uint32_t exited,
                       const WarpTrace& trace);
  void start_trip(const WarpState& warp, const WarpTrace& trace, std::int64_t trips_before);
  bool probe_holds(const WarpState& warp) const;
  void jump(WarpState& warp, WarpTrace& trace, std::int64_t trips, std::int64_t representative);
  void fail();
  /// Whether every destination lane the instruction writes holds data (nothing to extrapolate).
  bool makes_only_data(const Instr& instr) const;
  bool varies(const WarpState& warp, const Source& source, std::uint32_t lanes) const;
  bool poisoned(const Source& source) const {
    return source.kind == Source::Kind::reg && poison_[static_cast<std::size_t>(source.reg)];
  }
  /// The source's step per trip in each lane, read at `type` (0 for immediates), and the first
  /// trip at which extrapolating it would leave the type's range.
  void source_step(const WarpState& warp, const Source& source, ValueType type, std::uint32_t lanes, Lanes& now,
                   Lanes& step);
  void bound_by_range(std::int64_t value, std::int64_t step, ValueType type);
  void bound_by_compare(Compare op, std::int64_t a, std::int64_t da, std::int64_t b, std::int64_t db);

  const Program& program_;
  std::map<std::int32_t, LoopTally> tally_;
  bool enabled_ = true;
  std::vector<Loop> loops_; ///< innermost last
  int recorder_ = -1;       ///< index in loops_ of the loop whose trips are recorded

  // The recorder's trips: the previous one (A) and the one running (B), probed against A.
  bool have_previous_ = false;         ///< A's path is recorded
  bool previous_values_valid_ = false; ///< and its values
  bool recording_values_ = false;      ///< B records its values (the trip after it may be probed)
  bool probing_ = false;               ///< B is probed against A
  std::vector<Visit> previous_path_, path_;
  std::vector<Lanes> previous_values_, values_;
  std::vector<std::int64_t> trip_start_values_; ///< registers at the start of the running trip
  std::vector<std::uint32_t> trip_start_taint_;
  std::vector<std::int64_t> step_in_; ///< per register x lane: the step from A's start to B's
  std::vector<std::int64_t> step_;    ///< the same, updated by B's writes
  std::vector<std::uint8_t> poison_;  ///< per register: not affine in the trip
  std::vector<std::uint8_t> written_; ///< per register: written in B
  std::vector<std::uint8_t> live_in_; ///< per register: read in B before written
  std::vector<Frame> trip_start_stack_;
  std::uint32_t trip_start_exited_ = 0;
  std::vector<ProbedAccess> accesses_;
  bool pending_poison_ = false; ///< before(): the running instruction's destinations are not affine
  bool mismatch_ = false;       ///< B's path left A's
  bool hopeless_ = false;       ///< B has a decision or an address that is not affine
  std::int64_t distance_ = std::numeric_limits<std::int64_t>::max(); ///< first trip after B that may differ
  std::int64_t period_ = 1; ///< trips after which every access's lanes lie as in B relative to 128 B
  std::int64_t same_path_trips_ = 0;
  std::vector<std::size_t> trip_first_step_; ///< per recorded trip since the last jump: its first step
  double trip_start_instructions_ = 0;
  double trip_start_flops_ = 0;
  double trip_start_divisions_ = 0;
  double trip_start_constant_requests_ = 0;
};

} // namespace cachewise::frontend
