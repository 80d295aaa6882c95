// Fuzzes the kernel spec's JSON form (frontend/spec.hpp): any JSON must either be rejected with
// InputError or give a spec; a spec that validates gives its SpecExpressions (every expression
// parsed, names checked) whose candidates, when there are few, evaluate or throw InputError.
// Bytes that are not JSON at all are skipped. Any other exception escapes and counts as a crash.
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "cachewise/frontend/spec_expressions.hpp"
#include "cachewise/frontend/spec.hpp"
#include "cachewise/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::ordered_json json = nlohmann::ordered_json::parse(data, data + size, nullptr, false);
  if (json.is_discarded()) return 0;
  using namespace cachewise::frontend;
  try {
    const KernelSpec spec = kernel_spec_from_json(json, "/nonexistent/specs", "fuzz.json");
    (void)merge_kernel_specs(spec, spec);
    validate_kernel_spec(spec);
    (void)parse_entry_name(spec.entry);
    const SpecExpressions expressions(spec);
    const cachewise::SearchSpace space = expressions.search_space();
    if (space.unconstrained_size() > 64) return 0; // the candidate count is another target's concern
    for (const cachewise::Config& config : space.enumerate()) {
      try {
        (void)expressions.evaluate(config);
      } catch (const cachewise::InputError&) {
      }
    }
  } catch (const cachewise::InputError&) {
  }
  return 0;
}
