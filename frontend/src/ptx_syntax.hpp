// Internal to the PTX parser: the parsers of single statements (instructions, declarations,
// function headers) and of literals.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "cachewise/frontend/ptx.hpp"

namespace cachewise::frontend {

/// Register name -> index in the function's register list, -1 when not declared.
using RegisterLookup = std::function<int(const std::string&)>;

/// A PTX integer literal: decimal, 0x hex, 0 octal, 0b binary, optional U suffix, optional sign.
std::int64_t parse_integer(std::string_view text, int line);

/// "@%p1 ld.global.f32 %f1, [%rd5+4]" (without the ';').
PtxInstruction parse_instruction(std::string_view text, int line, const RegisterLookup& registers);

/// ".shared .align 4 .b8 tile[4224]" or ".extern .shared .align 16 .b8 s[]".
PtxVariable parse_variable(std::string_view text, int line);

/// ".visible .entry name(.param .u64 a, .param .u32 b) .maxntid 256, 1, 1" (up to the '{').
PtxFunction parse_function_header(std::string_view text, int line);

/// Bytes of a PTX fundamental type ("u32" -> 4, "pred" -> 1, "b128" -> 16); 0 when unknown.
int type_bytes(std::string_view type);

} // namespace cachewise::frontend
