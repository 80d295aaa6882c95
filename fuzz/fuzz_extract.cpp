// Fuzzes the extractor (frontend/extract.hpp) on parsed PTX: every entry of a module that parses
// is lowered for a small launch (12 x 1 x 1 blocks of 48 threads: a partial second warp; each
// 8-byte parameter a 4 KiB buffer's address, each other one 16) and every block is traced in
// order, with the buffers checked: past the eighth, blocks are translated where the kernel allows
// (docs/ptx-extraction.md), in both of the translation's forms. Each step must either succeed or
// throw InputError; any other exception escapes and counts as a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cachewise/frontend/extract.hpp"
#include "cachewise/frontend/ptx.hpp"
#include "cachewise/model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cachewise::frontend;
  PtxModule module;
  try {
    module = parse_ptx(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const cachewise::InputError&) {
    return 0;
  }
  for (const PtxFunction& function : module.functions) {
    if (!function.is_entry) continue;
    LaunchArgs args;
    args.grid = {12, 1, 1};
    args.block = {48, 1, 1};
    std::uint64_t base = std::uint64_t{1} << 30;
    for (const PtxParam& param : function.params) {
      if (param.bytes == 8) {
        args.buffers.push_back({param.name, base, 4096});
        args.params.push_back(base);
        base += std::uint64_t{1} << 21;
      } else {
        args.params.push_back(16);
      }
    }
    try {
      const Extractor extractor(module, function.name, args);
      for (std::int64_t block = 0; block < args.grid.x; ++block) (void)extractor.trace_block({block, 0, 0});
      (void)extractor.translated_block({args.grid.x - 1, 0, 0});
      extractor.forget_translation();
      (void)extractor.facts();
    } catch (const cachewise::InputError&) {
    }
  }
  return 0;
}
