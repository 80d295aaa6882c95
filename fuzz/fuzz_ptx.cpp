// Fuzzes the PTX parser (frontend/ptx.hpp): any text must either be rejected with InputError or
// give a module whose entries are listed and whose every instruction names its source location.
// Any other exception escapes and counts as a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cachewise/frontend/ptx.hpp"
#include "cachewise/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cachewise::frontend;
  try {
    const PtxModule module = parse_ptx(std::string(reinterpret_cast<const char*>(data), size));
    (void)entry_names(module);
    for (const PtxFunction& function : module.functions) {
      for (const PtxInstruction& instruction : function.instructions) (void)source_location(module, instruction);
    }
  } catch (const cachewise::InputError&) {
  }
  return 0;
}
