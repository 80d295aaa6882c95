// Loop summaries (docs/ptx-extraction.md, "Loop summaries"): the outermost loop of a warp that
// is not known to be unsummarisable records two trips, A and B, and probes B against A: the
// same instructions with the same lanes, every integer value of B an affine function of the trip
// (a sum, difference or product by a loop-invariant of affine values), every branch, guard and
// address decided by such values. Then trip B + t runs as B with every value moved by t steps,
// until the first comparison that flips or the first value that would leave its type's range;
// the loop jumps there.
#include "extract_loops.hpp"

#include <algorithm>
#include <bit>
#include <mutex>
#include <numeric>

#include "extract_warp.hpp"

namespace cachewise::frontend {
namespace {

/// Trips interpreted before the representative ones, so that the caches they fill (a stencil's
/// rows read again a trip later, a GEMM's tiles other blocks read) are as warm for those as for
/// the trips they stand for; and the fewest representative trips. Chosen on the built-in
/// families' cross-check (tests/frontend/builtin_crosscheck_test.cpp): with 3 and 1, stencil3d
/// and gemm configurations there moved 1.2-6% from their patterns; with 4 and 4, two f16 gemm
/// configurations 1.5% (docs/ptx-extraction.md, "Loop summaries").
constexpr std::int64_t kWarmTrips = 4;
constexpr std::int64_t kFewestRepresentativeTrips = 4;
/// The first trip that can end in a jump: trips before it record their path only.
constexpr std::int64_t kFirstProbedTrips = kWarmTrips + kFewestRepresentativeTrips;
/// A trip longer than this many instructions (an inner loop run in full) is not recorded.
constexpr std::size_t kMaxTripInstructions = 16384;
/// Registers past this many are not recorded (each recorded array holds 256 bytes a register).
constexpr std::int32_t kMaxRecordedRegisters = 16384;
/// Lanes' addresses lie alike relative to 128-byte lines (and 32 banks of 4 bytes) again after
/// this many bytes of step.
constexpr std::int64_t kAlignmentPeriodBytes = 128;

__extension__ using I128 = __int128;

std::int64_t saturate(I128 value) {
  constexpr auto high = static_cast<I128>(std::numeric_limits<std::int64_t>::max());
  return static_cast<std::int64_t>(std::clamp<I128>(value, 0, high));
}

/// a - b wrapping as the registers' arithmetic does (no signed overflow).
std::int64_t wrapping_difference(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}

/// Trips after which a lane whose address moves `step` bytes a trip lies alike again.
std::int64_t alignment_period(std::int64_t step) {
  const std::int64_t residue = ((step % kAlignmentPeriodBytes) + kAlignmentPeriodBytes) % kAlignmentPeriodBytes;
  return residue == 0 ? 1 : kAlignmentPeriodBytes / std::gcd(residue, kAlignmentPeriodBytes);
}

} // namespace

void LoopSummariser::start_warp() {
  loops_.clear();
  stop_recording();
}

void LoopSummariser::end_warp() { pop_to(0); }

void LoopSummariser::pop_to(std::size_t size) {
  for (std::size_t i = size; i < loops_.size(); ++i) {
    const Loop& loop = loops_[i];
    if (loop.trips_skipped == 0) continue;
    LoopTally& tally = tally_[loop.header];
    tally.runs += 1;
    tally.trips_interpreted += loop.trips_interpreted + 1; // the trip that left the loop ends at no back edge
    tally.trips_skipped += loop.trips_skipped;
  }
  if (recorder_ >= static_cast<int>(size)) stop_recording();
  loops_.resize(size);
}

void LoopSummariser::stop_recording() {
  recorder_ = -1;
  have_previous_ = false;
  path_.clear();
  previous_path_.clear();
  values_.clear();
  previous_values_.clear();
  trip_first_step_.clear();
}

void LoopSummariser::fail() {
  loops_[static_cast<std::size_t>(recorder_)].failed = true;
  stop_recording();
}

void LoopSummariser::start_recording(const WarpState& warp, const std::vector<Frame>& stack, std::uint32_t exited,
                                     const WarpTrace& trace) {
  if (program_.register_count > kMaxRecordedRegisters) {
    loops_.back().failed = true;
    return;
  }
  recorder_ = static_cast<int>(loops_.size()) - 1;
  const auto slots = static_cast<std::size_t>(program_.register_count) * 32;
  const auto registers = static_cast<std::size_t>(program_.register_count);
  step_in_.assign(slots, 0);
  step_.assign(slots, 0);
  poison_.assign(registers, 0);
  written_.assign(registers, 0);
  live_in_.assign(registers, 0);
  have_previous_ = false;
  previous_values_valid_ = false;
  same_path_trips_ = 0;
  trip_first_step_.clear();
  trip_start_stack_ = stack;
  trip_start_exited_ = exited;
  start_trip(warp, trace, loops_.back().trips_interpreted);
}

void LoopSummariser::start_trip(const WarpState& warp, const WarpTrace& trace, std::int64_t trips_before) {
  // The trip that could first jump is probed against the one before it, which records its values.
  recording_values_ = trips_before + 2 >= kFirstProbedTrips;
  probing_ = previous_values_valid_ && trips_before + 1 >= kFirstProbedTrips;
  if (recording_values_) {
    trip_start_values_ = warp.value;
    trip_start_taint_ = warp.taint;
  }
  path_.clear();
  values_.clear();
  if (probing_) {
    std::fill(poison_.begin(), poison_.end(), std::uint8_t{0});
    std::fill(written_.begin(), written_.end(), std::uint8_t{0});
    std::fill(live_in_.begin(), live_in_.end(), std::uint8_t{0});
  }
  accesses_.clear();
  mismatch_ = hopeless_ = false;
  distance_ = std::numeric_limits<std::int64_t>::max();
  period_ = 1;
  trip_first_step_.push_back(trace.steps.size());
  if (trip_first_step_.size() > 2 * static_cast<std::size_t>(kAlignmentPeriodBytes))
    trip_first_step_.erase(trip_first_step_.begin());
  trip_start_instructions_ = trace.warp_instructions;
  trip_start_flops_ = trace.flops;
  trip_start_divisions_ = trace.register_divisions;
  trip_start_constant_requests_ = trace.constant_requests;
}

bool LoopSummariser::varies(const WarpState& warp, const Source& source, std::uint32_t lanes) const {
  if (source.kind != Source::Kind::reg) return false;
  const auto reg = static_cast<std::size_t>(source.reg);
  if (poison_[reg]) return true;
  const std::int64_t* step = &step_[reg * 32];
  bool any = false;
  for_lanes(lanes & ~warp.taint[reg], [&](int lane) { any |= step[lane] != 0; });
  return any;
}

void LoopSummariser::source_step(const WarpState& warp, const Source& source, ValueType type, std::uint32_t lanes,
                                 Lanes& now, Lanes& step) {
  step.fill(0);
  if (source.kind != Source::Kind::reg) {
    now.fill(normalize(source.imm, type));
    return;
  }
  const auto reg = static_cast<std::size_t>(source.reg);
  for_lanes(lanes, [&](int lane) {
    const std::int64_t value = warp.value[reg * 32 + static_cast<std::size_t>(lane)];
    now[lane] = normalize(value, type);
    step[lane] = wrapping_difference(
        now[lane], normalize(wrapping_difference(value, step_[reg * 32 + static_cast<std::size_t>(lane)]), type));
    bound_by_range(now[lane], step[lane], type);
  });
}

void LoopSummariser::bound_by_range(std::int64_t value, std::int64_t step, ValueType type) {
  if (step == 0 || type.bits >= 64 || type.bits == 0 || type.is_pred) return;
  const I128 low = type.is_signed ? -(I128{1} << (type.bits - 1)) : I128{0};
  const I128 high = type.is_signed ? (I128{1} << (type.bits - 1)) - 1 : (I128{1} << type.bits) - 1;
  const I128 room = step > 0 ? (high - value) / step : (I128{value} - low) / -I128{step};
  distance_ = std::min(distance_, saturate(room + 1));
}

void LoopSummariser::bound_by_compare(Compare op, std::int64_t a, std::int64_t da, std::int64_t b, std::int64_t db) {
  const I128 c = I128{a} - b, dc = I128{da} - db;
  if (dc == 0) return;
  if (op == Compare::eq || op == Compare::ne) {
    if (c == 0) distance_ = std::min<std::int64_t>(distance_, 1);
    else if ((-c) % dc == 0 && -c / dc > 0) distance_ = std::min(distance_, saturate(-c / dc));
    return;
  }
  // As x < k: lt c < 0, le c < 1, gt -c < 0, ge -c < 1.
  const bool negate = op == Compare::gt || op == Compare::ge;
  const I128 x = negate ? -c : c, dx = negate ? -dc : dc;
  const I128 k = (op == Compare::le || op == Compare::ge) ? 1 : 0;
  if (x < k && dx > 0) distance_ = std::min(distance_, saturate((k - x + dx - 1) / dx));
  if (x >= k && dx < 0) distance_ = std::min(distance_, saturate((x - k) / -dx + 1));
}

void LoopSummariser::before(const WarpState& warp, std::int32_t pc, const Instr& instr, std::uint32_t active,
                            std::uint32_t mask) {
  std::size_t keep = loops_.size();
  while (keep > 0 && (pc < loops_[keep - 1].header || pc > loops_[keep - 1].last_back_edge)) --keep;
  if (keep < loops_.size()) pop_to(keep);
  if (recorder_ < 0) return;
  if (path_.size() >= kMaxTripInstructions) {
    fail();
    return;
  }
  const Visit visit{pc, active, mask};
  path_.push_back(visit);
  if (!have_previous_ || mismatch_ || hopeless_) return;
  if (path_.size() > previous_path_.size() || previous_path_[path_.size() - 1] != visit) {
    mismatch_ = true;
    return;
  }
  if (!probing_) return;
  const auto read = [&](std::int32_t reg) {
    if (reg >= 0 && !written_[static_cast<std::size_t>(reg)]) live_in_[static_cast<std::size_t>(reg)] = 1;
  };
  for (int i = 0; i < instr.src_count; ++i)
    if (instr.src[static_cast<std::size_t>(i)].kind == Source::Kind::reg)
      read(instr.src[static_cast<std::size_t>(i)].reg);
  read(instr.guard);
  read(instr.address.reg);
  read(instr.source_address.reg);

  if (instr.guard >= 0) {
    Source guard;
    guard.kind = Source::Kind::reg;
    guard.reg = instr.guard;
    if (varies(warp, guard, active)) {
      hopeless_ = true;
      return;
    }
  }
  const bool memory =
      instr.op == Op::load || instr.op == Op::store || instr.op == Op::atomic || instr.op == Op::async_copy;
  bool address_varies = false;
  if (memory && mask) {
    std::size_t step_index = warp.trace->steps.size();
    for (const Address* address : {instr.op == Op::async_copy ? &instr.source_address : nullptr, &instr.address}) {
      if (address == nullptr) continue;
      ProbedAccess access{step_index++, &instr, {}};
      if (address->reg >= 0) {
        Source base;
        base.kind = Source::Kind::reg;
        base.reg = address->reg;
        if (poisoned(base)) {
          hopeless_ = true;
          return;
        }
        Lanes now{};
        source_step(warp, base, ValueType{address->reg_bits, false, false, false}, mask, now, access.delta);
        for_lanes(mask, [&](int lane) {
          address_varies |= access.delta[lane] != 0;
          period_ = std::max(period_, alignment_period(access.delta[lane]));
        });
      }
      accesses_.push_back(access);
    }
  }

  if (makes_only_data(instr)) return;
  bool any_poison = false;
  for (int i = 0; i < instr.src_count; ++i) any_poison |= poisoned(instr.src[static_cast<std::size_t>(i)]);
  const auto src_varies = [&](int i) { return varies(warp, instr.src[static_cast<std::size_t>(i)], mask); };
  switch (instr.op) {
  case Op::mov:
    pending_poison_ =
        instr.dst_count == 1 && instr.src_count == 1 ? any_poison : any_poison || src_varies(0) || src_varies(1);
    break;
  case Op::add:
  case Op::sub:
  case Op::neg:
  case Op::cvt:
  case Op::to_generic:
  case Op::from_generic: pending_poison_ = any_poison; break;
  case Op::mul_lo:
  case Op::mul_wide:
  case Op::mad_lo:
  case Op::mad_wide: pending_poison_ = any_poison || (src_varies(0) && src_varies(1)); break;
  case Op::shl: pending_poison_ = any_poison || src_varies(1); break;
  case Op::selp: pending_poison_ = any_poison || src_varies(2); break;
  case Op::shfl: pending_poison_ = any_poison || src_varies(1) || src_varies(2); break;
  case Op::load:
  case Op::store:
  case Op::atomic:
  case Op::async_copy: pending_poison_ = address_varies; break;
  case Op::setp: {
    pending_poison_ = any_poison || (instr.src_count > 2 && src_varies(2));
    if (pending_poison_ || !mask) break;
    const std::uint32_t lanes = mask & ~warp.tainted(instr.src[0]) & ~warp.tainted(instr.src[1]);
    Lanes a{}, da{}, b{}, db{};
    source_step(warp, instr.src[0], instr.type, lanes, a, da);
    source_step(warp, instr.src[1], instr.type, lanes, b, db);
    const auto op = static_cast<Compare>(instr.sub);
    for_lanes(lanes, [&](int lane) { bound_by_compare(op, a[lane], da[lane], b[lane], db[lane]); });
    break;
  }
  default: {
    bool any_varies = false;
    for (int i = 0; i < instr.src_count; ++i) any_varies |= src_varies(i);
    pending_poison_ = any_varies;
  }
  }
}

bool LoopSummariser::makes_only_data(const Instr& instr) const {
  const bool loads =
      instr.op == Op::load || instr.op == Op::atomic || instr.op == Op::barrier || instr.op == Op::async_copy;
  return instr.op == Op::data || (loads && program_.args.contents.empty());
}

void LoopSummariser::after(const WarpState& warp, const Instr& instr, std::uint32_t mask) {
  if (!recording_values_) return;
  const bool probing = probing_ && !mismatch_ && !hopeless_;
  if (makes_only_data(instr)) { // its lanes in `mask` hold data, the others keep their values and steps
    if (!probing || !mask) return;
    for (int i = 0; i < instr.dst_count; ++i) {
      if (instr.dst[static_cast<std::size_t>(i)] < 0) continue;
      written_[static_cast<std::size_t>(instr.dst[static_cast<std::size_t>(i)])] = 1;
    }
    if (instr.dst2 >= 0) written_[static_cast<std::size_t>(instr.dst2)] = 1;
    return;
  }
  const std::pair<std::int32_t, ValueType> destinations[] = {{instr.dst[0], instr.dst_type},
                                                             {instr.dst[1], instr.dst_type},
                                                             {instr.dst[2], instr.dst_type},
                                                             {instr.dst[3], instr.dst_type},
                                                             {instr.dst2, ValueType{1, false, false, true}}};
  for (int i = 0; i < 5; ++i) {
    const std::int32_t reg = destinations[i].first;
    const ValueType type = destinations[i].second; // not a structured binding: clang 14 lambdas cannot capture one
    if (reg < 0 || (i < 4 && i >= instr.dst_count)) continue;
    const auto r = static_cast<std::size_t>(reg);
    Lanes& now = values_.emplace_back();
    std::copy_n(&warp.value[r * 32], 32, now.begin());
    if (!probing || !mask) continue;
    if (values_.size() > previous_values_.size()) {
      mismatch_ = true;
      return;
    }
    const Lanes& before = previous_values_[values_.size() - 1];
    std::int64_t* step = &step_[r * 32];
    for (int lane = 0; lane < 32; ++lane) step[lane] = wrapping_difference(now[lane], before[lane]);
    written_[r] = 1;
    const std::uint32_t known = mask & ~warp.taint[r]; // data lanes carry no value to extrapolate
    poison_[r] = pending_poison_ && known != 0;
    if (poison_[r]) continue;
    for_lanes(known, [&](int lane) {
      if (step[lane] == 0) return;
      if (type.is_pred) poison_[r] = 1;
      else bound_by_range(now[lane], step[lane], type);
    });
  }
}

bool LoopSummariser::probe_holds(const WarpState& warp) const {
  for (std::size_t r = 0; r < poison_.size(); ++r) {
    if (warp.taint[r] != trip_start_taint_[r]) return false;
    if (!live_in_[r]) continue;
    if (poison_[r]) return false;
    bool same = true;
    for_lanes(~warp.taint[r], [&](int lane) {
      same &= step_[r * 32 + static_cast<std::size_t>(lane)] == step_in_[r * 32 + static_cast<std::size_t>(lane)];
    });
    if (!same) return false;
  }
  return true;
}

void LoopSummariser::jump(WarpState& warp, WarpTrace& trace, std::int64_t trips, std::int64_t representative) {
  // The last skipped trip's accesses lie in bounds: those between lie on the same lines.
  for (const ProbedAccess& access : accesses_) {
    const TraceStep& step = trace.steps[access.step];
    std::array<std::uint64_t, 32> address = step.address;
    for_lanes(step.active_mask, [&](int lane) {
      address[static_cast<std::size_t>(lane)] +=
          static_cast<std::uint64_t>(trips) * static_cast<std::uint64_t>(access.delta[lane]);
    });
    if (!lanes_in_bounds(program_, *access.instr, step.space, step.active_mask, address, step.bytes_per_lane)) return;
  }
  const auto factor =
      static_cast<float>(static_cast<double>(representative + trips) / static_cast<double>(representative));
  for (std::size_t s = trip_first_step_[trip_first_step_.size() - static_cast<std::size_t>(representative)];
       s < trace.steps.size(); ++s)
    trace.steps[s].weight *= factor;
  const auto scale = static_cast<double>(trips);
  trace.warp_instructions += scale * (trace.warp_instructions - trip_start_instructions_);
  trace.flops += scale * (trace.flops - trip_start_flops_);
  trace.register_divisions += scale * (trace.register_divisions - trip_start_divisions_);
  trace.constant_requests += scale * (trace.constant_requests - trip_start_constant_requests_);
  for (std::size_t r = 0; r < poison_.size(); ++r) {
    if (warp.taint[r] == ~0u) continue;
    if (poison_[r]) {
      warp.set_taint(static_cast<std::int32_t>(r), ~0u, ~0u, kOriginSkippedByLoopSummary);
      continue;
    }
    for_lanes(~warp.taint[r], [&](int lane) {
      const auto slot = r * 32 + static_cast<std::size_t>(lane);
      warp.value[slot] =
          static_cast<std::int64_t>(static_cast<std::uint64_t>(warp.value[slot]) +
                                    static_cast<std::uint64_t>(trips) * static_cast<std::uint64_t>(step_[slot]));
    });
  }
  Loop& loop = loops_[static_cast<std::size_t>(recorder_)];
  loop.trips_skipped += trips;
  have_previous_ = false;
  same_path_trips_ = 0;
  trip_first_step_.clear();
}

void LoopSummariser::back_edge(WarpState& warp, std::int32_t pc, std::int32_t target, const std::vector<Frame>& stack,
                               std::uint32_t exited, WarpTrace& trace) {
  if (!enabled_) return;
  if (!loops_.empty() && loops_.back().header == target) {
    loops_.back().last_back_edge = std::max(loops_.back().last_back_edge, pc);
    loops_.back().trips_interpreted += 1;
  } else {
    loops_.push_back({target, pc, 1, 0, false});
  }
  const int index = static_cast<int>(loops_.size()) - 1;
  if (recorder_ != index) {
    if (recorder_ >= 0) return;
    const auto outermost = std::find_if(loops_.begin(), loops_.end(), [](const Loop& loop) { return !loop.failed; });
    if (outermost - loops_.begin() == index) start_recording(warp, stack, exited, trace);
    return;
  }
  if (hopeless_) {
    fail();
    return;
  }
  const bool same_path = have_previous_ && !mismatch_ && path_.size() == previous_path_.size() &&
                         stack == trip_start_stack_ && exited == trip_start_exited_;
  same_path_trips_ = same_path ? same_path_trips_ + 1 : 1;
  bool jumped = false;
  const Loop& loop = loops_[static_cast<std::size_t>(recorder_)];
  // The representative trips: whole periods, at least kFewestRepresentativeTrips.
  const std::int64_t representative = (std::max(period_, kFewestRepresentativeTrips) + period_ - 1) / period_ * period_;
  if (probing_ && same_path && same_path_trips_ >= representative &&
      loop.trips_interpreted >= representative + kWarmTrips && distance_ != std::numeric_limits<std::int64_t>::max() &&
      probe_holds(warp)) {
    const std::int64_t trips = distance_ - 1;
    if (trips >= 2 * representative) {
      jump(warp, trace, trips, representative);
      jumped = !have_previous_;
    }
  }
  // The next trip: compared with this one (unless the loop jumped past it).
  previous_path_.swap(path_);
  previous_values_.swap(values_);
  have_previous_ = !jumped;
  previous_values_valid_ = recording_values_ && !jumped;
  if (previous_values_valid_ && loop.trips_interpreted + 1 >= kFirstProbedTrips) {
    for (std::size_t slot = 0; slot < step_in_.size(); ++slot)
      step_in_[slot] = wrapping_difference(warp.value[slot], trip_start_values_[slot]);
    step_ = step_in_;
  }
  trip_start_stack_ = stack;
  trip_start_exited_ = exited;
  start_trip(warp, trace, loop.trips_interpreted);
}

} // namespace cachewise::frontend
