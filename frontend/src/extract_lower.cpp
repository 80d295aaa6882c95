// Lowering an entry to compact instructions: memory layout (parameters, shared and local
// variables), operands to registers / immediates, opcodes to Op with their modifiers.
#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "cachewise/model.hpp"
#include "extract_lowering.hpp"
#include "ptx_syntax.hpp"

namespace cachewise::frontend {
namespace {

std::int64_t align_up(std::int64_t value, std::int64_t align) {
  return align <= 1 ? value : (value + align - 1) / align * align;
}

const std::unordered_map<std::string, Special>& special_names() {
  static const std::unordered_map<std::string, Special> names = {
      {"%tid.x", Special::tid_x},
      {"%tid.y", Special::tid_y},
      {"%tid.z", Special::tid_z},
      {"%ntid.x", Special::ntid_x},
      {"%ntid.y", Special::ntid_y},
      {"%ntid.z", Special::ntid_z},
      {"%ctaid.x", Special::ctaid_x},
      {"%ctaid.y", Special::ctaid_y},
      {"%ctaid.z", Special::ctaid_z},
      {"%nctaid.x", Special::nctaid_x},
      {"%nctaid.y", Special::nctaid_y},
      {"%nctaid.z", Special::nctaid_z},
      {"%laneid", Special::laneid},
      {"%warpid", Special::warpid},
      {"%nwarpid", Special::nwarpid},
      {"%lanemask_eq", Special::lanemask_eq},
      {"%lanemask_le", Special::lanemask_le},
      {"%lanemask_lt", Special::lanemask_lt},
      {"%lanemask_ge", Special::lanemask_ge},
      {"%lanemask_gt", Special::lanemask_gt},
      {"%dynamic_smem_size", Special::dynamic_smem_size},
      {"%total_smem_size", Special::total_smem_size},
  };
  return names;
}

} // namespace

Lowering::Lowering(Program& program) : program_(program), function_(*program.function) {
  program_.special_base = static_cast<std::int32_t>(function_.registers.size());
  program_.register_count = program_.special_base + static_cast<std::int32_t>(Special::count);
  lay_out_params();
  lay_out_variables();
}

[[noreturn]] void Lowering::fail(const std::string& message) const {
  throw InputError(program_.where(current_) + ": " + message + " (" + program_.text(current_) + ")");
}

void Lowering::lay_out_params() {
  const std::vector<PtxParam>& params = function_.params;
  if (program_.args.params.size() != params.size())
    throw InputError("entry '" + function_.name + "' takes " + std::to_string(params.size()) +
                     " parameters, the launch gives " + std::to_string(program_.args.params.size()));
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    offset = align_up(offset, params[i].align);
    param_offsets_[params[i].name] = offset;
    program_.params.push_back({params[i].name, static_cast<int>(params[i].bytes)});
    const std::size_t end = static_cast<std::size_t>(offset + params[i].bytes);
    param_image_.resize(std::max(param_image_.size(), end), 0);
    param_known_.resize(param_image_.size(), false);
    const std::vector<std::vector<std::uint8_t>>& raw = program_.args.param_bytes;
    if (i < raw.size() && !raw[i].empty()) {
      if (static_cast<std::int64_t>(raw[i].size()) != params[i].bytes)
        throw InputError("parameter " + std::to_string(i) + " of '" + function_.name + "' has " +
                         std::to_string(params[i].bytes) + " bytes, the launch gives " + std::to_string(raw[i].size()));
      for (std::size_t b = 0; b < raw[i].size(); ++b) {
        param_image_[static_cast<std::size_t>(offset) + b] = raw[i][b];
        param_known_[static_cast<std::size_t>(offset) + b] = true;
      }
    } else {
      const std::uint64_t value = program_.args.params[i];
      for (std::int64_t b = 0; b < std::min<std::int64_t>(params[i].bytes, 8); ++b) {
        param_image_[static_cast<std::size_t>(offset + b)] = static_cast<std::uint8_t>(value >> (8 * b));
        param_known_[static_cast<std::size_t>(offset + b)] = true;
      }
    }
    offset += params[i].bytes;
  }
}

bool Lowering::references(const std::string& symbol) const {
  for (const PtxInstruction& instruction : function_.instructions)
    for (const PtxOperand& operand : instruction.operands)
      if (operand.symbol == symbol) return true;
  return false;
}

void Lowering::lay_out_variables() {
  std::int64_t shared = 0;
  std::int64_t local = 0;
  std::int64_t extern_align = 1;
  std::vector<std::string> externs;
  const auto place = [&](const PtxVariable& variable) {
    if (variable.space == "shared" && variable.is_extern) {
      externs.push_back(variable.name);
      extern_align = std::max(extern_align, variable.align);
    } else if (variable.space == "shared") {
      shared = align_up(shared, variable.align);
      symbols_[variable.name] = {TraceSpace::shared, shared};
      shared += variable.bytes;
    } else if (variable.space == "local") {
      local = align_up(local, variable.align);
      symbols_[variable.name] = {TraceSpace::local, local};
      local += variable.bytes;
    } else if (variable.space == "const") {
      const_symbols_.insert(variable.name);
    } else {
      global_symbols_.insert(variable.name);
    }
  };
  for (const PtxVariable& variable : program_.module.variables)
    if (references(variable.name)) place(variable);
  for (const PtxVariable& variable : function_.variables) place(variable);
  const std::int64_t dynamic_offset = align_up(shared, extern_align);
  for (const std::string& name : externs) symbols_[name] = {TraceSpace::shared, dynamic_offset};
  if (program_.args.dynamic_shared_bytes < 0) throw InputError("dynamic shared memory bytes must not be negative");
  program_.static_shared_bytes = shared;
  program_.shared_bytes = (externs.empty() ? shared : dynamic_offset) + program_.args.dynamic_shared_bytes;
  program_.local_bytes = local;
}

/// A symbol used as a value: a shared / local variable's offset in its space.
Source Lowering::symbol_value(const PtxOperand& operand) const {
  Source source;
  const auto it = symbols_.find(operand.symbol);
  if (it != symbols_.end()) {
    source.imm = it->second.offset + operand.imm;
    return source;
  }
  if (const_symbols_.count(operand.symbol)) return source; // only ld.const reads through it: opaque data
  if (global_symbols_.count(operand.symbol))
    fail("device variable '" + operand.symbol + "' is not supported (pass it as a buffer parameter)");
  if (param_offsets_.count(operand.symbol)) fail("taking a kernel parameter's address is not supported");
  fail("unknown symbol '" + operand.symbol + "'");
}

Source Lowering::source(const PtxOperand& operand) const {
  Source source;
  source.negated = operand.negated;
  switch (operand.kind) {
  case PtxOperand::Kind::reg:
    source.kind = Source::Kind::reg;
    source.reg = operand.reg;
    return source;
  case PtxOperand::Kind::imm_int: source.imm = operand.imm; return source;
  case PtxOperand::Kind::imm_float: source.kind = Source::Kind::data; return source;
  case PtxOperand::Kind::special: {
    const auto it = special_names().find(operand.symbol);
    if (it == special_names().end()) { // %clock, %smid, ...: only the hardware knows them
      source.kind = Source::Kind::data;
      return source;
    }
    source.kind = Source::Kind::reg;
    source.reg = program_.special_base + static_cast<std::int32_t>(it->second);
    return source;
  }
  case PtxOperand::Kind::symbol: {
    Source value = symbol_value(operand);
    value.negated = operand.negated;
    return value;
  }
  default: fail("unexpected operand");
  }
}

std::int32_t Lowering::destination(const PtxOperand& operand) const {
  if (operand.kind == PtxOperand::Kind::sink) return -1;
  if (operand.kind != PtxOperand::Kind::reg) fail("destination is not a register");
  return operand.reg;
}

void Lowering::destinations(const PtxOperand& operand, Instr& instr) const {
  if (operand.kind == PtxOperand::Kind::vector) {
    if (operand.elements.size() > instr.dst.size()) fail("vector wider than 4");
    for (const PtxOperand& element : operand.elements) instr.dst[instr.dst_count++] = destination(element);
    return;
  }
  instr.dst[instr.dst_count++] = destination(operand);
  if (operand.second_reg >= 0) instr.dst2 = operand.second_reg;
}

void Lowering::sources(const std::vector<PtxOperand>& operands, std::size_t first, Instr& instr) const {
  for (std::size_t i = first; i < operands.size(); ++i) {
    if (operands[i].kind == PtxOperand::Kind::vector) {
      for (const PtxOperand& element : operands[i].elements) add_source(instr, source(element));
    } else {
      add_source(instr, source(operands[i]));
    }
  }
}

void Lowering::add_source(Instr& instr, const Source& source) const {
  if (instr.src_count >= instr.src.size()) fail("too many operands");
  instr.src[instr.src_count++] = source;
}

Address Lowering::address(const PtxOperand& operand, TraceSpace* symbol_space) const {
  if (operand.kind != PtxOperand::Kind::address) fail("expected a memory operand");
  Address address;
  address.offset = operand.imm;
  address.reg = operand.reg;
  if (operand.reg >= 0)
    address.reg_bits =
        static_cast<std::uint8_t>(8 * type_bytes(function_.registers[static_cast<std::size_t>(operand.reg)].type));
  if (!operand.symbol.empty()) {
    const auto it = symbols_.find(operand.symbol);
    if (it == symbols_.end()) {
      (void)symbol_value(operand); // throws unless a .const variable, which only ld.const reads
      return address;
    }
    address.offset += it->second.offset;
    if (symbol_space) *symbol_space = it->second.space;
  }
  return address;
}

/// ld.param: the launch's parameter bytes become immediates.
void Lowering::lower_param_load(const PtxInstruction& instruction, const MemoryForm& form, Instr& instr) const {
  const PtxOperand& where = instruction.operands.at(1);
  if (where.kind != PtxOperand::Kind::address || where.reg >= 0) fail("ld.param through a register is not supported");
  const auto it = param_offsets_.find(where.symbol);
  if (it == param_offsets_.end()) fail("unknown parameter '" + where.symbol + "'");
  instr.op = Op::mov;
  destinations(instruction.operands.at(0), instr);
  for (int element = 0; element < instr.dst_count; ++element) {
    const std::int64_t start = it->second + where.imm + element * form.element_bytes;
    Source source;
    std::uint64_t value = 0;
    for (int b = 0; b < form.element_bytes; ++b) {
      const auto at = static_cast<std::size_t>(start + b);
      if (start + b < 0 || at >= param_image_.size()) fail("read outside the parameters");
      if (!param_known_[at]) source.kind = Source::Kind::data; // a struct parameter's bytes past the launch's 8
      value |= std::uint64_t{param_image_[at]} << (8 * b);
    }
    source.imm = static_cast<std::int64_t>(value);
    add_source(instr, source);
  }
}

void lower_program(Program& program) {
  Lowering lowering(program);
  const std::vector<PtxInstruction>& instructions = program.function->instructions;
  program.code.reserve(instructions.size());
  for (std::size_t pc = 0; pc < instructions.size(); ++pc)
    program.code.push_back(lowering.lower(static_cast<std::int32_t>(pc)));
  hoist_loads(program.code);
  const std::vector<std::int32_t> points = reconvergence_points(program.code);
  for (std::size_t pc = 0; pc < program.code.size(); ++pc) program.code[pc].reconverge = points[pc];
}

} // namespace cachewise::frontend
