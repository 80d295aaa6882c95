// Internal to the extractor: the state of lowering one entry (its memory layout and symbols) and
// the per-instruction lowering, split between extract_lower.cpp (layout, operands) and
// extract_opcodes.cpp (opcodes).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "extract_program.hpp"

namespace cachewise::frontend {

/// The state space, vector width and element size of ld / st / atom / red.
struct MemoryForm {
  std::string space; ///< "global", "shared", "local", "param", "const", "" (generic)
  int vector = 1;
  int element_bytes = 4;
  std::string type;
};

class Lowering {
public:
  explicit Lowering(Program& program);
  Instr lower(std::int32_t pc);

  [[noreturn]] void fail(const std::string& message) const;
  Source source(const PtxOperand& operand) const;
  std::int32_t destination(const PtxOperand& operand) const;
  void destinations(const PtxOperand& operand, Instr& instr) const;
  void sources(const std::vector<PtxOperand>& operands, std::size_t first, Instr& instr) const;
  void add_source(Instr& instr, const Source& source) const;
  Address address(const PtxOperand& operand, TraceSpace* symbol_space) const;
  void lower_param_load(const PtxInstruction& instruction, const MemoryForm& form, Instr& instr) const;

private:
  struct Symbol {
    TraceSpace space;
    std::int64_t offset;
  };
  void lay_out_params();
  void lay_out_variables();
  bool references(const std::string& symbol) const;
  Source symbol_value(const PtxOperand& operand) const;
  void lower_memory(const PtxInstruction& instruction, Instr& instr) const;
  void lower_arithmetic(const PtxInstruction& instruction, Instr& instr) const;
  void lower_control(const PtxInstruction& instruction, Instr& instr) const;
  bool lower_float(const PtxInstruction& instruction, Instr& instr) const;

  Program& program_;
  const PtxFunction& function_;
  std::int32_t current_ = 0;
  std::map<std::string, std::int64_t> param_offsets_;
  std::vector<std::uint8_t> param_image_;
  std::vector<bool> param_known_;
  std::map<std::string, Symbol> symbols_;
  std::set<std::string> const_symbols_;
  std::set<std::string> global_symbols_;
};

} // namespace cachewise::frontend
