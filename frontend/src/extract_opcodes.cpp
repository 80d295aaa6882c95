// Lowering opcodes: "mad.wide.s32" -> Op::mad_wide on s32 sources with an s64 destination, and
// so on. Floating-point arithmetic lowers to Op::data: its values stay opaque, only its flops count.
#include <algorithm>
#include <string_view>

#include "extract_lowering.hpp"
#include "ptx_syntax.hpp"

namespace cachewise::frontend {
namespace {

bool has(const std::vector<std::string>& opcode, std::string_view token) {
  return std::find(opcode.begin() + 1, opcode.end(), token) != opcode.end();
}

bool is_type_token(const std::string& token) { return token == "pred" || type_bytes(token) > 0; }

bool is_float_type(std::string_view token) {
  return !token.empty() && (token[0] == 'f' || token.substr(0, 2) == "bf" || token == "tf32");
}

ValueType value_type(const std::string& token) {
  ValueType type;
  type.is_pred = token == "pred";
  type.is_float = is_float_type(token);
  type.is_signed = token[0] == 's';
  type.bits = static_cast<std::uint8_t>(type.is_pred ? 1 : 8 * type_bytes(token));
  return type;
}

std::vector<std::string> type_tokens(const std::vector<std::string>& opcode) {
  std::vector<std::string> types;
  for (std::size_t i = 1; i < opcode.size(); ++i)
    if (is_type_token(opcode[i])) types.push_back(opcode[i]);
  return types;
}

template <typename E>
bool pick(const std::vector<std::string>& opcode, std::initializer_list<std::pair<std::string_view, E>> names, E& out) {
  for (const auto& [name, value] : names) {
    if (has(opcode, name)) {
      out = value;
      return true;
    }
  }
  return false;
}

const std::vector<std::pair<std::string_view, Op>>& simple_integer_ops() {
  static const std::vector<std::pair<std::string_view, Op>> ops = {
      {"add", Op::add},
      {"sub", Op::sub},
      {"shl", Op::shl},
      {"shr", Op::shr},
      {"and", Op::bit_and},
      {"or", Op::bit_or},
      {"xor", Op::bit_xor},
      {"not", Op::bit_not},
      {"cnot", Op::cnot},
      {"neg", Op::neg},
      {"abs", Op::abs},
      {"min", Op::min},
      {"max", Op::max},
      {"div", Op::div},
      {"rem", Op::rem},
      {"popc", Op::popc},
      {"clz", Op::clz},
      {"brev", Op::brev},
      {"bfe", Op::bfe},
      {"bfi", Op::bfi},
      {"lop3", Op::lop3},
      {"selp", Op::selp},
      {"activemask", Op::activemask},
      {"mul24", Op::mul24},
      {"mad24", Op::mad24},
      {"sad", Op::sad},
      {"prmt", Op::prmt},
  };
  return ops;
}

/// The source operands an integer operation reads.
int source_count(Op op) {
  switch (op) {
  case Op::mov:
  case Op::bit_not:
  case Op::cnot:
  case Op::neg:
  case Op::abs:
  case Op::popc:
  case Op::clz:
  case Op::brev:
  case Op::cvt:
  case Op::to_generic:
  case Op::from_generic: return 1;
  case Op::mad_lo:
  case Op::mad_hi:
  case Op::mad_wide:
  case Op::bfe:
  case Op::selp:
  case Op::prmt:
  case Op::mad24:
  case Op::sad: return 3;
  case Op::bfi:
  case Op::lop3: return 4;
  default: return 2;
  }
}

} // namespace

Instr Lowering::lower(std::int32_t pc) {
  current_ = pc;
  const PtxInstruction& instruction = function_.instructions[static_cast<std::size_t>(pc)];
  Instr instr;
  instr.source = pc;
  instr.guard = instruction.guard_reg;
  instr.guard_negated = instruction.guard_negated;
  const std::vector<std::string> types = type_tokens(instruction.opcode);
  if (!types.empty()) instr.type = instr.dst_type = value_type(types.back());
  const std::string& name = instruction.opcode[0];
  if (name == "ld" || name == "ldu" || name == "st" || name == "atom" || name == "red")
    lower_memory(instruction, instr);
  else if (lower_float(instruction, instr)) {
  } else if (name == "bra" || name == "ret" || name == "exit" || name == "bar" || name == "barrier" || name == "shfl" ||
             name == "vote" || name == "membar" || name == "fence" || name == "prefetch" || name == "prefetchu" ||
             name == "griddepcontrol" || name == "nanosleep" || name == "trap" || name == "call" ||
             name == "createpolicy" || name == "cp")
    lower_control(instruction, instr);
  else lower_arithmetic(instruction, instr);
  return instr;
}

/// Floating-point work: opaque values, counted flops. True when `instruction` is such.
bool Lowering::lower_float(const PtxInstruction& instruction, Instr& instr) const {
  const std::vector<std::string>& opcode = instruction.opcode;
  const std::string& name = opcode[0];
  const std::vector<std::string> types = type_tokens(opcode);
  const bool float_typed =
      std::any_of(types.begin(), types.end(), [](const std::string& t) { return is_float_type(t); });
  static const std::vector<std::string_view> float_only = {"fma", "rcp", "sqrt", "rsqrt",    "sin",  "cos",
                                                           "lg2", "ex2", "tanh", "copysign", "testp"};
  static const std::vector<std::string_view> float_when_typed = {"add", "sub", "mul", "mad",  "div", "neg",
                                                                 "abs", "min", "max", "setp", "set", "cvt"};
  const bool is_float =
      std::find(float_only.begin(), float_only.end(), name) != float_only.end() ||
      (float_typed && std::find(float_when_typed.begin(), float_when_typed.end(), name) != float_when_typed.end());
  if (!is_float) return false;
  if (instruction.operands.empty()) fail("missing operands");
  instr.op = Op::data;
  destinations(instruction.operands[0], instr);
  sources(instruction.operands, 1, instr);
  double per_lane = 0;
  if (name == "add" || name == "sub" || name == "mul") per_lane = 1;
  if (name == "fma" || name == "mad") per_lane = 2;
  if (!types.empty() && types.back() == "f64") per_lane *= 2;
  if (!types.empty() && (types.back() == "f16x2" || types.back() == "bf16x2")) per_lane *= 2;
  instr.flops_per_lane = per_lane;
  return true;
}

void Lowering::lower_arithmetic(const PtxInstruction& instruction, Instr& instr) const {
  const std::vector<std::string>& opcode = instruction.opcode;
  const std::string& name = opcode[0];
  const std::vector<PtxOperand>& operands = instruction.operands;
  if (has(opcode, "cc") || name == "addc" || name == "subc" || name == "madc")
    fail("unsupported instruction '" + name + "' with carry");
  if (operands.empty()) fail("missing operands");
  bool known = false;
  for (const auto& [op_name, op] : simple_integer_ops()) {
    if (name == op_name) {
      instr.op = op;
      known = true;
    }
  }
  if (name == "mov") {
    instr.op = Op::mov;
    known = true;
  } else if (name == "mul" || name == "mad") {
    const bool mul = name == "mul";
    known = true;
    if (has(opcode, "hi")) instr.op = mul ? Op::mul_hi : Op::mad_hi;
    else if (has(opcode, "wide")) instr.op = mul ? Op::mul_wide : Op::mad_wide;
    else instr.op = mul ? Op::mul_lo : Op::mad_lo;
    if (has(opcode, "wide")) instr.dst_type.bits = static_cast<std::uint8_t>(2 * instr.type.bits);
  } else if (name == "setp") {
    known = true;
    instr.op = Op::setp;
    instr.dst_type = ValueType{1, false, false, true};
    Compare compare = Compare::eq;
    if (!pick<Compare>(opcode,
                       {{"eq", Compare::eq},
                        {"ne", Compare::ne},
                        {"lt", Compare::lt},
                        {"lo", Compare::lt},
                        {"le", Compare::le},
                        {"ls", Compare::le},
                        {"gt", Compare::gt},
                        {"hi", Compare::gt},
                        {"ge", Compare::ge},
                        {"hs", Compare::ge}},
                       compare))
      fail("unsupported comparison in setp");
    instr.sub = static_cast<std::uint8_t>(compare);
    pick<Combine>(opcode, {{"and", Combine::and_}, {"or", Combine::or_}, {"xor", Combine::xor_}}, instr.combine);
  } else if (name == "cvt") {
    known = true;
    instr.op = Op::cvt;
    const std::vector<std::string> types = type_tokens(opcode);
    if (types.size() != 2) fail("cvt needs two types");
    instr.dst_type = value_type(types[0]);
    instr.type = value_type(types[1]);
  } else if (name == "cvta") {
    known = true;
    const bool to_space = has(opcode, "to");
    if (has(opcode, "global")) {
      instr.op = Op::mov;
      instr.issues = false; // global and generic addresses coincide
    } else if (has(opcode, "shared") || has(opcode, "local")) {
      instr.op = to_space ? Op::from_generic : Op::to_generic;
      instr.sub = has(opcode, "local") ? 1 : 0;
    } else fail("unsupported instruction 'cvta' for this state space");
  }
  if (!known) fail("unsupported instruction '" + name + "'");
  if ((instr.op == Op::mul24 || instr.op == Op::mad24) && has(opcode, "hi"))
    fail("unsupported instruction '" + name + ".hi'");
  if (instr.op == Op::prmt && opcode.size() > 2) fail("unsupported instruction 'prmt' with a mode"); // prmt.b32 only
  if (instr.op == Op::popc || instr.op == Op::clz) instr.dst_type = ValueType{32, false, false, false};
  if (instr.op == Op::activemask) {
    destinations(operands[0], instr);
    return;
  }
  destinations(operands[0], instr);
  sources(operands, 1, instr);
  if (instr.op == Op::mov && instr.dst_count != instr.src_count && instr.dst_count != 1 && instr.src_count != 1)
    fail("mov between vectors of different sizes");
  if (instr.src_count < source_count(instr.op))
    fail("'" + name + "' needs " + std::to_string(source_count(instr.op)) + " source operands");
  // ptxas expands an integer division by a register into a routine (by a constant: a multiply
  // and shifts, about as cheap as one instruction).
  instr.divides_by_register = (instr.op == Op::div || instr.op == Op::rem) && instr.src[1].kind == Source::Kind::reg;
}

void Lowering::lower_memory(const PtxInstruction& instruction, Instr& instr) const {
  const std::vector<std::string>& opcode = instruction.opcode;
  const std::string& name = opcode[0];
  MemoryForm form;
  for (std::size_t i = 1; i < opcode.size(); ++i) {
    const std::string& token = opcode[i];
    if (token == "global" || token == "local" || token == "param" || token == "const" || token == "shared" ||
        token == "shared::cta")
      form.space = token.substr(0, 6) == "shared" ? "shared" : token;
    else if (token == "shared::cluster") fail("distributed shared memory (shared::cluster) is not supported");
    else if (token == "v2" || token == "v4" || token == "v8") form.vector = token[1] - '0';
    else if (is_type_token(token)) form.type = token;
  }
  form.element_bytes = type_bytes(form.type);
  if (form.element_bytes == 0) fail("'" + name + "' without a type");
  const std::vector<PtxOperand>& operands = instruction.operands;
  if (operands.size() < 2) fail("missing operands");
  if (form.space == "param") {
    if (name == "st")
      fail("calls to functions that were not inlined are not supported"); // st.param passes call arguments
    if (name != "ld") fail("only ld.param is supported in the .param space");
    lower_param_load(instruction, form, instr);
    instr.issues = false; // kernel parameters are constant-bank operands of the instructions that use them
    return;
  }
  if (form.space == "const") { // constant memory is not traced: its values are opaque data
    instr.op = Op::data;
    instr.reads_constant = true;
    instr.address = address(operands[1], nullptr); // a .const symbol's own offset is 0
    destinations(operands[0], instr);
    return;
  }
  if (form.vector * form.element_bytes > 16) fail("accesses wider than 16 bytes per thread are not supported");
  instr.vector = static_cast<std::uint8_t>(form.vector);
  instr.element_bytes = static_cast<std::uint8_t>(form.element_bytes);
  TraceSpace symbol_space = TraceSpace::global;
  const bool loads = name == "ld" || name == "ldu" || name == "atom";
  const bool address_first = name == "st" || name == "red";
  instr.address = address(operands[address_first ? 0 : 1], &symbol_space);
  if (form.space == "global") instr.space = TraceSpace::global;
  else if (form.space == "shared") instr.space = TraceSpace::shared;
  else if (form.space == "local") instr.space = TraceSpace::local;
  else if (!operands[address_first ? 0 : 1].symbol.empty()) instr.space = symbol_space;
  else instr.generic = true;
  instr.op = name == "st" ? Op::store : (name == "atom" || name == "red") ? Op::atomic : Op::load;
  if (loads) destinations(operands[0], instr);
  sources(operands, address_first ? 1 : 2, instr);
  instr.pending = loads && instr.space != TraceSpace::shared;
  instr.read_only = (name == "ldu" || has(opcode, "nc")) && instr.space == TraceSpace::global && !instr.generic;
  if (name == "atom" && instr.dst_count != 1) fail("atom needs one destination");
}

void Lowering::lower_control(const PtxInstruction& instruction, Instr& instr) const {
  const std::vector<std::string>& opcode = instruction.opcode;
  const std::string& name = opcode[0];
  const std::vector<PtxOperand>& operands = instruction.operands;
  if (name == "bra") {
    instr.op = Op::branch;
    if (operands.size() != 1 || operands[0].kind != PtxOperand::Kind::symbol)
      fail("indirect branches are not supported");
    const auto it = function_.labels.find(operands[0].symbol);
    if (it == function_.labels.end()) fail("unknown label '" + operands[0].symbol + "'");
    instr.target = it->second;
  } else if (name == "ret" || name == "exit" || name == "trap") {
    instr.op = Op::exit;
    instr.sub = name == "trap" ? kExitTraps : 0;
  } else if (name == "bar" || name == "barrier") {
    if (has(opcode, "warp")) return; // bar.warp.sync: a warp-level fence
    if (has(opcode, "arrive")) fail("unsupported instruction '" + name + ".arrive'");
    instr.op = Op::barrier;
    instr.sub = name == "bar" || has(opcode, "aligned") ? kBarrierAligned : 0; // bar.sync is barrier.sync.aligned
    if (has(opcode, "red")) destinations(operands.at(0), instr);               // __syncthreads_count and friends: data
  } else if (name == "shfl") {
    instr.op = Op::shfl;
    ShuffleMode mode = ShuffleMode::idx;
    if (!pick<ShuffleMode>(opcode,
                           {{"up", ShuffleMode::up},
                            {"down", ShuffleMode::down},
                            {"bfly", ShuffleMode::bfly},
                            {"idx", ShuffleMode::idx}},
                           mode))
      fail("shfl without a mode");
    instr.sub = static_cast<std::uint8_t>(mode);
    if (operands.size() < 4) fail("missing operands");
    destinations(operands[0], instr);
    sources(operands, 1, instr);
  } else if (name == "vote") {
    instr.op = Op::vote;
    VoteMode mode = VoteMode::ballot;
    if (!pick<VoteMode>(
            opcode,
            {{"ballot", VoteMode::ballot}, {"any", VoteMode::any}, {"all", VoteMode::all}, {"uni", VoteMode::uni}},
            mode))
      fail("vote without a mode");
    instr.sub = static_cast<std::uint8_t>(mode);
    if (operands.size() < 2) fail("missing operands");
    destinations(operands[0], instr);
    sources(operands, 1, instr);
  } else if (name == "cp") {
    lower_async_copy(instruction, instr);
  } else if (name == "call") {
    fail("calls to functions that were not inlined are not supported");
  } else if (name == "createpolicy") {
    instr.op = Op::data; // a cache-policy word: opaque
    destinations(operands.at(0), instr);
  } // membar, fence, prefetch, griddepcontrol, nanosleep: no access, no value (Op::nop)
}

/// cp.async.{ca,cg}.shared.global [shared], [global], cp-size{, src-size}: a global load into
/// shared memory that the warp waits for at cp.async.wait_group / wait_all.
void Lowering::lower_async_copy(const PtxInstruction& instruction, Instr& instr) const {
  const std::vector<std::string>& opcode = instruction.opcode;
  if (!has(opcode, "async") || has(opcode, "bulk"))
    fail("unsupported instruction '" + instruction.text.substr(0, instruction.text.find(' ')) + "'");
  if (has(opcode, "commit_group")) return;
  if (has(opcode, "wait_group") || has(opcode, "wait_all")) {
    instr.op = Op::async_wait;
    return;
  }
  const std::vector<PtxOperand>& operands = instruction.operands;
  if (operands.size() < 3 || operands[2].kind != PtxOperand::Kind::imm_int)
    fail("cp.async needs [shared], [global], size");
  const std::int64_t bytes = operands[2].imm;
  if (bytes != 4 && bytes != 8 && bytes != 16) fail("cp.async copies 4, 8 or 16 bytes");
  instr.op = Op::async_copy;
  instr.space = TraceSpace::shared;
  instr.element_bytes = static_cast<std::uint8_t>(bytes);
  instr.address = address(operands[0], nullptr);
  instr.source_address = address(operands[1], nullptr);
  instr.pending = true;
}

} // namespace cachewise::frontend
