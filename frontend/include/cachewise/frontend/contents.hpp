// cachewise::frontend — a buffer's declared contents (spec key "contents", --contents): element
// i of an index array is an integer expression of i and the candidate's parameters and args,
// so that the extractor knows the values a kernel loads from it (CSR row pointers, a gather's
// indices) and the tuner can upload the same values before measuring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cachewise/frontend/expression.hpp"

namespace cachewise::frontend {

/// The integer elements of a declared buffer.
struct ElementType {
  int bytes = 4;
  bool is_signed = true;
};

/// "i32", "u32", "i64" or "u64"; InputError "<where>: unknown element type ..." otherwise.
ElementType contents_element_type(std::string_view name, const std::string& where);

class DeclaredContents {
public:
  /// `value`'s context names the buffer ("contents of 'col'"); `bindings` are the candidate's.
  DeclaredContents(std::string buffer, Expression value, ElementType type, Bindings bindings);

  const std::string& buffer() const { return buffer_; }
  ElementType type() const { return type_; }

  /// Element `index`'s value. Throws InputError naming the buffer and the index on division by
  /// zero, overflow or a value outside the element type.
  std::int64_t element(std::int64_t index) const;

  /// The buffer's bytes, little-endian elements; a tail shorter than an element stays zero.
  std::vector<std::byte> bytes(std::int64_t buffer_bytes) const;

private:
  std::string buffer_;
  Expression value_;
  ElementType type_;
  Bindings bindings_;
};

} // namespace cachewise::frontend
