// cachewise::tuner size buckets: the sizes one tuned bucket of a user kernel sets (args, or
// macros its source reads), the spec with them set, and the bucket's name in headers and journals.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cachewise/frontend/spec.hpp"
#include "cachewise/model/problem.hpp"

namespace cachewise::tuner {

/// The sizes one bucket sets ("width=1024,height=1024"): args, or macros the source reads.
struct SizeBucket {
  std::vector<frontend::NamedValue> args;
  std::string label() const; ///< "width=1024,height=1024"
};
/// Throws InputError on malformed text or a repeated name.
SizeBucket parse_size_bucket(std::string_view text);
/// The spec with the bucket's sizes set: an arg of that name, else a define of that name (-D),
/// else a new define when the source names it (a size #define'd in the source, guarded by
/// #ifndef); throws InputError for a name that is none of these.
frontend::KernelSpec with_size_bucket(frontend::KernelSpec spec, const SizeBucket& bucket);

/// What the header and the journal call one bucket's run: "transpose_tiled width=1024,height=1024".
ProblemSpec kernel_problem(const frontend::KernelSpec& spec, const SizeBucket& bucket);

} // namespace cachewise::tuner
