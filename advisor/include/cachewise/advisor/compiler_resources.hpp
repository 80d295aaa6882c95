// cachewise::advisor::CompilerResources — what ptxas reports about a compiled kernel: a compiler
// fact, read by the front end (frontend::parse_ptxas_resources) and carried by a ranked
// advisor::Candidate, so it sits below both.
#pragma once

#include <cstdint>

namespace cachewise::advisor {

/// What ptxas reported for a compiled candidate (a user kernel), from its -v output.
struct CompilerResources {
  std::int64_t registers_per_thread = 0;
  std::int64_t stack_frame_bytes = 0;
  std::int64_t spill_store_bytes = 0;
  std::int64_t spill_load_bytes = 0;
  std::int64_t static_shared_bytes = 0;
  friend bool operator==(const CompilerResources&, const CompilerResources&) = default;
};

} // namespace cachewise::advisor
