// A JSON object with its path, for validating readers whose every error names the JSON path
// of the bad value ("profile.l2.line_bytes.value: ..."). Shared by the profile and pattern readers.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cachewise/model/errors.hpp"
#include "cachewise/model/strict_json.hpp"

namespace cachewise::detail {

using nlohmann::json;

inline std::string describe(const json& value) {
  std::string text = value.dump();
  constexpr std::size_t kMaxShown = 40;
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return text;
}

inline std::string type_name(const json& value) {
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  return "null";
}

/// A JSON object together with its path, for error messages.
class Node {
public:
  Node(const json& value, std::string path) : value_(value), path_(std::move(path)) {
    if (!value_.is_object()) fail(path_, "expected an object, got " + type_name(value_));
  }

  [[noreturn]] static void fail(const std::string& path, const std::string& what) {
    throw InputError(path + ": " + what);
  }

  std::string at(std::string_view key) const { return path_ + "." + std::string(key); }
  bool has(std::string_view key) const { return value_.contains(key) && !value_.at(std::string(key)).is_null(); }

  const json& required(std::string_view key) const {
    if (!has(key)) fail(at(key), "missing");
    return value_.at(std::string(key));
  }

  Node object(std::string_view key) const { return Node(required(key), at(key)); }

  double number(std::string_view key) const {
    const json& value = required(key);
    if (!value.is_number()) fail(at(key), "expected a number, got " + type_name(value));
    const double number = value.get<double>();
    if (!std::isfinite(number)) fail(at(key), "expected a finite number");
    return number;
  }

  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max) const {
    const json& value = required(key);
    if (!value.is_number_integer()) fail(at(key), "expected an integer, got " + describe(value));
    const std::int64_t number =
        value.is_number_unsigned() && value.get<std::uint64_t>() > INT64_MAX ? INT64_MAX : value.get<std::int64_t>();
    if (number < min || number > max) {
      fail(at(key),
           "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + describe(value));
    }
    return number;
  }

  int small_integer(std::string_view key, int min, int max) const { return static_cast<int>(integer(key, min, max)); }

  std::string string(std::string_view key) const {
    const json& value = required(key);
    if (!value.is_string()) fail(at(key), "expected a string, got " + type_name(value));
    return value.get<std::string>();
  }

  std::string string_or_empty(std::string_view key) const { return has(key) ? string(key) : std::string(); }

  bool boolean(std::string_view key) const {
    const json& value = required(key);
    if (!value.is_boolean()) fail(at(key), "expected true or false, got " + describe(value));
    return value.get<bool>();
  }

  const json& raw() const { return value_; }
  const std::string& path() const { return path_; }

private:
  const json& value_;
  std::string path_;
};

/// Reads a JSON file (parse_strict_json: no duplicate keys) and converts it with `convert`; every
/// error is prefixed by the file name ("p.json: cannot open profile file", "p.json: malformed
/// JSON (...)", "p.json: duplicate key 'l1.ways'", "p.json: profile.l1: ...").
template <typename Convert>
auto read_json_file(const std::filesystem::path& path, std::string_view what, Convert convert) {
  std::error_code error;
  if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error)) {
    throw InputError(path.string() + ": not a regular file (a " + std::string(what) + " file is a JSON file)");
  }
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open " + std::string(what) + " file");
  json document;
  try {
    document = parse_strict_json(in);
  } catch (const json::exception& e) { // a syntax error, or a number past double (1e999)
    throw InputError(path.string() + ": malformed JSON (" + e.what() + ")");
  } catch (const InputError& e) { // a duplicate key
    throw InputError(path.string() + ": " + e.what());
  }
  try {
    return convert(document);
  } catch (const InputError& e) {
    throw InputError(path.string() + ": " + e.what());
  }
}

} // namespace cachewise::detail
