// Interpreting one warp: SIMT control flow (a reconvergence stack: a divergent branch runs its
// paths one after the other and they meet at the branch's immediate post-dominator), memory
// instructions recorded as trace steps, waits for loads (a source register written by a global
// load still in flight), warp shuffles and votes.
#include <algorithm>

#include "cachewise/model.hpp"
#include "extract_warp.hpp"

namespace cachewise::frontend {
namespace {

/// A warp that runs longer than this is taken to loop forever.
constexpr std::int64_t kMaxWarpInstructions = 50'000'000;
/// A block's trace is held in memory at once, 280 bytes a step: past 2^20 steps (280 MiB), too
/// long to trace.
constexpr std::size_t kMaxBlockSteps = std::size_t{1} << 20;
/// The most steps one instruction appends: a wait for loads, then cp.async's load and store.
constexpr std::size_t kMaxStepsPerInstruction = 3;

std::string describe_origin(const Program& program, std::int32_t origin) {
  const PtxInstruction& instruction = program.function->instructions[static_cast<std::size_t>(origin)];
  const std::string& name = instruction.opcode[0];
  const bool param =
      std::find(instruction.opcode.begin(), instruction.opcode.end(), "param") != instruction.opcode.end();
  const bool constant =
      std::find(instruction.opcode.begin(), instruction.opcode.end(), "const") != instruction.opcode.end();
  if (param) return "a struct parameter's bytes the launch does not give";
  if (name == "ld" || name == "ldu" || name == "atom" || name == "bar" || name == "barrier" || constant)
    return "a value loaded from memory";
  if (name == "shfl") return "a value shuffled from an inactive lane";
  if (name == "mov" || name == "createpolicy") return "a value only the hardware knows";
  return "a floating-point value";
}

/// An integer load from global (or generic) memory: a value that declared contents could make known.
bool loads_global_integers(const Program& program, std::int32_t origin) {
  const std::vector<std::string>& opcode = program.function->instructions[static_cast<std::size_t>(origin)].opcode;
  if (opcode[0] != "ld" && opcode[0] != "ldu") return false;
  return std::none_of(opcode.begin(), opcode.end(), [](const std::string& token) {
    return token == "shared" || token.starts_with("shared::") || token == "local" || token == "param" ||
           token == "const" || token == "f16" || token == "f16x2" || token == "bf16" || token == "bf16x2" ||
           token == "f32" || token == "f64";
  });
}

std::uint32_t guard_lanes(const WarpState& warp, const Instr& instr, std::uint32_t active) {
  if (instr.guard < 0) return active;
  std::uint32_t lanes = 0;
  const std::int64_t* values = &warp.value[static_cast<std::size_t>(instr.guard) * 32];
  for_lanes(active,
            [&](int lane) { lanes |= static_cast<std::uint32_t>((values[lane] != 0) != instr.guard_negated) << lane; });
  return lanes;
}

/// A wait step: the warp waits for every load it has in flight.
void close_round(WarpState& warp, const Instr& instr, std::uint32_t active) {
  TraceStep& step = warp.trace->steps.emplace_back();
  step.kind = TraceStep::Kind::wait_loads;
  step.active_mask = active;
  step.instruction = instr.source;
  warp.max_loads_in_flight = std::max(warp.max_loads_in_flight, warp.loads_in_flight);
  warp.loads_in_flight = 0;
  for (std::int32_t reg : warp.pending_registers) warp.pending[static_cast<std::size_t>(reg)] = 0;
  warp.pending_registers.clear();
}

/// Emits a wait step when the instruction reads a register a load in flight still writes.
void wait_for_loads(WarpState& warp, const Instr& instr, std::uint32_t active) {
  if (warp.pending_registers.empty()) return;
  bool waits = instr.guard >= 0 && warp.pending[static_cast<std::size_t>(instr.guard)];
  waits = waits || (instr.address.reg >= 0 && warp.pending[static_cast<std::size_t>(instr.address.reg)]);
  for (int i = 0; i < instr.src_count && !waits; ++i)
    waits = instr.src[i].kind == Source::Kind::reg && warp.pending[static_cast<std::size_t>(instr.src[i].reg)];
  if (waits) close_round(warp, instr, active);
}

[[noreturn]] void fail_access(const Program& program, const Instr& instr, const std::string& message) {
  throw InputError(program.where(instr.source) + ": " + message + " (" + program.text(instr.source) + ")");
}

/// Resolves a generic address to its space and offset; every active lane must agree on the space.
TraceSpace resolve_generic(const Program& program, const Instr& instr, std::uint32_t mask,
                           std::array<std::uint64_t, 32>& address) {
  const auto space_of = [](std::uint64_t a) {
    const auto s = static_cast<std::int64_t>(a);
    if (s >= kSharedWindow && s < kSharedWindow + kWindowBytes) return TraceSpace::shared;
    if (s >= kLocalWindow && s < kLocalWindow + kWindowBytes) return TraceSpace::local;
    return TraceSpace::global;
  };
  const TraceSpace space = space_of(address[static_cast<std::size_t>(std::countr_zero(mask))]);
  for_lanes(mask, [&](int lane) {
    if (space_of(address[lane]) != space)
      fail_access(program, instr, "a generic access that mixes state spaces across lanes is not supported");
    if (space == TraceSpace::shared) address[lane] -= static_cast<std::uint64_t>(kSharedWindow);
    if (space == TraceSpace::local) address[lane] -= static_cast<std::uint64_t>(kLocalWindow);
  });
  return space;
}

/// An address outside every buffer, named by the nearest buffer: "byte offset -4 of buffer 'in'
/// (4096 bytes)" (a guard gap as long as each buffer follows it: buffer_base_addresses).
std::string nearest_buffer_offset(const std::vector<TraceBuffer>& buffers, std::uint64_t address) {
  const TraceBuffer* nearest = nullptr;
  std::uint64_t nearest_distance = ~std::uint64_t{0};
  for (const TraceBuffer& buffer : buffers) {
    const std::uint64_t end = buffer.base_address + static_cast<std::uint64_t>(buffer.bytes);
    const std::uint64_t distance = address < buffer.base_address ? buffer.base_address - address
                                   : address >= end              ? address - end + 1
                                                                 : 0;
    if (distance < nearest_distance) {
      nearest = &buffer;
      nearest_distance = distance;
    }
  }
  const auto offset = static_cast<std::int64_t>(address - nearest->base_address);
  return "byte offset " + std::to_string(offset) + " of buffer '" + nearest->name + "' (" +
         std::to_string(nearest->bytes) + " bytes)";
}

/// Throws InputError for a lane that is misaligned or outside the shared memory, the frame or
/// every buffer, except a global load outside every buffer under
/// LaunchArgs::simulate_out_of_bounds_reads: then returns the first such lane's "4 bytes at byte
/// offset -4 of buffer 'in' (4096 bytes)", or an empty string when every lane is inside.
std::string check_bounds(const Program& program, const Instr& instr, TraceSpace space, std::uint32_t mask,
                         const std::array<std::uint64_t, 32>& address, int bytes) {
  if (obviously_in_bounds(program, space, mask, address, bytes)) return {};
  std::string outside;
  for_lanes(mask, [&](int lane) {
    const std::uint64_t a = address[lane];
    if (a % static_cast<std::uint64_t>(bytes) != 0)
      fail_access(program, instr,
                  "misaligned " + std::to_string(bytes) + "-byte access at address " + std::to_string(a));
    if (space == TraceSpace::shared &&
        a + static_cast<std::uint64_t>(bytes) > static_cast<std::uint64_t>(program.shared_bytes))
      fail_access(program, instr,
                  "shared memory access at byte " + std::to_string(static_cast<std::int64_t>(a)) +
                      " outside the block's " + std::to_string(program.shared_bytes) + " bytes");
    if (space == TraceSpace::local &&
        a + static_cast<std::uint64_t>(bytes) > static_cast<std::uint64_t>(program.local_bytes))
      fail_access(program, instr,
                  "local memory access at byte " + std::to_string(static_cast<std::int64_t>(a)) +
                      " outside the thread's " + std::to_string(program.local_bytes) + " bytes");
    if (space != TraceSpace::global || program.args.buffers.empty() || !outside.empty()) return;
    const bool inside =
        std::any_of(program.args.buffers.begin(), program.args.buffers.end(), [&](const TraceBuffer& buffer) {
          return a >= buffer.base_address && a + static_cast<std::uint64_t>(bytes) <=
                                                 buffer.base_address + static_cast<std::uint64_t>(buffer.bytes);
        });
    if (inside) return;
    outside = std::to_string(bytes) + " bytes at " + nearest_buffer_offset(program.args.buffers, a);
    if (instr.op == Op::load && program.args.simulate_out_of_bounds_reads) return;
    const std::string hint = instr.op == Op::load ? "; to simulate such loads at their addresses instead: "
                                                    "\"out_of_bounds_reads\": \"simulate\" (--out-of-bounds-reads "
                                                    "simulate)"
                                                  : "";
    throw InputError(program.where(instr.source) + ": global access outside every buffer: " + outside + " (" +
                     program.text(instr.source) + ")" + hint);
  });
  return outside;
}

/// The declared buffer holding `address`, or nullptr.
const KnownContents* declared_buffer(const Program& program, std::uint64_t address) {
  for (const KnownContents& contents : program.args.contents) {
    if (address >= contents.base_address &&
        address - contents.base_address < static_cast<std::uint64_t>(contents.bytes))
      return &contents;
  }
  return nullptr;
}

/// Lanes of a global load that read a buffer with declared contents get the declared values in
/// its destinations; returns those lanes (the others load data). Writes to such a buffer are
/// refused: the declared values would no longer hold.
std::uint32_t load_declared_contents(WarpState& warp, const Instr& instr, TraceSpace space, std::uint32_t mask,
                                     const std::array<std::uint64_t, 32>& address) {
  const Program& program = warp.program;
  if (program.args.contents.empty() || space != TraceSpace::global) return 0;
  std::uint32_t known = 0;
  for_lanes(mask, [&](int lane) {
    const KnownContents* declared = declared_buffer(program, address[static_cast<std::size_t>(lane)]);
    if (!declared) return;
    const auto buffer = [&] { return "buffer '" + declared->buffer + "'"; }; // built only for a message
    if (instr.op != Op::load)
      fail_access(program, instr,
                  std::string(instr.op == Op::store ? "a store to " : "an atomic on ") + buffer() +
                      ", whose contents are declared, is not supported");
    if (instr.dst_count == 0) return; // cp.async's global half: the values land in shared memory, where they are data
    if (instr.type.is_float)
      fail_access(program, instr, buffer() + " has declared integer contents but is read as floating point");
    const auto element_bytes = static_cast<std::uint64_t>(declared->element_bytes);
    if (instr.element_bytes != declared->element_bytes)
      fail_access(program, instr,
                  "a " + std::to_string(instr.element_bytes) + "-byte load of " + buffer() +
                      ", whose declared elements are " + std::to_string(element_bytes) + " bytes");
    const std::uint64_t offset = address[static_cast<std::size_t>(lane)] - declared->base_address;
    if (offset % element_bytes)
      fail_access(program, instr,
                  "a load of " + buffer() + " at byte " + std::to_string(offset) + ", not at an element");
    for (int component = 0; component < instr.dst_count; ++component) {
      const auto element = static_cast<std::int64_t>(offset / element_bytes) + component;
      if ((element + 1) * declared->element_bytes > declared->bytes)
        fail_access(program, instr, "a load past the end of " + buffer());
      std::int64_t value = 0;
      try {
        value = declared->value(element);
      } catch (const InputError& error) {
        throw InputError(program.where(instr.source) + ": " + error.what());
      }
      if (instr.dst[component] >= 0) warp.at(instr.dst[component], lane) = normalize(value, instr.type);
    }
    known |= 1u << lane;
  });
  return known;
}

/// Which buffer a load that makes data read (its first active lane's), for the message should
/// that data decide an address or a branch.
void note_loaded_buffer(WarpState& warp, const Instr& instr, std::uint64_t address) {
  const std::vector<TraceBuffer>& buffers = warp.program.args.buffers;
  for (std::size_t b = 0; b < buffers.size(); ++b) {
    if (address >= buffers[b].base_address &&
        address - buffers[b].base_address < static_cast<std::uint64_t>(buffers[b].bytes)) {
      warp.loaded_buffer[static_cast<std::size_t>(instr.source)] = static_cast<std::int16_t>(b);
      return;
    }
  }
}

/// The constant cache serves a warp's read one address at a time, every lane on that address at
/// once: a read whose lanes hold k distinct addresses makes k requests (a broadcast one). A read
/// at an immediate address is an operand of the machine code's instructions: no request. Lanes
/// whose address depends on loaded data are left out (their addresses are unknown).
std::int64_t constant_requests(WarpState& warp, const Instr& instr, std::uint32_t mask) {
  if (instr.address.reg < 0) return 0;
  const std::uint32_t known = mask & ~warp.taint[static_cast<std::size_t>(instr.address.reg)];
  if (known == 0) return 0;
  const ValueType address_type{instr.address.reg_bits, false, false, false};
  std::array<std::int64_t, 32> base;
  normalize_lanes(&warp.at(instr.address.reg, 0), base.data(), address_type);
  std::array<std::int64_t, 32> addresses;
  int count = 0;
  for_lanes(known,
            [&](int lane) { addresses[static_cast<std::size_t>(count++)] = base[static_cast<std::size_t>(lane)]; });
  std::sort(addresses.begin(), addresses.begin() + count);
  return std::unique(addresses.begin(), addresses.begin() + count) - addresses.begin();
}

void execute_access(WarpState& warp, const Instr& instr, std::uint32_t mask) {
  const Program& program = warp.program;
  if (instr.address.reg >= 0 && (warp.taint[static_cast<std::size_t>(instr.address.reg)] & mask))
    throw_data_dependent(warp, instr.source, "address", warp.origin[static_cast<std::size_t>(instr.address.reg)]);
  TraceStep& step = warp.trace->steps.emplace_back(); // built in place: a step is 280 bytes
  step.kind = TraceStep::Kind::access;
  step.space = instr.space;
  step.op = instr.op == Op::store ? TraceOp::store : instr.op == Op::atomic ? TraceOp::atomic : TraceOp::load;
  step.bytes_per_lane = static_cast<std::uint8_t>(instr.vector * instr.element_bytes);
  step.active_mask = mask;
  step.instruction = instr.source;
  const ValueType address_type{instr.address.reg_bits, false, false, false};
  std::array<std::int64_t, 32> base; // every lane written below
  if (instr.address.reg >= 0) normalize_lanes(&warp.at(instr.address.reg, 0), base.data(), address_type);
  else base.fill(0);
  const auto offset = static_cast<std::uint64_t>(instr.address.offset);
  // A 32-bit address register's sum wraps at 2^32 as the hardware's does: nvcc may leave the
  // register below the array (a negative row times the pitch) and add the offset back.
  const std::uint64_t address_mask =
      instr.address.reg >= 0 && instr.address.reg_bits == 32 ? 0xffffffffULL : ~std::uint64_t{0};
  if (mask == ~0u) {
    for (int lane = 0; lane < 32; ++lane)
      step.address[static_cast<std::size_t>(lane)] = (static_cast<std::uint64_t>(base[lane]) + offset) & address_mask;
  } else {
    for_lanes(mask, [&](int lane) {
      step.address[static_cast<std::size_t>(lane)] = (static_cast<std::uint64_t>(base[lane]) + offset) & address_mask;
    });
  }
  if (instr.generic) step.space = resolve_generic(program, instr, mask, step.address);
  const std::string outside = check_bounds(program, instr, step.space, mask, step.address, step.bytes_per_lane);
  if (!outside.empty()) { // a load let through: LaunchArgs::simulate_out_of_bounds_reads
    if (warp.out_of_bounds.warp_loads++ == 0)
      warp.out_of_bounds.first = program.where(instr.source) + ": " + outside + " (" + program.text(instr.source) + ")";
  }
  const TraceSpace space = step.space;
  const std::uint32_t known = load_declared_contents(warp, instr, space, mask, step.address);
  if (instr.dst_count > 0 && space == TraceSpace::global && known != mask)
    note_loaded_buffer(warp, instr, step.address[static_cast<std::size_t>(std::countr_zero(mask))]);
  for (int i = 0; i < instr.dst_count; ++i) {
    const std::int32_t reg = instr.dst[i];
    if (reg < 0) continue;
    warp.set_taint(reg, mask, ~known, instr.source);
    if (space != TraceSpace::shared && !warp.pending[static_cast<std::size_t>(reg)]) {
      warp.pending[static_cast<std::size_t>(reg)] = 1;
      warp.pending_registers.push_back(reg);
    }
  }
  if (instr.dst_count > 0 && space != TraceSpace::shared) ++warp.loads_in_flight;
}

/// cp.async: a global load step at the source and a shared store step at the destination.
void execute_async_copy(WarpState& warp, const Instr& instr, std::uint32_t mask) {
  Instr load = instr;
  load.op = Op::load;
  load.space = TraceSpace::global;
  load.address = instr.source_address;
  load.dst_count = 0;
  Instr store = instr;
  store.op = Op::store;
  store.space = TraceSpace::shared;
  execute_access(warp, load, mask);
  execute_access(warp, store, mask);
  ++warp.loads_in_flight;
}

/// shfl.sync.{up,down,bfly,idx}.b32 d|p, a, b, c, membermask: PTX's lane arithmetic.
void execute_shuffle(WarpState& warp, const Instr& instr, std::uint32_t mask) {
  const ValueType u32{32, false, false, false};
  const std::uint32_t control_data = (warp.tainted(instr.src[1]) | warp.tainted(instr.src[2])) & mask;
  std::array<std::int64_t, 32> result{}, in_range{};
  std::uint32_t data = 0;
  const std::uint32_t source_data = warp.tainted(instr.src[0]);
  for_lanes(mask, [&](int lane) {
    const auto b = static_cast<int>(warp.read(instr.src[1], lane, u32) & 31);
    const auto c = warp.read(instr.src[2], lane, u32);
    const int clamp = static_cast<int>(c & 31), segment = static_cast<int>((c >> 8) & 31);
    const int max_lane = (lane & segment) | (clamp & ~segment), min_lane = lane & segment;
    int j = lane;
    bool valid = true;
    switch (static_cast<ShuffleMode>(instr.sub)) {
    case ShuffleMode::up:
      j = lane - b;
      valid = j >= max_lane;
      break;
    case ShuffleMode::down:
      j = lane + b;
      valid = j <= max_lane;
      break;
    case ShuffleMode::bfly:
      j = lane ^ b;
      valid = j <= max_lane;
      break;
    case ShuffleMode::idx:
      j = min_lane | (b & ~segment);
      valid = j <= max_lane;
      break;
    }
    if (!valid) j = lane;
    const bool source_active = (mask >> j) & 1;
    result[lane] = warp.read(instr.src[0], j, u32);
    in_range[lane] = valid;
    if (!source_active || ((source_data >> j) & 1) || ((control_data >> lane) & 1)) data |= 1u << lane;
  });
  std::int32_t from = instr.source;
  if (control_data)
    from = warp.origin_of(warp.tainted(instr.src[1]) & mask ? instr.src[1] : instr.src[2], instr.source);
  else if (source_data & mask) from = warp.origin_of(instr.src[0], instr.source);
  if (instr.dst[0] >= 0) {
    for_lanes(mask, [&](int lane) { warp.at(instr.dst[0], lane) = result[lane]; });
    warp.set_taint(instr.dst[0], mask, data, from);
  }
  if (instr.dst2 >= 0) {
    for_lanes(mask, [&](int lane) { warp.at(instr.dst2, lane) = in_range[lane]; });
    warp.set_taint(instr.dst2, mask, control_data, from);
  }
}

void execute_vote(WarpState& warp, const Instr& instr, std::uint32_t mask) {
  const ValueType pred{1, false, false, true};
  std::uint32_t ballot = 0;
  for_lanes(mask, [&](int lane) { ballot |= static_cast<std::uint32_t>(warp.read(instr.src[0], lane, pred)) << lane; });
  std::int64_t result = ballot;
  switch (static_cast<VoteMode>(instr.sub)) {
  case VoteMode::ballot: break;
  case VoteMode::any: result = ballot != 0; break;
  case VoteMode::all: result = ballot == mask; break;
  case VoteMode::uni: result = ballot == 0 || ballot == mask; break;
  }
  if (instr.dst[0] < 0) return;
  for_lanes(mask, [&](int lane) { warp.at(instr.dst[0], lane) = result; });
  const std::uint32_t data = warp.tainted(instr.src[0]) & mask ? ~0u : 0u;
  warp.set_taint(instr.dst[0], mask, data, warp.origin_of(instr.src[0], instr.source));
}

void initialize_specials(WarpState& warp, const std::array<std::int64_t, 3>& block_index, std::int64_t warp_index) {
  const Program& program = warp.program;
  const Dim3& block = program.args.block;
  const Dim3& grid = program.args.grid;
  const auto row = [&](Special special) {
    return &warp.at(program.special_base + static_cast<std::int32_t>(special), 0);
  };
  // Thread coordinates by counting (x fastest), not dividing per lane.
  std::int64_t x = warp_index * 32 % block.x, y = warp_index * 32 / block.x % block.y,
               z = warp_index * 32 / (block.x * block.y);
  std::int64_t *tid_x = row(Special::tid_x), *tid_y = row(Special::tid_y), *tid_z = row(Special::tid_z);
  for (int lane = 0; lane < 32; ++lane) {
    tid_x[lane] = x;
    tid_y[lane] = y;
    tid_z[lane] = z;
    if (++x == block.x) {
      x = 0;
      if (++y == block.y) {
        y = 0;
        ++z;
      }
    }
  }
  const std::pair<Special, std::int64_t> uniform[] = {{Special::ntid_x, block.x},
                                                      {Special::ntid_y, block.y},
                                                      {Special::ntid_z, block.z},
                                                      {Special::ctaid_x, block_index[0]},
                                                      {Special::ctaid_y, block_index[1]},
                                                      {Special::ctaid_z, block_index[2]},
                                                      {Special::nctaid_x, grid.x},
                                                      {Special::nctaid_y, grid.y},
                                                      {Special::nctaid_z, grid.z},
                                                      {Special::warpid, warp_index},
                                                      {Special::nwarpid, (block.count() + 31) / 32},
                                                      {Special::dynamic_smem_size, program.args.dynamic_shared_bytes},
                                                      {Special::total_smem_size, program.shared_bytes}};
  for (const auto& [special, value] : uniform) {
    std::int64_t* values = row(special);
    for (int lane = 0; lane < 32; ++lane) values[lane] = value;
  }
  std::int64_t *lane_id = row(Special::laneid), *eq = row(Special::lanemask_eq), *le = row(Special::lanemask_le),
               *lt = row(Special::lanemask_lt), *ge = row(Special::lanemask_ge), *gt = row(Special::lanemask_gt);
  for (int lane = 0; lane < 32; ++lane) {
    const std::int64_t bit = std::int64_t{1} << lane;
    lane_id[lane] = lane;
    eq[lane] = bit;
    lt[lane] = bit - 1;
    le[lane] = 2 * bit - 1;
    ge[lane] = 0xffffffff & ~(bit - 1);
    gt[lane] = 0xffffffff & ~(2 * bit - 1);
  }
}

/// Whether each of `lanes`, waiting in a frame below the top of the stack, resumes at an exit.
bool wait_to_exit(const Program& program, const std::vector<Frame>& stack, std::uint32_t lanes) {
  for (auto frame = stack.rbegin() + 1; frame != stack.rend() && lanes; ++frame) {
    const std::uint32_t waiting = frame->mask & lanes;
    if (!waiting) continue;
    if (frame->pc < static_cast<std::int32_t>(program.code.size())) {
      const Instr& next = program.code[static_cast<std::size_t>(frame->pc)];
      if (next.op != Op::exit || next.guard >= 0 || next.sub == kExitTraps) return false;
    }
    lanes &= ~waiting;
  }
  return lanes == 0;
}

std::string block_text(const std::array<std::int64_t, 3>& index) {
  return "(" + std::to_string(index[0]) + ", " + std::to_string(index[1]) + ", " + std::to_string(index[2]) + ")";
}

/// A branch: uniform paths move the frame; divergent ones push both paths, to meet at `reconverge`.
void branch(std::vector<Frame>& stack, const Instr& instr, std::uint32_t active, std::uint32_t taken) {
  Frame& frame = stack.back();
  const std::uint32_t not_taken = active & ~taken;
  if (!not_taken) {
    frame.pc = instr.target;
    return;
  }
  if (!taken) {
    ++frame.pc;
    return;
  }
  const Frame fall{frame.pc + 1, instr.reconverge, not_taken};
  const Frame jump{instr.target, instr.reconverge, taken};
  if (instr.reconverge == frame.reconverge) stack.pop_back(); // the frame below already waits there
  else frame.pc = instr.reconverge;
  stack.push_back(fall);
  stack.push_back(jump);
}

} // namespace

bool obviously_in_bounds(const Program& program, TraceSpace space, std::uint32_t mask,
                         const std::array<std::uint64_t, 32>& address, int bytes) {
  std::uint64_t low = ~std::uint64_t{0}, high = 0, bits = 0;
  const auto widen = [&](std::uint64_t a) {
    low = std::min(low, a);
    high = std::max(high, a);
    bits |= a;
  };
  if (mask == ~0u) {
    for (const std::uint64_t a : address) widen(a);
  } else {
    for_lanes(mask, [&](int lane) { widen(address[lane]); });
  }
  if (bits & static_cast<std::uint64_t>(bytes - 1)) return false;
  const std::uint64_t end = high + static_cast<std::uint64_t>(bytes);
  if (end < high) return false;
  if (space == TraceSpace::shared) return end <= static_cast<std::uint64_t>(program.shared_bytes);
  if (space == TraceSpace::local) return end <= static_cast<std::uint64_t>(program.local_bytes);
  if (program.args.buffers.empty()) return true;
  return std::any_of(program.args.buffers.begin(), program.args.buffers.end(), [&](const TraceBuffer& buffer) {
    return low >= buffer.base_address && end <= buffer.base_address + static_cast<std::uint64_t>(buffer.bytes);
  });
}

bool lanes_in_bounds(const Program& program, const Instr& instr, TraceSpace space, std::uint32_t mask,
                     const std::array<std::uint64_t, 32>& address, int bytes) {
  try {
    return check_bounds(program, instr, space, mask, address, bytes).empty();
  } catch (const InputError&) {
    return false;
  }
}

void throw_data_dependent(const WarpState& warp, std::int32_t pc, const std::string& what, std::int32_t origin) {
  if (origin == kOriginSkippedByLoopSummary) throw LoopSummaryInvalid{};
  const Program& program = warp.program;
  std::string message =
      program.where(pc) + ": " + what + " depends on " + describe_origin(program, origin) + " (" + program.text(origin);
  if (program.where(origin) != program.where(pc)) message += " at " + program.where(origin);
  message +=
      "): data-dependent " + std::string(what == "address" ? "accesses are" : "control flow is") + " not supported";
  if (loads_global_integers(program, origin)) {
    const std::int16_t buffer = warp.loaded_buffer[static_cast<std::size_t>(origin)];
    const std::string name = buffer >= 0 ? program.args.buffers[static_cast<std::size_t>(buffer)].name : "";
    message += name.empty() ? " unless the loaded buffer's contents are declared (\"contents\", --contents NAME=EXPR)"
                            : " unless what buffer '" + name + "' holds is declared (\"contents\", --contents " + name +
                                  "=EXPR)";
  } else if (what != "address") { // floating-point data (a clamp, a threshold): skipping may do
    message +=
        "; to have those lanes skip it instead (a branch not taken): \"branches_on_loaded_data\": "
        "\"not-taken\" (--branches-on-loaded-data not-taken)";
  }
  throw InputError(message);
}

std::int64_t run_warp(WarpState& warp, const std::array<std::int64_t, 3>& block_index, std::int64_t warp_index,
                      WarpTrace& trace, std::size_t steps_before, std::size_t expected_steps) {
  const Program& program = warp.program;
  // The steps vector never grows past the block's budget, and is never copied from more than
  // half of it (past half, it takes the whole budget, whose pages count only once written): a
  // block refused at the limit holds the limit's 280 MiB at most.
  const std::size_t budget = kMaxBlockSteps - std::min(steps_before, kMaxBlockSteps) + kMaxStepsPerInstruction;
  const auto room = [budget](std::size_t wanted) { return 2 * wanted > budget ? budget : wanted; };
  // Room for the expected steps and the last instruction's: the check below wants that much
  // spare before each instruction, so a warp that ends as expected never grows its vector.
  trace.steps.reserve(room(expected_steps + kMaxStepsPerInstruction));
  warp.start(trace, static_cast<std::int32_t>(warp_index));
  const std::int64_t threads = program.args.block.count() - warp_index * 32;
  const std::uint32_t present = threads >= 32 ? ~0u : (1u << threads) - 1;
  initialize_specials(warp, block_index, warp_index);
  std::vector<Frame> stack{{0, kReconvergeAtExit, present}};
  std::uint32_t exited = 0;
  const auto end = static_cast<std::int32_t>(program.code.size());
  std::int64_t executed = 0;
  while (!stack.empty()) {
    Frame& frame = stack.back();
    const std::uint32_t active = frame.mask & ~exited;
    if (!active || frame.pc == frame.reconverge || frame.pc >= end) {
      if (active && frame.pc >= end && frame.pc != frame.reconverge) exited |= active; // fell off the end
      stack.pop_back();
      continue;
    }
    const Instr& instr = program.code[static_cast<std::size_t>(frame.pc)];
    if (++executed > kMaxWarpInstructions)
      throw InputError(program.where(instr.source) + ": a warp ran more than " + std::to_string(kMaxWarpInstructions) +
                       " instructions (a loop that does not end?)");
    if (trace.steps.size() + steps_before > kMaxBlockSteps)
      throw TraceLimitError(
          program.where(instr.source) + ": a block makes more than " + std::to_string(kMaxBlockSteps) +
          " warp memory accesses: too long to trace (a block's trace is held in memory, 280 MiB at this limit)");
    if (trace.steps.size() + kMaxStepsPerInstruction > trace.steps.capacity())
      trace.steps.reserve(room(std::max<std::size_t>(64, 2 * trace.steps.capacity())));
    wait_for_loads(warp, instr, active);
    std::uint32_t mask = guard_lanes(warp, instr, active);
    const std::uint32_t guard_data = instr.guard >= 0 ? warp.taint[static_cast<std::size_t>(instr.guard)] & active : 0;
    const bool decides = instr.op == Op::branch || instr.op == Op::exit || instr.op == Op::load ||
                         instr.op == Op::store || instr.op == Op::atomic || instr.op == Op::barrier ||
                         instr.op == Op::shfl || instr.op == Op::vote || instr.op == Op::async_copy;
    if (guard_data && decides) {
      const std::int32_t origin = warp.origin[static_cast<std::size_t>(instr.guard)];
      const char* what = instr.op == Op::branch ? "branch" : "predicate";
      if (!program.args.skip_guards_on_loaded_data || origin == kOriginSkippedByLoopSummary)
        throw_data_dependent(warp, instr.source, what, origin);
      mask &= ~guard_data; // those lanes skip it: a branch not taken
      if (warp.skipped_on_loaded_data.warp_instructions++ == 0)
        warp.skipped_on_loaded_data.first = program.where(instr.source) + ": " + what + " on a value loaded at " +
                                            program.where(origin) + " (" + program.text(instr.source) + ")";
    }
    if (warp.loops.engaged()) warp.loops.before(warp, frame.pc, instr, active, mask);
    if (instr.issues) trace.warp_instructions += 1;
    if (instr.reads_constant && mask)
      trace.constant_requests += static_cast<double>(constant_requests(warp, instr, mask));
    if (instr.divides_by_register) trace.register_divisions += 1;
    switch (instr.op) {
    case Op::branch: {
      const std::int32_t pc = frame.pc;
      branch(stack, instr, active, mask);
      if (instr.target <= pc && mask == active) warp.loops.back_edge(warp, pc, instr.target, stack, exited, trace);
      continue;
    }
    case Op::exit:
      if (instr.sub == kExitTraps && mask)
        throw InputError(program.where(instr.source) + ": the kernel traps in block " + block_text(block_index) +
                         ", warp " + std::to_string(warp_index) + " (" + program.text(instr.source) + ")");
      exited |= mask;
      break;
    case Op::barrier: {
      // Lanes missing from a barrier every lane must reach together: a divergent barrier, unless
      // they wait at an exit (`if (i >= n) return;` before the barrier).
      const std::uint32_t live = present & ~exited;
      if (instr.sub == kBarrierAligned && mask && mask != live &&
          !(mask == active && wait_to_exit(program, stack, live & ~mask)))
        throw InputError(program.where(instr.source) + ": divergent barrier: " + std::to_string(std::popcount(mask)) +
                         " of the " + std::to_string(std::popcount(live)) + " threads of warp " +
                         std::to_string(warp_index) + " in block " + block_text(block_index) +
                         " reach it, the others do not (" + program.text(instr.source) + ")");
      TraceStep& step = trace.steps.emplace_back();
      step.kind = TraceStep::Kind::barrier;
      step.active_mask = mask;
      step.instruction = instr.source;
      if (instr.dst_count) warp.set_taint(instr.dst[0], mask, ~0u, instr.source);
      break;
    }
    case Op::load:
    case Op::store:
    case Op::atomic:
      if (mask) execute_access(warp, instr, mask);
      break;
    case Op::shfl: execute_shuffle(warp, instr, mask); break;
    case Op::async_copy:
      if (mask) execute_async_copy(warp, instr, mask);
      break;
    case Op::async_wait:
      if (warp.loads_in_flight > 0) close_round(warp, instr, active);
      break;
    case Op::vote: execute_vote(warp, instr, mask); break;
    default:
      execute_alu(warp, instr, mask, active);
      if (guard_data)
        for (int i = 0; i < instr.dst_count; ++i)
          warp.set_taint(instr.dst[i], guard_data, ~0u, warp.origin[static_cast<std::size_t>(instr.guard)]);
      trace.flops += instr.flops_per_lane * std::popcount(mask);
    }
    if (warp.loops.recording()) warp.loops.after(warp, instr, mask);
    ++stack.back().pc;
  }
  warp.loops.end_warp();
  return std::max(warp.max_loads_in_flight, warp.loads_in_flight);
}

} // namespace cachewise::frontend
