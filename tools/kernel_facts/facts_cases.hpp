// The launches the kernel facts generator (kernel_facts.cpp) traces: one family problem and
// config per compiled kernel (and per compiled path of one, BuiltinKernel::path), chosen so
// that every loop of the traced interior block fills its batches (the facts are the most
// loads per round and stores per run, which a short loop would understate). The generator
// fails when a kernel of the compiled code has no launch here, or a launch names no kernel.
#pragma once

#include <string>
#include <vector>

#include "crosscheck.hpp"

namespace cachewise::frontend::builtin {

inline CrossCase facts_case(const std::string& family, std::int64_t n, std::int64_t m, std::int64_t k, DataType dtype,
                            const std::string& config) {
  return {family + " " + std::to_string(n) + "x" + std::to_string(m) + "x" + std::to_string(k) + " " +
              to_string(dtype) + " " + config,
          {family, n, m, k, dtype},
          Config::parse(config)};
}

inline const std::vector<DataType>& all_dtypes() {
  static const std::vector<DataType> types = {DataType::f32, DataType::f64, DataType::f16};
  return types;
}

/// Words of 2, 4, 8 and 16 bytes; 16 ept fill four batches of kMoveBatch.
inline void add_copy_cases(std::vector<CrossCase>& cases) {
  for (const auto& [dtype, vector] : {std::pair{DataType::f16, 1}, std::pair{DataType::f32, 1},
                                      std::pair{DataType::f64, 1}, std::pair{DataType::f32, 4}}) {
    cases.push_back(facts_case("copy", std::int64_t{1} << 22, 0, 0, dtype,
                               "block=256,ept=16,stride=1,vector=" + std::to_string(vector)));
  }
}

/// Every compiled full-tile shape (kCols, kBatch), in 32-tiles whose threads hold kBatch
/// elements (32 when kBatch is the largest batch, two batches), and the bounds-checked walk in
/// 48-tiles of 3 x 8 elements per thread (three batches of kTransposeBatch).
inline void add_transpose_cases(std::vector<CrossCase>& cases) {
  std::vector<std::pair<int, int>> shapes; // (columns, rows) per thread
  for (int cols = 1; cols <= 8; cols *= 2) {
    for (int batch = cols; batch <= kMaxFullTileBatch; batch *= 2) {
      shapes.emplace_back(cols, (batch == kMaxFullTileBatch ? 2 * batch : batch) / cols);
    }
  }
  for (const DataType dtype : all_dtypes()) {
    for (const int smem : {0, 1}) {
      const std::string pad = smem == 1 ? ",pad=1" : "";
      for (const auto& [cols, rows] : shapes) {
        cases.push_back(facts_case("transpose", 1024, 1024, 0, dtype,
                                   "smem=" + std::to_string(smem) + ",tile=32,block_x=" + std::to_string(32 / cols) +
                                       ",block_y=" + std::to_string(32 / rows) + pad));
      }
      cases.push_back(facts_case("transpose", 1536, 1536, 0, dtype,
                                 "smem=" + std::to_string(smem) + ",tile=48,block_x=16,block_y=6" + pad));
    }
  }
}

/// Radius 1 with each compiled row count, rolled rows (ept_y 6: three unrolled pairs), a
/// run-time radius (2), the shared tile (34 x 34 of 128 threads: 9 loads each), and every
/// vector width of 16 bytes or less.
inline void add_stencil2d_cases(std::vector<CrossCase>& cases) {
  for (const DataType dtype : all_dtypes()) {
    for (int vector = 1; vector <= 8 && vector * element_bytes(dtype) <= 16; vector *= 2) {
      const std::string tail = ",block_x=32,block_y=4,vector=" + std::to_string(vector);
      for (const int rows : {1, 2, 4, 8, 6}) {
        cases.push_back(
            facts_case("stencil2d", 1024, 1024, 0, dtype, "radius=1,smem=0,ept_y=" + std::to_string(rows) + tail));
      }
      cases.push_back(facts_case("stencil2d", 1024, 1024, 0, dtype, "radius=2,smem=0,ept_y=2" + tail));
    }
    cases.push_back(facts_case("stencil2d", 1024, 1024, 0, dtype, "radius=1,smem=1,block_x=32,block_y=4,ept_y=8"));
  }
}

/// Blocked, streaming in plane batches (z_chunk 16: two) and plane by plane (z_chunk 5), and
/// the vector walks batched (16) and plane by plane (5).
inline void add_stencil3d_cases(std::vector<CrossCase>& cases) {
  for (const DataType dtype : all_dtypes()) {
    cases.push_back(facts_case("stencil3d", 128, 128, 128, dtype, "mode=0,block_x=32,block_y=4,block_z=2"));
    for (int vector = 1; vector <= 8 && vector * element_bytes(dtype) <= 16; vector *= 2) {
      for (const int z_chunk : {16, 5}) {
        cases.push_back(facts_case(
            "stencil3d", 128, 512, 130, dtype,
            "mode=1,block_x=32,block_y=4,z_chunk=" + std::to_string(z_chunk) + ",vector=" + std::to_string(vector)));
      }
    }
  }
}

/// Every compiled thread tile in 256-thread blocks with bk 32: at least 4 tile elements per
/// thread and k-step, one batch of kMoveBatch or more.
inline void add_gemm_cases(std::vector<CrossCase>& cases) {
  for (const DataType dtype : all_dtypes()) {
    for (int tm = 1; tm <= 8; tm *= 2) {
      for (int tn = 1; tn <= 8; tn *= 2) {
        cases.push_back(facts_case("gemm", 256, 256, 256, dtype,
                                   "bm=" + std::to_string(16 * tm) + ",bn=" + std::to_string(16 * tn) +
                                       ",bk=32,pad=1,tm=" + std::to_string(tm) + ",tn=" + std::to_string(tn)));
      }
    }
  }
}

inline std::vector<CrossCase> facts_cases() {
  std::vector<CrossCase> cases;
  add_copy_cases(cases);
  add_transpose_cases(cases);
  add_stencil2d_cases(cases);
  add_stencil3d_cases(cases);
  add_gemm_cases(cases);
  return cases;
}

} // namespace cachewise::frontend::builtin
