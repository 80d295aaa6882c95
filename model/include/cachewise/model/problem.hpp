// cachewise problem vocabulary: the element type, what the user wants computed (ProblemSpec) and
// a layout's named parameters (Config), shared by advisor, model, kernels and tuner.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "cachewise/model/errors.hpp"

namespace cachewise {

enum class DataType { f32, f64, f16 };
int element_bytes(DataType type);
std::string to_string(DataType type);
DataType parse_data_type(std::string_view text); ///< throws InputError naming the valid types

/// The built-in families' names, in the order families() lists them (docs/pattern-families.md):
/// what ProblemSpec::family and a calibration's time error bands may name.
inline constexpr std::array<std::string_view, 5> kFamilyNames = {"copy", "gemm", "stencil2d", "stencil3d", "transpose"};
/// Throws InputError "unknown pattern 'x' (valid: copy, gemm, ...)" unless `name` is in kFamilyNames.
void check_family_name(std::string_view name);

/// What the user wants computed. Unused sizes stay 0; families document which they read.
struct ProblemSpec {
  std::string family;
  std::int64_t n = 0;
  std::int64_t m = 0;
  std::int64_t k = 0;
  DataType dtype = DataType::f32;
  friend bool operator==(const ProblemSpec&, const ProblemSpec&) = default;
};

/// Named integer parameters, e.g. "smem=1,tile=32,block_x=32,block_y=8,pad=1". A value may
/// also be a word (a user kernel's type parameter "T=float", or its entry "entry=reduce2"): it
/// is stored as its index among the parameter's values and printed as the word.
class Config {
public:
  Config() = default;
  Config(std::initializer_list<std::pair<const std::string, std::int64_t>> values) : values_(values) {}

  /// Parses "key=value,key=value"; throws InputError on malformed text or duplicate keys.
  static Config parse(std::string_view text);

  bool has(std::string_view key) const;
  /// Throws InputError "config: missing key 'tile'" when absent.
  std::int64_t get(std::string_view key) const;
  std::int64_t get_or(std::string_view key, std::int64_t fallback) const;
  void set(std::string key, std::int64_t value) {
    words_.erase(key);
    values_[std::move(key)] = value;
  }
  /// `key` takes value `index`, shown as `word`.
  void set_word(std::string key, std::int64_t index, std::string word);
  /// The word `key` holds; nullptr for a number or an absent key.
  const std::string* word(std::string_view key) const;
  /// The value as printed: its word, else the number.
  std::string text(std::string_view key) const;
  void erase(std::string_view key);

  const std::map<std::string, std::int64_t, std::less<>>& values() const { return values_; }
  std::string to_string() const; ///< canonical form, keys sorted, words as words
  friend bool operator==(const Config&, const Config&) = default;

private:
  std::map<std::string, std::int64_t, std::less<>> values_;
  std::map<std::string, std::string, std::less<>> words_;
};

} // namespace cachewise
