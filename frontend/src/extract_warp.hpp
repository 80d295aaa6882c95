// Internal to the extractor: one warp's registers as 32-lane vectors of int64 (struct of
// arrays), which lanes of each register hold "data" (a value the extractor does not know: loaded
// from memory, floating point), and which instruction made that data, for messages.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "extract_loops.hpp"
#include "extract_program.hpp"

namespace cachewise::frontend {

/// `value` reduced to `type`'s width: sign-extended for signed types, zero-extended otherwise.
inline std::int64_t normalize(std::int64_t value, ValueType type) {
  if (type.is_pred) return value != 0;
  if (type.bits >= 64) return value;
  if (type.bits == 0) return 0; // a malformed split of a narrow register
  const int shift = 64 - type.bits;
  const auto bits = static_cast<std::uint64_t>(value) << shift;
  return type.is_signed ? static_cast<std::int64_t>(bits) >> shift : static_cast<std::int64_t>(bits >> shift);
}

/// normalize() over 32 lanes, the type's case chosen once (so the loop vectorizes).
inline void normalize_lanes(const std::int64_t* in, std::int64_t* out, ValueType type) {
  if (type.is_pred) {
    for (int lane = 0; lane < 32; ++lane) out[lane] = in[lane] != 0;
  } else if (type.bits >= 64) {
    for (int lane = 0; lane < 32; ++lane) out[lane] = in[lane];
  } else if (type.bits == 0) {
    for (int lane = 0; lane < 32; ++lane) out[lane] = 0;
  } else if (type.is_signed) { // ((x & mask) ^ sign) - sign: sign extension in operations SSE2 has for 64-bit lanes
    const std::uint64_t mask = (std::uint64_t{1} << type.bits) - 1, sign = std::uint64_t{1} << (type.bits - 1);
    for (int lane = 0; lane < 32; ++lane)
      out[lane] = static_cast<std::int64_t>(((static_cast<std::uint64_t>(in[lane]) & mask) ^ sign) - sign);
  } else {
    const std::uint64_t mask = (std::uint64_t{1} << type.bits) - 1;
    for (int lane = 0; lane < 32; ++lane)
      out[lane] = static_cast<std::int64_t>(static_cast<std::uint64_t>(in[lane]) & mask);
  }
}

template <typename F>
inline void for_lanes(std::uint32_t mask, F&& f) {
  while (mask) {
    const int lane = std::countr_zero(mask);
    mask &= mask - 1;
    f(lane);
  }
}

class WarpState {
public:
  explicit WarpState(const Program& lowered)
      : program(lowered),
        value(static_cast<std::size_t>(lowered.register_count) * 32, 0),
        taint(static_cast<std::size_t>(lowered.register_count), 0),
        origin(static_cast<std::size_t>(lowered.register_count), -1),
        pending(static_cast<std::size_t>(lowered.register_count), 0),
        loaded_buffer(lowered.function->instructions.size(), -1),
        loops(lowered) {}

  /// Clears the registers for the next warp of a block (one state serves them all, so its
  /// memory stays in cache).
  void start(WarpTrace& output, std::int32_t index) {
    trace = &output;
    warp_index = index;
    std::fill(value.begin(), value.end(), 0);
    std::fill(taint.begin(), taint.end(), 0u);
    std::fill(origin.begin(), origin.end(), -1);
    std::fill(pending.begin(), pending.end(), std::uint8_t{0});
    pending_registers.clear();
    loads_in_flight = 0;
    max_loads_in_flight = 0;
    loops.start_warp();
  }

  std::int64_t& at(std::int32_t reg, int lane) {
    return value[static_cast<std::size_t>(reg) * 32 + static_cast<std::size_t>(lane)];
  }

  /// The source's value in `lane`, reduced to `type`.
  std::int64_t read(const Source& source, int lane, ValueType type) const {
    std::int64_t raw = source.imm;
    if (source.kind == Source::Kind::reg)
      raw = value[static_cast<std::size_t>(source.reg) * 32 + static_cast<std::size_t>(lane)];
    const std::int64_t v = normalize(raw, type);
    return source.negated ? !v : v;
  }
  /// The lanes in which the source holds data.
  std::uint32_t tainted(const Source& source) const {
    if (source.kind == Source::Kind::data) return ~0u;
    return source.kind == Source::Kind::reg ? taint[static_cast<std::size_t>(source.reg)] : 0u;
  }
  std::int32_t origin_of(const Source& source, std::int32_t pc) const {
    return source.kind == Source::Kind::reg ? origin[static_cast<std::size_t>(source.reg)] : pc;
  }
  /// Lanes `mask` of `reg` now hold data in `data_lanes` (made by `from`), known values elsewhere.
  void set_taint(std::int32_t reg, std::uint32_t mask, std::uint32_t data_lanes, std::int32_t from) {
    if (reg < 0) return;
    auto& t = taint[static_cast<std::size_t>(reg)];
    t = (t & ~mask) | (data_lanes & mask);
    if (data_lanes & mask) origin[static_cast<std::size_t>(reg)] = from;
  }
  /// Union of the lanes in which any source holds data, and the instruction that made the first.
  std::uint32_t sources_taint(const Instr& instr, std::int32_t& from) const {
    std::uint32_t lanes = 0;
    for (int i = 0; i < instr.src_count; ++i) {
      const std::uint32_t t = tainted(instr.src[static_cast<std::size_t>(i)]);
      if (t && !lanes) from = origin_of(instr.src[static_cast<std::size_t>(i)], instr.source);
      lanes |= t;
    }
    return lanes;
  }

  const Program& program;
  WarpTrace* trace = nullptr;
  std::vector<std::int64_t> value; ///< register * 32 + lane
  std::vector<std::uint32_t> taint;
  std::vector<std::int32_t> origin;
  std::vector<std::uint8_t> pending; ///< written by a global / local load not yet waited for
  std::vector<std::int32_t> pending_registers;
  /// Per PTX instruction: the index in LaunchArgs::buffers of the buffer its last global load
  /// read (-1: none known), to name it when its data decides an address or a branch.
  std::vector<std::int16_t> loaded_buffer;
  std::int64_t loads_in_flight = 0;
  std::int64_t max_loads_in_flight = 0;
  /// The block's loads outside every buffer so far (LaunchArgs::simulate_out_of_bounds_reads).
  OutOfBoundsLoads out_of_bounds;
  /// The block's instructions skipped on loaded data so far (LaunchArgs::skip_guards_on_loaded_data).
  SkippedOnLoadedData skipped_on_loaded_data;
  std::int32_t warp_index = 0;
  LoopSummariser loops;
};

/// True when every active lane is aligned and the lanes' span lies inside one valid range (the
/// common case, checked without looking at lanes one by one).
bool obviously_in_bounds(const Program& program, TraceSpace space, std::uint32_t mask,
                         const std::array<std::uint64_t, 32>& address, int bytes);

/// Whether every lane in `mask` of an access at `address` is aligned and inside the shared memory,
/// the frame or a buffer (what check_bounds accepts without letting a load outside through).
bool lanes_in_bounds(const Program& program, const Instr& instr, TraceSpace space, std::uint32_t mask,
                     const std::array<std::uint64_t, 32>& address, int bytes);

/// "spmv.cu:47: address depends on a value loaded from memory (ld.global.u32 %r2, [%rd24]): ..."
[[noreturn]] void throw_data_dependent(const WarpState& warp, std::int32_t pc, const std::string& what,
                                       std::int32_t origin);

} // namespace cachewise::frontend
