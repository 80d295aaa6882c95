// cachewise::model — a kernel as its warps execute it: the concrete per-lane addresses of every
// memory instruction in program order, as the kernel front end reads them out of compiled code.
// The simulator runs such a kernel through the same coalescer, banks, caches and time model as a
// KernelPattern (simulate_traced), so built-in and user kernels share one engine.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cachewise/model/pattern/pattern.hpp"
#include "cachewise/model/timing/prediction.hpp"
#include "cachewise/model/profile/device_profile.hpp"
#include "cachewise/model/simulation/simulation.hpp"

namespace cachewise {

enum class TraceSpace : std::uint8_t { global, shared, local };
enum class TraceOp : std::uint8_t { load, store, atomic };

/// One step of a warp, in program order.
/// - access: one warp-wide memory instruction. `address[lane]` is a byte address (global), a
///   byte offset into the block's shared memory (shared), or a byte offset into the thread's
///   local frame (local); lanes outside `active_mask` are ignored. An access with no active
///   lane moves nothing but keeps its place in the round-robin (as a pattern's guarded-off warp).
/// - barrier: a block-wide __syncthreads (bar.sync / barrier.sync); every warp reaches it.
/// - wait_loads: the warp's next instruction uses the result of a global load still in flight,
///   so the warp waits for every load it has outstanding (a round of loads in flight closes).
struct TraceStep {
  enum class Kind : std::uint8_t { access, barrier, wait_loads };
  Kind kind = Kind::access;
  TraceSpace space = TraceSpace::global;
  TraceOp op = TraceOp::load;
  std::uint8_t bytes_per_lane = 4; ///< 1, 2, 4, 8 or 16
  std::uint32_t active_mask = 0;
  std::int32_t instruction = -1; ///< static instruction index in the compiled kernel, for reports
  /// How many executions the step stands for: 1, or more for the steps of a loop's last
  /// interpreted trips when the front end summarised the trips after them (docs/ptx-extraction.md,
  /// "Loop summaries"); its counts are the simulated ones times this.
  float weight = 1.0F;
  std::array<std::uint64_t, 32> address{};
};

struct WarpTrace {
  std::vector<TraceStep> steps;
  double warp_instructions = 0; ///< every executed instruction of the warp, memory ones included
  double flops = 0;             ///< f32-equivalent arithmetic of the warp's active lanes (an f64 flop counts 2)
  /// Of warp_instructions, the integer divisions and remainders by a register: one instruction
  /// in PTX, a routine of the calibration's `register_division_instructions` in machine code.
  double register_divisions = 0;
  /// Requests its constant-memory reads made of the constant cache: one per distinct address
  /// a read's lanes hold (a broadcast is one); reads the machine code folds into operands none.
  double constant_requests = 0;
};

struct BlockTrace {
  std::array<std::int64_t, 3> block_index{};
  std::vector<WarpTrace> warps; ///< warp w holds the threads w*32 .. w*32+31 in x-fastest order
};

/// A block given as another block's trace moved (the front end's blocks by translation,
/// docs/ptx-extraction.md): the reference's steps, each active lane of step s (the warps' steps
/// one after another) at its address + sum over the axes a of (block index[a] -
/// reference->block_index[a]) * step_per_block[s][a].
struct TranslatedBlock {
  std::shared_ptr<const BlockTrace> reference;
  std::shared_ptr<const std::vector<std::array<std::int64_t, 3>>> step_per_block;
};

/// A global buffer the kernel reads or writes: where its bytes lie in the traced address space.
struct TraceBuffer {
  std::string name;
  std::uint64_t base_address = 0;
  std::int64_t bytes = 0;
};

/// Where the simulator puts a pattern's global arrays, per KernelPattern::arrays (0 for a
/// shared array): the first at 1 GiB, each next one after the previous rounded up to 1 MiB.
std::vector<std::int64_t> global_array_bases(const KernelPattern& pattern);

/// What the simulator needs besides the warps' steps; the front end fills it from the compiled
/// code (ptxas's resource report) and the launch.
struct TracedKernel {
  std::string name;
  Dim3 grid;
  Dim3 block;
  std::int64_t shared_bytes_per_block = 0; ///< static + dynamic
  std::int64_t registers_per_thread = 32;
  std::int64_t local_bytes_per_thread = 0; ///< stack frame (spills, local arrays)
  std::vector<TraceBuffer> buffers;
  /// A global load outside every buffer is simulated at its address (the front end's
  /// "out_of_bounds_reads": "simulate") instead of refused; then the local window lies past each
  /// buffer's guard gap (as long as the buffer, both rounded up to 1 MiB), and a load outside
  /// every buffer at or past it is refused. Stores and atomics outside every buffer are refused.
  bool simulate_out_of_bounds_reads = false;
  std::int64_t useful_bytes = 0; ///< each input read once, each output written once
  /// Extracts one block on demand; only the blocks the simulator samples are ever asked for.
  /// Throws InputError for what cannot be extracted (a data-dependent address, say).
  std::function<BlockTrace(const std::array<std::int64_t, 3>& block_index)> trace_block;
  /// Optional: the block as a translation of a reference block, where the front end has one
  /// (nullopt: trace_block gives it). The simulator compacts a reference once for every block
  /// moved from it, and checks each moved global or local access's span per block.
  std::function<std::optional<TranslatedBlock>(const std::array<std::int64_t, 3>& block_index)> translate_block;
};

/// The time-model inputs a KernelPattern declares, as simulate_traced read them off the
/// sampled blocks' traces (whole kernel: scaled from those blocks to the grid).
struct TracedFacts {
  double loads_in_flight = 0;     ///< mean global loads per round (a round ends at a wait_loads, a barrier or the end)
  double store_burst = 1;         ///< mean run of global stores not interrupted by a global load
  double flops = 0;               ///< f32-equivalent
  double warp_instructions = 0;   ///< every executed warp instruction, a division by a register as its routine
  double register_divisions = 0;  ///< integer divisions and remainders by a register (WarpTrace)
  double constant_requests = 0;   ///< constant-cache requests (WarpTrace)
  double memory_instructions = 0; ///< the global, local and shared warp instructions that issued
  double overhead_instructions = 0; ///< warp_instructions - memory_instructions - flops / 64, at least 0
  /// Global atomic lane operations on the most used address (the sample's, scaled to the grid).
  double hottest_address_atomics = 0;
};

/// Predicted counters (CUPTI names) and time of a traced kernel, with the same sampling as
/// simulate(): waves of blocks until the work budget is spent, counts scaled to the grid.
/// Local accesses go to a per-thread region of a local window placed after the buffers: byte o
/// of thread t (linear over the grid, T threads in all) lies at window + (o / 4) * 4 * T +
/// t * 4 + o % 4, the hardware's interleaving of 4-byte words across threads. Global atomics
/// count as stores (performed at L2) and their operations on one address serialise there;
/// shared ones count as shared stores whose lanes on one word serialise.
/// Throws InputError for a kernel that cannot launch on the device, a global access outside
/// every buffer (but see TracedKernel::simulate_out_of_bounds_reads), a local one outside the
/// frame, or a malformed trace (each named).
/// `facts`, when given, receives the inputs the time model used.
Prediction simulate_traced(const TracedKernel& kernel, const DeviceProfile& profile,
                           const SimulationOptions& options = {}, TracedFacts* facts = nullptr);

/// Throws InputError naming the limit when the kernel cannot launch on the device (threads,
/// shared memory, registers per block, grid y/z), or when its description is malformed.
void check_fits_device(const TracedKernel& kernel, const DeviceProfile& profile);

/// Resident blocks per SM for the kernel on the device (0 if it cannot launch).
int blocks_per_sm(const TracedKernel& kernel, const DeviceProfile& profile);

} // namespace cachewise
