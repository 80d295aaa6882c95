// Integer operations on a warp's 32-lane register vectors, PTX semantics (wrapping arithmetic
// at the instruction's width, shifts clamped, signed / unsigned compares), and "data" results
// for what the extractor does not compute (floating point, values loaded from memory).
#include <array>

#include "extract_warp.hpp"

namespace cachewise::frontend {
namespace {

using U64 = std::uint64_t;
__extension__ using I128 = __int128; // the high half of a 64 x 64-bit product
__extension__ using U128 = unsigned __int128;

std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<U64>(a) + static_cast<U64>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<U64>(a) * static_cast<U64>(b));
}

std::int64_t mul_high(std::int64_t a, std::int64_t b, ValueType type) {
  if (type.bits < 64 && type.is_signed) return (a * b) >> type.bits; // 32-bit factors: the product fits in 64
  if (type.bits < 64) return static_cast<std::int64_t>((static_cast<U64>(a) * static_cast<U64>(b)) >> type.bits);
  if (type.is_signed) return static_cast<std::int64_t>((static_cast<I128>(a) * b) >> 64);
  return static_cast<std::int64_t>((static_cast<U128>(static_cast<U64>(a)) * static_cast<U64>(b)) >> 64);
}

bool less(std::int64_t a, std::int64_t b, ValueType type) {
  return type.is_signed ? a < b : static_cast<U64>(a) < static_cast<U64>(b);
}

std::int64_t shift_left(std::int64_t a, std::int64_t amount, ValueType type) {
  const auto n = static_cast<U64>(amount) & 0xffffffffu;
  return n >= type.bits ? 0 : static_cast<std::int64_t>(static_cast<U64>(a) << n);
}

std::int64_t shift_right(std::int64_t a, std::int64_t amount, ValueType type) {
  const auto n = static_cast<U64>(amount) & 0xffffffffu;
  if (type.is_signed) return a >> (n >= 64 ? 63 : n);
  const U64 bits = type.bits >= 64 ? static_cast<U64>(a) : static_cast<U64>(a) & ((U64{1} << type.bits) - 1);
  return n >= type.bits ? 0 : static_cast<std::int64_t>(bits >> n);
}

std::int64_t divide(std::int64_t a, std::int64_t b, ValueType type, bool remainder) {
  if (b == 0) return remainder ? a : -1; // PTX leaves it undefined; the hardware's unsigned result
  if (type.is_signed) {
    if (b == -1) return remainder ? 0 : wrap_mul(a, -1);
    return remainder ? a % b : a / b;
  }
  const U64 ua = static_cast<U64>(a), ub = static_cast<U64>(b);
  return static_cast<std::int64_t>(remainder ? ua % ub : ua / ub);
}

std::int64_t bit_field_extract(std::int64_t a, std::int64_t position, std::int64_t length, ValueType type) {
  const int pos = static_cast<int>(position & 0xff), len = static_cast<int>(length & 0xff);
  const int msb_index = type.bits - 1;
  const bool sign = type.is_signed && ((static_cast<U64>(a) >> std::min(pos + len - 1, msb_index)) & 1);
  if (len == 0) return 0;
  U64 field = pos >= type.bits ? 0 : static_cast<U64>(a) >> pos;
  if (len < 64) field &= (U64{1} << len) - 1;
  if (pos >= type.bits) return type.is_signed && sign ? -1 : 0;
  if (type.is_signed && sign && len < 64) field |= ~((U64{1} << len) - 1);
  return static_cast<std::int64_t>(field);
}

std::int64_t bit_field_insert(std::int64_t f, std::int64_t b, std::int64_t position, std::int64_t length,
                              ValueType type) {
  const int pos = static_cast<int>(position & 0xff), len = static_cast<int>(length & 0xff);
  U64 result = static_cast<U64>(b);
  for (int i = 0; i < len && pos + i < type.bits; ++i) {
    const U64 bit = U64{1} << (pos + i);
    result = (result & ~bit) | (((static_cast<U64>(f) >> i) & 1) << (pos + i));
  }
  return static_cast<std::int64_t>(result);
}

std::int64_t logic3(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t table) {
  U64 result = 0;
  for (int i = 0; i < 8; ++i) {
    if (!((table >> i) & 1)) continue;
    const U64 x = (i & 4) ? static_cast<U64>(a) : ~static_cast<U64>(a);
    const U64 y = (i & 2) ? static_cast<U64>(b) : ~static_cast<U64>(b);
    const U64 z = (i & 1) ? static_cast<U64>(c) : ~static_cast<U64>(c);
    result |= x & y & z;
  }
  return static_cast<std::int64_t>(result);
}

/// prmt.b32: byte i of the result is byte (selector nibble i & 7) of {b, a}, or that byte's
/// sign replicated when the nibble's top bit is set.
std::int64_t permute_bytes(std::int64_t a, std::int64_t b, std::int64_t selector) {
  const U64 bytes = (static_cast<U64>(b) & 0xffffffffu) << 32 | (static_cast<U64>(a) & 0xffffffffu);
  U64 result = 0;
  for (int i = 0; i < 4; ++i) {
    const auto nibble = static_cast<int>((static_cast<U64>(selector) >> (4 * i)) & 0xf);
    U64 byte = (bytes >> (8 * (nibble & 7))) & 0xff;
    if (nibble & 8) byte = (byte & 0x80) ? 0xff : 0;
    result |= byte << (8 * i);
  }
  return static_cast<std::int64_t>(result);
}

/// The low 24 bits of a 32-bit operand, as mul24 reads them.
std::int64_t low24(std::int64_t a, bool is_signed) {
  const std::int64_t bits = a & 0xffffff;
  return is_signed && (bits & 0x800000) ? bits - 0x1000000 : bits;
}

std::int64_t reverse_bits(std::int64_t a, int bits) {
  U64 result = 0;
  for (int i = 0; i < bits; ++i) result |= ((static_cast<U64>(a) >> i) & 1) << (bits - 1 - i);
  return static_cast<std::int64_t>(result);
}

std::int64_t count_leading_zeros(std::int64_t a, int bits) {
  const U64 v = bits >= 64 ? static_cast<U64>(a) : static_cast<U64>(a) & ((U64{1} << bits) - 1);
  return std::countl_zero(v) - (64 - bits);
}

bool compare(Compare op, std::int64_t a, std::int64_t b, ValueType type) {
  switch (op) {
  case Compare::eq: return a == b;
  case Compare::ne: return a != b;
  case Compare::lt: return less(a, b, type);
  case Compare::le: return !less(b, a, type);
  case Compare::gt: return less(b, a, type);
  case Compare::ge: return !less(a, b, type);
  }
  return false;
}

bool combine(Combine op, bool a, bool c) {
  switch (op) {
  case Combine::none: return a;
  case Combine::and_: return a && c;
  case Combine::or_: return a || c;
  case Combine::xor_: return a != c;
  }
  return a;
}

/// One lane of a one-destination operation on up to four sources, reduced to their type.
std::int64_t compute(const Instr& instr, const std::array<std::int64_t, 4>& s) {
  const ValueType t = instr.type;
  switch (instr.op) {
  case Op::add: return wrap_add(s[0], s[1]);
  case Op::sub: return wrap_add(s[0], wrap_mul(s[1], -1));
  case Op::mul_lo:
  case Op::mul_wide: return wrap_mul(s[0], s[1]);
  case Op::mul_hi: return mul_high(s[0], s[1], t);
  case Op::mad_lo: return wrap_add(wrap_mul(s[0], s[1]), s[2]);
  case Op::mad_wide: return wrap_add(wrap_mul(s[0], s[1]), s[2]);
  case Op::mad_hi: return wrap_add(mul_high(s[0], s[1], t), s[2]);
  case Op::shl: return shift_left(s[0], s[1], t);
  case Op::shr: return shift_right(s[0], s[1], t);
  case Op::bit_and: return t.is_pred ? (s[0] && s[1]) : (s[0] & s[1]);
  case Op::bit_or: return t.is_pred ? (s[0] || s[1]) : (s[0] | s[1]);
  case Op::bit_xor: return t.is_pred ? (s[0] != s[1]) : (s[0] ^ s[1]);
  case Op::bit_not: return t.is_pred ? !s[0] : ~s[0];
  case Op::cnot: return s[0] == 0;
  case Op::neg: return wrap_mul(s[0], -1);
  case Op::abs: return s[0] < 0 ? wrap_mul(s[0], -1) : s[0];
  case Op::min: return less(s[1], s[0], t) ? s[1] : s[0];
  case Op::max: return less(s[0], s[1], t) ? s[1] : s[0];
  case Op::div: return divide(s[0], s[1], t, false);
  case Op::rem: return divide(s[0], s[1], t, true);
  case Op::popc: return std::popcount(static_cast<U64>(normalize(s[0], ValueType{t.bits, false, false, false})));
  case Op::clz: return count_leading_zeros(s[0], t.bits);
  case Op::brev: return reverse_bits(s[0], t.bits);
  case Op::bfe: return bit_field_extract(s[0], s[1], s[2], t);
  case Op::bfi: return bit_field_insert(s[0], s[1], s[2], s[3], t);
  case Op::lop3: return logic3(s[0], s[1], s[2], s[3]);
  case Op::prmt: return permute_bytes(s[0], s[1], s[2]);
  case Op::mul24: return low24(s[0], t.is_signed) * low24(s[1], t.is_signed);
  case Op::mad24: return wrap_add(low24(s[0], t.is_signed) * low24(s[1], t.is_signed), s[2]);
  case Op::sad: return wrap_add(less(s[0], s[1], t) ? wrap_add(s[1], -s[0]) : wrap_add(s[0], -s[1]), s[2]);
  case Op::cvt: return s[0];
  case Op::to_generic: return wrap_add(s[0], instr.sub ? kLocalWindow : kSharedWindow);
  case Op::from_generic: return wrap_add(s[0], -(instr.sub ? kLocalWindow : kSharedWindow));
  default: return 0;
  }
}

/// Which source types the operation reads its operands at (mad.wide's addend is wide).
ValueType operand_type(const Instr& instr, int index) {
  if ((instr.op == Op::shl || instr.op == Op::shr) && index == 1) return ValueType{32, false, false, false};
  if ((instr.op == Op::bfe && index > 0) || (instr.op == Op::bfi && index > 1))
    return ValueType{32, false, false, false};
  if (instr.op == Op::mad_wide && index == 2) return instr.dst_type;
  if ((instr.op == Op::lop3 && index == 3) || (instr.op == Op::prmt && index == 2))
    return ValueType{32, false, false, false};
  return instr.type;
}

using Lanes = std::array<std::int64_t, 32>;

/// All 32 lanes of a source, reduced to `type` (inactive lanes too: computing them is harmless).
void gather(const WarpState& warp, const Source& source, ValueType type, Lanes& out) {
  if (source.kind != Source::Kind::reg) {
    const std::int64_t value = normalize(source.imm, type);
    for (int lane = 0; lane < 32; ++lane) out[lane] = value;
  } else {
    normalize_lanes(&warp.value[static_cast<std::size_t>(source.reg) * 32], out.data(), type);
  }
  if (source.negated)
    for (int lane = 0; lane < 32; ++lane) out[lane] = !out[lane];
}

/// The common operations as whole-warp loops the compiler can vectorize; the rest lane by lane.
void compute_lanes(const Instr& instr, const std::array<Lanes, 4>& s, Lanes& r) {
  const auto each2 = [&](auto f) {
    for (int lane = 0; lane < 32; ++lane) r[lane] = f(s[0][lane], s[1][lane]);
  };
  switch (instr.op) {
  case Op::add: each2([](std::int64_t a, std::int64_t b) { return wrap_add(a, b); }); return;
  case Op::sub: each2([](std::int64_t a, std::int64_t b) { return wrap_add(a, wrap_mul(b, -1)); }); return;
  case Op::mul_lo:
  case Op::mul_wide: each2([](std::int64_t a, std::int64_t b) { return wrap_mul(a, b); }); return;
  case Op::mad_lo:
  case Op::mad_wide:
    for (int lane = 0; lane < 32; ++lane) r[lane] = wrap_add(wrap_mul(s[0][lane], s[1][lane]), s[2][lane]);
    return;
  case Op::bit_and:
    if (!instr.type.is_pred) {
      each2([](std::int64_t a, std::int64_t b) { return a & b; });
      return;
    }
    break;
  case Op::bit_or:
    if (!instr.type.is_pred) {
      each2([](std::int64_t a, std::int64_t b) { return a | b; });
      return;
    }
    break;
  case Op::cvt: r = s[0]; return;
  case Op::shl: {
    const ValueType t = instr.type;
    each2([t](std::int64_t a, std::int64_t b) { return shift_left(a, b, t); });
    return;
  }
  default: break;
  }
  const int count = std::min<int>(instr.src_count, 4);
  for (int lane = 0; lane < 32; ++lane) {
    std::array<std::int64_t, 4> v{};
    for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = s[static_cast<std::size_t>(i)][lane];
    r[lane] = compute(instr, v);
  }
}

void execute_mov(WarpState& warp, const Instr& instr, std::uint32_t mask) {
  std::int32_t from = instr.source;
  if (instr.dst_count == 1 && instr.src_count == 1) {
    if (instr.dst[0] < 0) return;
    Lanes values;
    gather(warp, instr.src[0], instr.type, values);
    std::int64_t* out = &warp.at(instr.dst[0], 0);
    for_lanes(mask, [&](int lane) { out[lane] = values[lane]; });
    warp.set_taint(instr.dst[0], mask, warp.tainted(instr.src[0]), warp.origin_of(instr.src[0], instr.source));
    return;
  }
  if (instr.dst_count == instr.src_count) { // element-wise (also the lowered ld.param.v2)
    std::array<std::array<std::int64_t, 32>, 4> values{};
    for (int i = 0; i < instr.dst_count; ++i)
      for_lanes(mask, [&](int lane) { values[i][lane] = warp.read(instr.src[i], lane, instr.type); });
    for (int i = 0; i < instr.dst_count; ++i) {
      if (instr.dst[i] < 0) continue;
      for_lanes(mask, [&](int lane) { warp.at(instr.dst[i], lane) = values[i][lane]; });
      warp.set_taint(instr.dst[i], mask, warp.tainted(instr.src[i]), warp.origin_of(instr.src[i], instr.source));
    }
    return;
  }
  const int parts = std::max<int>(instr.dst_count, instr.src_count);
  const int part_bits = instr.type.bits / parts;
  const ValueType part{static_cast<std::uint8_t>(part_bits), false, false, false};
  const U64 part_mask = part_bits >= 64 ? ~U64{0} : (U64{1} << part_bits) - 1;
  if (instr.dst_count == 1) { // pack {a, b} into one wider register
    if (instr.dst[0] < 0) return;
    const std::uint32_t data = warp.sources_taint(instr, from);
    for_lanes(mask, [&](int lane) {
      U64 packed = 0;
      for (int i = 0; i < parts; ++i)
        packed |= (static_cast<U64>(warp.read(instr.src[i], lane, part)) & part_mask) << (i * part_bits);
      warp.at(instr.dst[0], lane) = static_cast<std::int64_t>(packed);
    });
    warp.set_taint(instr.dst[0], mask, data, from);
    return;
  }
  std::array<std::int64_t, 32> whole{}; // unpack one register into parts
  for_lanes(mask, [&](int lane) { whole[lane] = warp.read(instr.src[0], lane, instr.type); });
  for (int i = 0; i < parts; ++i) {
    if (instr.dst[i] < 0) continue;
    for_lanes(mask, [&](int lane) {
      warp.at(instr.dst[i], lane) =
          static_cast<std::int64_t>((static_cast<U64>(whole[lane]) >> (i * part_bits)) & part_mask);
    });
    warp.set_taint(instr.dst[i], mask, warp.tainted(instr.src[0]), warp.origin_of(instr.src[0], instr.source));
  }
}

void execute_setp(WarpState& warp, const Instr& instr, std::uint32_t mask) {
  std::int32_t from = instr.source;
  const std::uint32_t data = warp.sources_taint(instr, from);
  const ValueType pred{1, false, false, true};
  const auto op = static_cast<Compare>(instr.sub);
  std::array<std::int64_t, 32> p{}, q{};
  for_lanes(mask, [&](int lane) {
    const bool r =
        compare(op, warp.read(instr.src[0], lane, instr.type), warp.read(instr.src[1], lane, instr.type), instr.type);
    const bool c = instr.src_count > 2 && warp.read(instr.src[2], lane, pred);
    p[lane] = combine(instr.combine, r, c);
    q[lane] = combine(instr.combine, !r, c);
  });
  for (const auto& [reg, values] : {std::pair{instr.dst[0], &p}, std::pair{instr.dst2, &q}}) {
    if (reg < 0) continue;
    for_lanes(mask, [&, reg = reg, values = values](int lane) {
      warp.at(reg, lane) = (*values)[lane];
    }); // clang 14 captures no binding
    warp.set_taint(reg, mask, data, from);
  }
}

void execute_selp(WarpState& warp, const Instr& instr, std::uint32_t mask) {
  if (instr.dst[0] < 0) return;
  const ValueType pred{1, false, false, true};
  std::uint32_t data = 0;
  std::int32_t from = instr.source;
  const std::uint32_t condition_data = warp.tainted(instr.src[2]);
  for_lanes(mask, [&](int lane) {
    const bool c = warp.read(instr.src[2], lane, pred);
    const Source& chosen = instr.src[c ? 0 : 1];
    const std::uint32_t bit = 1u << lane;
    if ((warp.tainted(chosen) | condition_data) & bit) {
      data |= bit;
      from = condition_data & bit ? warp.origin_of(instr.src[2], instr.source) : warp.origin_of(chosen, instr.source);
    }
    warp.at(instr.dst[0], lane) = normalize(warp.read(chosen, lane, instr.type), instr.dst_type);
  });
  warp.set_taint(instr.dst[0], mask, data, from);
}

} // namespace

void execute_alu(WarpState& warp, const Instr& instr, std::uint32_t mask, std::uint32_t active) {
  switch (instr.op) {
  case Op::nop: return;
  case Op::mov: execute_mov(warp, instr, mask); return;
  case Op::setp: execute_setp(warp, instr, mask); return;
  case Op::selp: execute_selp(warp, instr, mask); return;
  case Op::activemask:
    if (instr.dst[0] < 0) return;
    for_lanes(mask, [&](int lane) { warp.at(instr.dst[0], lane) = active; });
    warp.set_taint(instr.dst[0], mask, 0, -1);
    return;
  case Op::data: { // floating point, constant memory, ...: opaque values
    std::int32_t from = instr.source;
    warp.sources_taint(instr, from);
    for (int i = 0; i < instr.dst_count; ++i) warp.set_taint(instr.dst[i], mask, ~0u, from);
    warp.set_taint(instr.dst2, mask, ~0u, from);
    return;
  }
  default: break;
  }
  std::int32_t from = instr.source;
  const std::uint32_t data = warp.sources_taint(instr, from);
  const std::int32_t dst = instr.dst[0];
  if (dst < 0) return;
  std::array<Lanes, 4> s; // only the instruction's sources are read
  for (int i = 0; i < std::min<int>(instr.src_count, 4); ++i)
    gather(warp, instr.src[static_cast<std::size_t>(i)], operand_type(instr, i), s[static_cast<std::size_t>(i)]);
  Lanes result;
  compute_lanes(instr, s, result);
  std::int64_t* out = &warp.at(dst, 0);
  if (mask == ~0u) {
    normalize_lanes(result.data(), out, instr.dst_type);
  } else {
    for_lanes(mask, [&](int lane) { out[lane] = normalize(result[lane], instr.dst_type); });
  }
  warp.set_taint(dst, mask, data, from);
}

} // namespace cachewise::frontend
