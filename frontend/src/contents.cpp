// Declared buffer contents: one expression evaluated per element, range-checked for its type.
#include "cachewise/frontend/contents.hpp"

#include <algorithm>
#include <limits>

#include "cachewise/model.hpp"

namespace cachewise::frontend {

ElementType contents_element_type(std::string_view name, const std::string& where) {
  if (name == "i32") return {4, true};
  if (name == "u32") return {4, false};
  if (name == "i64") return {8, true};
  if (name == "u64") return {8, false};
  throw InputError(where + ": unknown element type '" + std::string(name) + "' (known: i32, u32, i64, u64)");
}

DeclaredContents::DeclaredContents(std::string buffer, Expression value, ElementType type, Bindings bindings)
    : buffer_(std::move(buffer)), value_(value.bound(bindings)), type_(type), bindings_(std::move(bindings)) {}

std::int64_t DeclaredContents::element(std::int64_t index) const {
  std::int64_t value = 0;
  try {
    value = value_.evaluate(bindings_, "i", index);
  } catch (const InputError& error) {
    throw InputError(std::string(error.what()) + " at element i = " + std::to_string(index));
  }
  // u64 elements hold what an int64 expression can reach: 0 to 2^63 - 1.
  const bool fits = type_.bytes == 8  ? (type_.is_signed || value >= 0)
                    : type_.is_signed ? value >= std::numeric_limits<std::int32_t>::min() &&
                                            value <= std::numeric_limits<std::int32_t>::max()
                                      : value >= 0 && value <= std::numeric_limits<std::uint32_t>::max();
  if (!fits) {
    throw InputError(value_.context() + ": element i = " + std::to_string(index) + " is " + std::to_string(value) +
                     ", outside " + (type_.is_signed ? "i" : "u") + std::to_string(type_.bytes * 8));
  }
  return value;
}

std::vector<std::byte> DeclaredContents::bytes(std::int64_t buffer_bytes) const {
  std::vector<std::byte> bytes(static_cast<std::size_t>(std::max<std::int64_t>(buffer_bytes, 0)), std::byte{0});
  const auto size = static_cast<std::size_t>(type_.bytes);
  for (std::size_t at = 0; at + size <= bytes.size(); at += size) {
    const auto value = static_cast<std::uint64_t>(element(static_cast<std::int64_t>(at / size)));
    for (std::size_t b = 0; b < size; ++b) bytes[at + b] = static_cast<std::byte>((value >> (8 * b)) & 0xFF);
  }
  return bytes;
}

} // namespace cachewise::frontend
