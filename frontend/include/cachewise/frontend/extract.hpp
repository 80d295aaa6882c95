// cachewise::frontend — the extractor: runs one .entry of a PTX module warp by warp on integer
// values (floats and loaded values are opaque "data") and records every memory instruction's
// per-lane addresses, the barriers and the waits for loads, in program order, as BlockTraces.
// Divergent branches split the warp; the paths reconverge at the branch's immediate
// post-dominator. A value loaded from memory that decides an address or a branch is a user error,
// unless it was loaded from a buffer whose contents the launch declares (KnownContents).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cachewise/frontend/ptx.hpp"
#include "cachewise/model/simulation/kernel_trace.hpp"
#include "cachewise/model/timing/summarised_loop.hpp"

namespace cachewise::frontend {

struct ParamInfo {
  std::string name;
  int bytes = 0;
};

/// A global buffer whose contents are declared: a load from it yields known integer values, so
/// they may decide addresses and branches (index arrays).
struct KnownContents {
  std::string buffer;
  std::uint64_t base_address = 0;
  std::int64_t bytes = 0;
  int element_bytes = 4;
  /// Element i's value; throws InputError naming the buffer and the element.
  std::function<std::int64_t(std::int64_t element)> value;
};

struct LaunchArgs {
  Dim3 grid;
  Dim3 block;
  std::int64_t dynamic_shared_bytes = 0;
  std::vector<std::uint64_t> params; ///< one value per .param, in order; pointers = the buffer's base address
  /// Optional, for parameters wider than 8 bytes (structs by value): param_bytes[i], when not
  /// empty, holds all of parameter i's bytes and replaces params[i].
  std::vector<std::vector<std::uint8_t>> param_bytes;
  /// Optional: when given, a global access outside every buffer is an InputError naming the instruction.
  std::vector<TraceBuffer> buffers;
  /// A global load outside every buffer is traced at its address (its value is data) and counted
  /// in ExtractedFacts::out_of_bounds_loads instead of refused; stores and atomics stay errors.
  bool simulate_out_of_bounds_reads = false;
  /// An instruction guarded by a predicate computed from loaded data (a branch, an exit, a
  /// predicated access) is skipped by those lanes, a branch not taken, and counted in
  /// ExtractedFacts::skipped_on_loaded_data, instead of refused (the model does not know data).
  bool skip_guards_on_loaded_data = false;
  /// Optional: buffers with declared contents (loads of them must read whole integer elements).
  std::vector<KnownContents> contents;
  /// Loops whose trips are affine jump ahead (docs/ptx-extraction.md, "Loop summaries"); false
  /// interprets every trip.
  bool summarise_loops = true;
  /// Blocks are derived from a reference block by their offset in the grid when nothing the
  /// kernel decides depends on the block index (docs/ptx-extraction.md, "Blocks by
  /// translation"); false interprets every block.
  bool translate_blocks = true;
};

/// A loop the extractor jumped ahead, over the warps traced so far.
using cachewise::SummarisedLoop;

/// The global loads outside every buffer that LaunchArgs::simulate_out_of_bounds_reads let
/// through, over the blocks traced (each block counted once).
struct OutOfBoundsLoads {
  std::int64_t warp_loads = 0; ///< warp-level loads with a lane outside every buffer
  /// The first (lowest linear block traced, then program order): "bounds.cu:4: 4 bytes at byte
  /// offset -4 of buffer 'in' (4096 bytes) (ld.global.f32 %f1, [%rd4])"; empty when none.
  std::string first;
};

/// The warp instructions whose guard came from loaded data, skipped by those lanes
/// (LaunchArgs::skip_guards_on_loaded_data), over the blocks traced (each block counted once).
struct SkippedOnLoadedData {
  std::int64_t warp_instructions = 0;
  /// The first (lowest linear block traced, then program order): "srad_kernel.cu:145: branch
  /// on a value loaded at srad_kernel.cu:122 (@%p3 bra $L__BB0_12)"; empty when none.
  std::string first;
};

struct ExtractedFacts {
  std::int64_t static_shared_bytes = 0;    ///< .shared declarations the entry uses
  std::int64_t local_bytes_per_thread = 0; ///< .local declarations (stack frame)
  std::int64_t max_loads_in_flight = 0; ///< the most global loads a warp had outstanding before a wait (traced blocks)
  /// The blocks traced so far, interpreted (not counting a translation's preparation) and
  /// derived from a reference block.
  std::int64_t interpreted_blocks = 0;
  std::int64_t translated_blocks = 0;
  std::vector<SummarisedLoop> summarised_loops; ///< by source location
  OutOfBoundsLoads out_of_bounds_loads;
  SkippedOnLoadedData skipped_on_loaded_data;
};

struct Program; // the entry lowered to compact instructions (src/extract_program.hpp)

class Extractor {
public:
  /// Keeps what it needs of `module` (the entry, its variables, the file names): the module
  /// need not outlive the extractor. Throws InputError for an unknown entry, a parameter count that does not match, an
  /// unsupported instruction (named, with its source line) or an impossible launch.
  Extractor(const PtxModule& module, std::string_view entry_name, LaunchArgs args);
  ~Extractor();
  Extractor(Extractor&&) noexcept;
  Extractor& operator=(Extractor&&) noexcept;

  const std::vector<ParamInfo>& params() const;
  /// Thread-safe. Throws InputError for what cannot be extracted (a data-dependent address, a
  /// branch on loaded data, an access outside every buffer, a kernel that does not terminate).
  BlockTrace trace_block(const std::array<std::int64_t, 3>& block_index) const;
  /// The block as a translation of a reference block, as the simulator takes it
  /// (TracedKernel::translate_block), when the extractor has prepared a translation whose moved
  /// accesses move all their lanes alike and stay inside their buffers over the grid; nullopt
  /// otherwise (trace_block then gives the block). Counted in facts() as a traced block. Thread-safe.
  std::optional<TranslatedBlock> translated_block(const std::array<std::int64_t, 3>& block_index) const;
  /// Frees the blocks' translation (its reference block and steps) until a block is traced
  /// again: for a caller done with a simulation, so that many extractors do not each hold one.
  void forget_translation() const;
  /// Static facts, plus max_loads_in_flight over every block traced so far.
  ExtractedFacts facts() const;

private:
  std::unique_ptr<Program> program_;
};

} // namespace cachewise::frontend
