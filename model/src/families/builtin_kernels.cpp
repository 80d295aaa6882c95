// Which compiled kernel a built-in family's launcher (kernels/src/<family>.cu) runs for a
// config: the one mapping the model's facts lookup and the front end's cross-check
// (tests/frontend/builtin) both use. It mirrors the launchers' dispatch; the facts generator
// fails when it names a kernel the compiled code does not have.
#include <algorithm>
#include <bit>
#include <initializer_list>
#include <string>
#include <utility>

#include "cachewise/model/families/builtin_kernels.hpp"
#include "cachewise/model/errors.hpp"
#include "cachewise/model/families/family_kernels.hpp"

namespace cachewise {
namespace {

/// The element type as the kernels' templates take it (the demangler's spelling).
std::string value_type(DataType dtype) {
  switch (dtype) {
  case DataType::f32: return "float";
  case DataType::f64: return "double";
  case DataType::f16: return "__half";
  }
  return "float";
}

/// WordOfBytes<bytes>::type of kernels/src/launchers.hpp: copy and transpose move words.
std::string word_type(std::int64_t bytes) {
  switch (bytes) {
  case 2: return "unsigned short";
  case 4: return "unsigned int";
  case 8: return "uint2";
  case 16: return "uint4";
  default:
    throw InputError("no compiled kernel moves " + std::to_string(bytes) + "-byte words (compiled: 2, 4, 8, 16)");
  }
}

bool power_of_two(std::int64_t value) { return value > 0 && std::has_single_bit(static_cast<std::uint64_t>(value)); }

std::string arguments(std::initializer_list<std::string> values) {
  std::string text;
  for (const std::string& value : values) text += (text.empty() ? "" : ", ") + value;
  return "<" + text + ">";
}

/// launch_words / launch_batches of transpose.cu: a compiled full-tile path <Word, kCols,
/// kBatch> for power-of-two shapes with at most 8 columns per thread, else the bounds-checked
/// walk <Word, 0, 1>.
BuiltinKernel transpose_kernel(const ProblemSpec& problem, const Config& config) {
  const std::int64_t tile = config.get("tile");
  const std::int64_t cols = tile / config.get("block_x");
  const std::int64_t rows = tile / config.get("block_y");
  std::int64_t compiled_cols = 0, batch = 1;
  if (power_of_two(cols) && power_of_two(rows) && cols <= 8) {
    compiled_cols = cols;
    batch = std::min<std::int64_t>(rows * cols, kMaxFullTileBatch);
  }
  const std::string name = config.get("smem") == 1 ? "transpose_shared" : "transpose_direct";
  return {
      name + arguments({word_type(element_bytes(problem.dtype)), std::to_string(compiled_cols), std::to_string(batch)}),
      ""};
}

/// Stencil2dLauncher: radius 1 compiles ept_y 1, 2, 4, 8 (kRows), other ept_y roll (kRows 0);
/// another radius is a run-time value (kRadius 0, kRows 0).
BuiltinKernel stencil2d_kernel(const ProblemSpec& problem, const Config& config) {
  const std::int64_t radius = config.get_or("radius", 1);
  const std::int64_t rows = config.get("ept_y");
  const std::int64_t vector = config.get_or("vector", 1);
  const std::string type = value_type(problem.dtype);
  const bool compiled_rows = radius == 1 && power_of_two(rows) && rows <= 8;
  const std::string kernel_radius = radius == 1 ? "1" : "0";
  const std::string kernel_rows = compiled_rows ? std::to_string(rows) : "0";
  if (vector > 1)
    return {"stencil2d_vector" + arguments({type, kernel_radius, kernel_rows, std::to_string(vector)}), ""};
  if (config.get("smem") == 1) return {"stencil2d_shared" + arguments({type}), ""};
  return {"stencil2d_global" + arguments({type, kernel_radius, kernel_rows}), ""};
}

/// Stencil3dLauncher: the blocked kernel (mode 0); streaming in plane batches when z_chunk is
/// a multiple of kStreamingPlaneBatch, else plane by plane; the vector walk batches its planes
/// at run time when z_chunk is a multiple of kVectorPlaneBatch (the "batched" path).
BuiltinKernel stencil3d_kernel(const ProblemSpec& problem, const Config& config) {
  const std::string type = value_type(problem.dtype);
  if (config.get("mode") == 0) return {"stencil3d_blocked" + arguments({type}), ""};
  const std::int64_t z_chunk = config.get("z_chunk");
  const std::int64_t vector = config.get_or("vector", 1);
  if (vector > 1) {
    return {"stencil3d_streaming_vector" + arguments({type, std::to_string(vector)}),
            z_chunk % kVectorPlaneBatch == 0 ? "batched" : "plane by plane"};
  }
  const int batch = z_chunk % kStreamingPlaneBatch == 0 ? kStreamingPlaneBatch : 0;
  return {"stencil3d_streaming" + arguments({type, std::to_string(batch)}), ""};
}

/// GemmLauncher: thread tiles tm, tn in {1, 2, 4, 8} are compiled.
BuiltinKernel gemm_kernel(const ProblemSpec& problem, const Config& config) {
  const std::int64_t tm = config.get("tm");
  const std::int64_t tn = config.get("tn");
  for (const auto& [key, value] : {std::pair{"tm", tm}, std::pair{"tn", tn}}) {
    if (!power_of_two(value) || value > 8) {
      throw InputError("gemm: " + std::string(key) + "=" + std::to_string(value) +
                       " has no compiled kernel (compiled: 1, 2, 4, 8)");
    }
  }
  return {"gemm_tiled" + arguments({value_type(problem.dtype), std::to_string(tm), std::to_string(tn)}), ""};
}

} // namespace

BuiltinKernel builtin_kernel(const ProblemSpec& problem, const Config& config) {
  const std::string& family = problem.family;
  if (family == "copy") {
    return {"copy_words" + arguments({word_type(config.get_or("vector", 1) * element_bytes(problem.dtype))}), ""};
  }
  if (family == "transpose") return transpose_kernel(problem, config);
  if (family == "stencil2d") return stencil2d_kernel(problem, config);
  if (family == "stencil3d") return stencil3d_kernel(problem, config);
  if (family == "gemm") return gemm_kernel(problem, config);
  throw InputError("no compiled kernel for pattern '" + family + "'");
}

} // namespace cachewise
