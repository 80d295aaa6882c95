// Fuzzes pattern_from_json: any byte string must either be rejected with InputError or give
// a pattern that survives a round trip through pattern_to_json unchanged, and whose shared
// memory size can be computed. Any other exception escapes and libFuzzer reports it as a crash.
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json json = nlohmann::json::parse(data, data + size, nullptr, false);
  if (json.is_discarded()) return 0;
  cachewise::KernelPattern pattern;
  try {
    pattern = cachewise::pattern_from_json(json);
    static_cast<void>(cachewise::shared_bytes_per_block(pattern));
  } catch (const cachewise::InputError&) {
    return 0;
  }
  if (!(cachewise::pattern_from_json(cachewise::pattern_to_json(pattern)) == pattern)) __builtin_trap();
  return 0;
}
