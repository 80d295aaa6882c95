// Internal to the extractor: an entry lowered once into compact instructions (operations as
// enums, registers as indices, parameters and symbols as immediates, branch targets and
// reconvergence points as instruction indices), so that interpreting a warp matches no strings.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cachewise/frontend/extract.hpp"

namespace cachewise::frontend {

enum class Op : std::uint8_t {
  mov,
  add,
  sub,
  mul_lo,
  mul_hi,
  mul_wide,
  mad_lo,
  mad_hi,
  mad_wide,
  shl,
  shr,
  bit_and,
  bit_or,
  bit_xor,
  bit_not,
  cnot,
  neg,
  abs,
  min,
  max,
  div,
  rem,
  popc,
  clz,
  brev,
  bfe,
  bfi,
  lop3,
  prmt,
  mul24,
  mad24,
  sad,
  selp,
  setp,
  cvt,
  to_generic,
  from_generic,
  data,
  load,
  store,
  atomic,
  barrier,
  branch,
  exit,
  shfl,
  vote,
  activemask,
  nop,
  async_copy,
  async_wait, ///< cp.async (a global load into shared memory) and cp.async.wait_group / wait_all
};

enum class Compare : std::uint8_t { eq, ne, lt, le, gt, ge };
enum class Combine : std::uint8_t { none, and_, or_, xor_ };
enum class ShuffleMode : std::uint8_t { up, down, bfly, idx };
enum class VoteMode : std::uint8_t { ballot, any, all, uni };

struct ValueType {
  std::uint8_t bits = 32;
  bool is_signed = false;
  bool is_float = false;
  bool is_pred = false;
};

struct Source {
  enum class Kind : std::uint8_t { reg, imm, data };
  Kind kind = Kind::imm;
  bool negated = false; ///< !%p
  std::int32_t reg = -1;
  std::int64_t imm = 0;
};

/// A memory operand: [reg + offset] or [offset].
struct Address {
  std::int32_t reg = -1;
  std::uint8_t reg_bits = 64; ///< a 32-bit address register holds an unsigned 32-bit address
  std::int64_t offset = 0;
};

struct Instr {
  Op op = Op::nop;
  ValueType type;     ///< the operation's (source) type
  ValueType dst_type; ///< the destination's type (differs for cvt, mul.wide, setp)
  std::uint8_t sub =
      0; ///< Compare / ShuffleMode / VoteMode / generic window (0 shared, 1 local) / kExitTraps / kBarrierAligned
  Combine combine = Combine::none;
  std::int32_t guard = -1;
  bool guard_negated = false;
  std::uint8_t dst_count = 0;
  std::uint8_t src_count = 0;
  std::array<std::int32_t, 4> dst{-1, -1, -1, -1}; ///< -1 = sink
  std::int32_t dst2 = -1;                          ///< setp's second predicate, shfl's in-range predicate
  std::array<Source, 5> src{};
  // memory operations
  TraceSpace space = TraceSpace::global;
  bool generic = false;        ///< no state space: shared / local / global decided per lane by window
  bool pending = false;        ///< the destination arrives late (global / local load, atomic with result)
  bool read_only = false;      ///< ld.global.nc / ldu: no store of the kernel aliases it
  bool reads_constant = false; ///< ld.const: opaque values, a constant-cache request per distinct address
  std::uint8_t vector = 1;
  std::uint8_t element_bytes = 4;
  Address address;
  Address source_address; ///< cp.async's global source (`address` is its shared destination)
  // control
  std::int32_t target = -1;     ///< branch target
  std::int32_t reconverge = -1; ///< where a divergent branch's paths meet (its immediate post-dominator)
  double flops_per_lane = 0;
  bool issues = true; ///< false where the machine code has no instruction (ld.param: constant operands; cvta.to.global)
  bool divides_by_register = false; ///< integer div / rem whose divisor is a register: a routine in the machine code
  std::int32_t source = -1;         ///< index of the PtxInstruction, for messages
};

/// Instr::sub of an exit that is a `trap`, and of a barrier every thread of a warp must reach
/// together (bar.sync, barrier.sync.aligned).
inline constexpr std::uint8_t kExitTraps = 1;
inline constexpr std::uint8_t kBarrierAligned = 1;

inline constexpr std::int32_t kReconvergeAtExit = std::numeric_limits<std::int32_t>::max();

/// Generic addresses of the shared and local windows (cvta): far above the 1 GiB-aligned buffers.
inline constexpr std::int64_t kSharedWindow = std::int64_t{0x7000} << 32;
inline constexpr std::int64_t kLocalWindow = std::int64_t{0x7100} << 32;
inline constexpr std::int64_t kWindowBytes = std::int64_t{1} << 32;

/// Special registers, laid out after the function's own registers.
enum class Special : std::uint8_t {
  tid_x,
  tid_y,
  tid_z,
  ntid_x,
  ntid_y,
  ntid_z,
  ctaid_x,
  ctaid_y,
  ctaid_z,
  nctaid_x,
  nctaid_y,
  nctaid_z,
  laneid,
  warpid,
  nwarpid,
  lanemask_eq,
  lanemask_le,
  lanemask_lt,
  lanemask_ge,
  lanemask_gt,
  dynamic_smem_size,
  total_smem_size,
  count,
};

/// What loop summaries did at one loop (by its first instruction), over the warps traced.
struct LoopTally {
  std::int64_t runs = 0; ///< runs of the loop (a warp's, each time it entered) that jumped
  std::int64_t trips_interpreted = 0;
  std::int64_t trips_skipped = 0;
};

class BlockTranslation;

struct Program {
  PtxModule module;                      ///< the entry alone, with the module's variables and files
  const PtxFunction* function = nullptr; ///< module.functions[0]
  LaunchArgs args;
  std::vector<ParamInfo> params;
  std::vector<Instr> code;
  std::int32_t register_count = 0; ///< the function's registers + specials
  std::int32_t special_base = 0;
  std::int64_t static_shared_bytes = 0;
  std::int64_t shared_bytes = 0; ///< static + dynamic: the valid shared offsets
  std::int64_t local_bytes = 0;
  mutable std::atomic<std::int64_t> max_loads_in_flight{0};
  mutable std::atomic<bool> traced_any{false};
  /// Steps of the first warp of the last block traced: what the next block's first warp
  /// reserves (a step is 280 bytes; growing the vector copied them, a tenth of extraction).
  mutable std::atomic<std::size_t> first_warp_steps{0};
  mutable std::mutex loop_tally_mutex;
  mutable std::map<std::int32_t, LoopTally> loop_tally; ///< by the loop's first instruction (index in code)
  /// Guards the two per-block tallies of what an opt-in let through, below.
  mutable std::mutex let_through_mutex;
  /// Per traced block (by linear index): its loads outside every buffer (LaunchArgs::simulate_out_of_bounds_reads).
  mutable std::map<std::int64_t, OutOfBoundsLoads> out_of_bounds_loads;
  /// Per traced block (by linear index): its instructions skipped on loaded data
  /// (LaunchArgs::skip_guards_on_loaded_data).
  mutable std::map<std::int64_t, SkippedOnLoadedData> skipped_on_loaded_data;
  /// Blocks may be translated (LaunchArgs::translate_blocks, and nothing decided on the block index).
  bool translatable = false;
  mutable std::atomic<std::int64_t> blocks_interpreted{0};
  mutable std::atomic<std::int64_t> blocks_translated{0};
  /// Guards the two below.
  mutable std::mutex translation_mutex;
  /// Prepared once enough blocks were interpreted, until Extractor::forget_translation.
  mutable std::shared_ptr<const BlockTranslation> translation;
  /// A preparation found the translation wrong: it is not tried again.
  mutable bool translation_refused = false;

  /// "transpose.cu:17" of instruction `pc`.
  std::string where(std::int32_t pc) const;
  /// The instruction's text as written ("ld.global.u32 %r7, [%rd3]").
  const std::string& text(std::int32_t pc) const;
};

/// Lowers `function` (an entry of `module`) for a launch; throws InputError naming the
/// instruction and its source line for what it does not support.
void lower_program(Program& program);

/// Basic blocks: they start at pc 0, at branch targets and after branches and exits.
struct Blocks {
  std::vector<std::int32_t> start; ///< first instruction of each block
  std::vector<std::int32_t> of;    ///< block of each instruction
};
Blocks split_blocks(const std::vector<Instr>& code);

/// Reorders each basic block as ptxas schedules it for loads: loads that the block's
/// dependences allow (registers, aliasing memory, barriers) move up with the integer work that
/// computes their addresses, so that several are in flight before the first use.
void hoist_loads(std::vector<Instr>& code);

/// For each instruction index: where the paths of a divergent branch there reconverge (the first
/// instruction of its block's immediate post-dominator, kReconvergeAtExit when that is the exit).
std::vector<std::int32_t> reconvergence_points(const std::vector<Instr>& code);

class WarpState;
/// Runs one warp of a block; fills `trace` and returns the most loads it had in flight.
/// `steps_before`: the steps the block's earlier warps made (a block's trace has a size limit);
/// `expected_steps`: what `trace` reserves at the start (an earlier warp's count).
std::int64_t run_warp(WarpState& state, const std::array<std::int64_t, 3>& block_index, std::int64_t warp,
                      WarpTrace& trace, std::size_t steps_before, std::size_t expected_steps);
/// Integer and data operations (everything but memory and control) on the lanes in `mask`.
void execute_alu(WarpState& warp, const Instr& instr, std::uint32_t mask, std::uint32_t active);

} // namespace cachewise::frontend
