// cachewise built-in families' kernel shapes: the batch sizes and limits that the compiled
// kernels (kernels/) are built with and that the families' patterns (model/src/families/)
// must declare alike (loads in flight, store bursts, valid radii). One definition for both;
// plain constants, usable in device code.
#pragma once

namespace cachewise {

/// Elements a thread of the batched kernels (copy, gemm's tile loads) moves at a time:
/// kMoveBatch loads, then their stores (kernels/src/batched_moves.cuh).
inline constexpr int kMoveBatch = 4;

/// Elements per batch of transpose's bounds-checked tile walk (kernels/src/transpose.cu).
inline constexpr int kTransposeBatch = 8;
/// The largest batch of transpose's compiled full-tile paths: 16 values in registers per thread.
inline constexpr int kMaxFullTileBatch = 16;

/// Planes per batch of stencil3d's streaming kernels' interior paths: z_chunk values that are
/// multiples of it load this many planes' taps before storing their outputs. The vector
/// kernel's taps are wider: 2 planes keep it at 32-66 registers (8 took 127-246, too many for
/// large blocks).
inline constexpr int kStreamingPlaneBatch = 8;
inline constexpr int kVectorPlaneBatch = 2;

/// Registers per thread that stencil3d's streaming vector kernel is held to (__maxnreg__) and
/// that its pattern declares, by element bytes and vector (2, 4, 8): with both walk directions
/// compiled, ptxas took f32 vector 2 from 32 to 34-48 registers unheld: 6 blocks of 256 threads
/// per SM instead of 8, up to 28% slower (H200).
constexpr int stencil3d_vector_walk_registers(int element_bytes, int vector) {
  return element_bytes > 4 || vector > 4 ? 56 : vector == 4 ? 40 : 32;
}

/// The largest stencil2d radius (the kernels keep radius + 1 weights in constant memory).
inline constexpr int kMaxStencilRadius = 8;

} // namespace cachewise
