// Internal to the extractor: blocks by translation. When nothing the kernel decides depends on
// the block index (%ctaid reaches only additions, multiplications by values free of it, shifts,
// conversions, selections and addresses), every block runs the same instructions on the same
// lanes, and each lane's address is the same function of the block index: a reference block's
// address plus the block's offset from it times the address's step per block along each axis.
// The steps are measured on the reference's neighbours, and the grid's corners, interpreted,
// must equal their translations. docs/ptx-extraction.md, "Blocks by translation", gives the rules.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "extract_program.hpp"

namespace cachewise::frontend {

/// A block interpreted warp by warp, with what it adds to the extractor's facts.
struct InterpretedBlock {
  BlockTrace trace;
  std::int64_t max_loads_in_flight = 0;
  std::map<std::int32_t, LoopTally> loop_tally; ///< by the loop's first instruction
  OutOfBoundsLoads out_of_bounds_loads;
  SkippedOnLoadedData skipped_on_loaded_data;
};

/// Interprets a block of the grid. Its facts are returned, not recorded in the program.
InterpretedBlock interpret_block(const Program& program, const std::array<std::int64_t, 3>& block_index);

/// Empty when no decision and no value the translation cannot carry depends on the block index;
/// otherwise the first instruction that makes one: "gemm.cu:31: a comparison depends on the
/// block index (setp.lt.s32 %p1, %r4, %r9)".
std::string block_index_dependence(const Program& program);

/// Blocks the preparation interprets for a grid: the reference, a neighbour along each axis
/// longer than one block, and the corners.
std::int64_t translation_preparation_blocks(const Dim3& grid);

class BlockTranslation {
public:
  /// Interprets the reference block (the grid's middle), its neighbours and the grid's corners;
  /// nullptr when the neighbours' traces differ from the reference's in anything but addresses,
  /// a corner's trace or facts differ from its translation, or one of them cannot be traced.
  static std::unique_ptr<const BlockTranslation> prepare(const Program& program);

  /// The block's trace: the reference's, each active lane's address moved. nullopt when a moved
  /// access is not plainly inside the shared memory, the frame or one buffer: interpreted, the
  /// block then reports (or lets through) that access as usual.
  std::optional<BlockTrace> translate(const Program& program, const std::array<std::int64_t, 3>& block_index) const;

  /// The reference block's facts (its trace is shared_reference()), which every translated
  /// block repeats.
  const InterpretedBlock& reference() const { return reference_; }
  const std::shared_ptr<const BlockTrace>& shared_reference() const { return shared_reference_; }
  /// Each step's address step per block, as the simulator takes a translation (TranslatedBlock
  /// with shared_reference()). Null unless every moved access moves its lanes alike by whole
  /// accesses, and each moved global access lies in one buffer at every corner (then, a buffer
  /// being an interval, in every block).
  const std::shared_ptr<const std::vector<std::array<std::int64_t, 3>>>& uniform_steps() const {
    return uniform_steps_;
  }

private:
  /// An access whose lanes move with the block index: its address step per block along x, y
  /// and z, the same for every active lane (most accesses), or per lane in lane_steps_.
  struct MovingAccess {
    std::size_t warp = 0;
    std::size_t step = 0;
    std::array<std::uint64_t, 3> step_per_block{};
    std::array<std::int32_t, 3> lane_steps{-1, -1, -1}; ///< index in lane_steps_, or -1: uniform
  };

  /// Sets uniform_steps_ when the translation allows it.
  void share_uniform_steps(const Program& program);

  InterpretedBlock reference_; ///< its trace moved to shared_reference_
  std::vector<MovingAccess> moving_;
  std::vector<std::array<std::uint64_t, 32>> lane_steps_;
  std::shared_ptr<const BlockTrace> shared_reference_;
  std::shared_ptr<const std::vector<std::array<std::int64_t, 3>>> uniform_steps_;
};

} // namespace cachewise::frontend
