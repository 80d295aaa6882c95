// Fuzzes profile_from_json: any byte string must either be rejected with InputError or give
// a profile that survives a round trip through profile_to_json unchanged. Any other
// exception escapes and libFuzzer reports it as a crash.
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json json = nlohmann::json::parse(data, data + size, nullptr, false);
  if (json.is_discarded()) return 0;
  cachewise::DeviceProfile profile;
  try {
    profile = cachewise::profile_from_json(json);
  } catch (const cachewise::InputError&) {
    return 0;
  }
  if (!(cachewise::profile_from_json(cachewise::profile_to_json(profile)) == profile)) __builtin_trap();
  return 0;
}
