// cachewise::frontend — a PTX module as nvcc / NVRTC emit it, parsed into functions, declarations
// and instructions with registers resolved to dense indices. The extractor lowers an entry of it
// into its own compact form; this is the syntactic layer only (no semantics checked beyond syntax).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <map>
#include <string>
#include <vector>

namespace cachewise::frontend {

/// One operand as written. Registers are indices into PtxFunction::registers.
struct PtxOperand {
  enum class Kind : std::uint8_t {
    reg,       ///< %r7 (reg), or %r7|%p3 (reg + second_reg: shfl's value and predicate outputs)
    imm_int,   ///< 42, -1, 0x1F
    imm_float, ///< 0f3F800000, 0d3FF0000000000000 (bits kept in imm)
    symbol,    ///< a variable or parameter name (its address), or a label
    special,   ///< %tid.x, %ctaid.y, %laneid ... (name kept in symbol)
    address,   ///< [base+offset]: base is a register (reg >= 0) or a symbol, or absent
    vector,    ///< {%f1, %f2, _, %f4}
    sink,      ///< _ (a discarded output)
  };
  Kind kind = Kind::imm_int;
  bool negated = false; ///< !%p as a setp / selp predicate input
  int reg = -1;
  int second_reg = -1;
  std::int64_t imm = 0; ///< immediate value, or the address offset
  std::string symbol;
  std::vector<PtxOperand> elements;
};

struct PtxInstruction {
  std::vector<std::string> opcode; ///< "ld.global.nc.v4.f32" as {"ld", "global", "nc", "v4", "f32"}
  int guard_reg = -1;              ///< @%p / @!%p
  bool guard_negated = false;
  std::vector<PtxOperand> operands;
  int ptx_line = 0;    ///< line in the PTX text
  int source_file = 0; ///< from the latest .loc (0 = none)
  int source_line = 0;
  int inlined_at_file = 0; ///< the call site when the .loc lies in an inlined function
  int inlined_at_line = 0;
  std::string text; ///< the statement as written, for messages
};

struct PtxRegister {
  std::string name;
  std::string type; ///< "b32", "pred", "f64" ...
};

/// A .shared / .local / .global / .const variable.
struct PtxVariable {
  std::string space; ///< "shared", "local", "global", "const"
  std::string name;
  std::int64_t bytes = 0; ///< 0 for an extern (dynamic) array
  std::int64_t align = 1;
  bool is_extern = false;
};

struct PtxParam {
  std::string name;
  std::string type; ///< "u64", "b8" ...
  std::int64_t bytes = 0;
  std::int64_t align = 1;
};

struct PtxFunction {
  std::string name;
  bool is_entry = false;
  bool body_parsed = true; ///< false: parse_ptx's filter skipped the body (name and params only)
  std::vector<PtxParam> params;
  std::vector<PtxRegister> registers;
  std::vector<PtxVariable> variables; ///< declared inside the body (.shared demoted, .local depot)
  std::vector<PtxInstruction> instructions;
  std::map<std::string, int> labels; ///< label -> index of the instruction it precedes
};

struct PtxModule {
  std::string version;
  std::string target;
  int address_size = 64;
  std::vector<PtxVariable> variables; ///< module scope
  std::vector<PtxFunction> functions;
  std::map<int, std::string> files; ///< .file index -> path
};

/// Whether parse_ptx parses a function's body, by its (mangled) name.
using PtxBodyFilter = std::function<bool(std::string_view function_name)>;

/// Parses PTX text: every function's name and parameters, and the bodies `parse_body` selects
/// (all without a filter), so that a function nothing asks for cannot fail the parse. Throws
/// InputError on what it cannot parse; in a selected body "NAME (FILE:LINE): ptx:LINE: ...",
/// naming the function as --entry takes it and the source line of the latest .loc.
PtxModule parse_ptx(std::string text, const PtxBodyFilter& parse_body = {});

/// The .entry names of the module, in order.
std::vector<std::string> entry_names(const PtxModule& module);

/// "transpose.cu:17" for an instruction with line info, else "ptx:LINE".
std::string source_location(const PtxModule& module, const PtxInstruction& instruction);

} // namespace cachewise::frontend
