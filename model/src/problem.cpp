// Config ("key=value,...") and the small vocabulary types shared by every component.
#include <charconv>

#include "cachewise/model/problem.hpp"

namespace cachewise {

int element_bytes(DataType type) {
  switch (type) {
  case DataType::f32: return 4;
  case DataType::f64: return 8;
  case DataType::f16: return 2;
  }
  return 4;
}

std::string to_string(DataType type) {
  switch (type) {
  case DataType::f32: return "f32";
  case DataType::f64: return "f64";
  case DataType::f16: return "f16";
  }
  return "f32";
}

DataType parse_data_type(std::string_view text) {
  for (DataType type : {DataType::f32, DataType::f64, DataType::f16}) {
    if (text == to_string(type)) return type;
  }
  throw InputError("unknown dtype '" + std::string(text) + "' (valid: f32, f64, f16)");
}

namespace {
std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}
} // namespace

Config Config::parse(std::string_view text) {
  Config config;
  if (trim(text).empty()) return config;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = trim(text.substr(start, comma == std::string_view::npos ? text.npos : comma - start));
    const std::size_t equals = item.find('=');
    if (item.empty() || equals == std::string_view::npos) {
      throw InputError("config: expected key=value, got '" + std::string(item) + "'");
    }
    const std::string key(trim(item.substr(0, equals)));
    const std::string_view value_text = trim(item.substr(equals + 1));
    if (key.empty()) throw InputError("config: empty key in '" + std::string(item) + "'");
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
    if (error == std::errc::result_out_of_range) {
      throw InputError("config: value of '" + key + "' is out of range: '" + std::string(value_text) + "'");
    }
    if (error != std::errc() || end != value_text.data() + value_text.size() || value_text.empty()) {
      throw InputError("config: value of '" + key + "' must be an integer, got '" + std::string(value_text) + "'");
    }
    if (config.has(key)) throw InputError("config: duplicate key '" + key + "'");
    config.set(key, value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return config;
}

bool Config::has(std::string_view key) const { return values_.find(key) != values_.end(); }

std::int64_t Config::get(std::string_view key) const {
  const auto found = values_.find(key);
  if (found == values_.end()) throw InputError("config: missing key '" + std::string(key) + "'");
  return found->second;
}

std::int64_t Config::get_or(std::string_view key, std::int64_t fallback) const {
  const auto found = values_.find(key);
  return found == values_.end() ? fallback : found->second;
}

void Config::set_word(std::string key, std::int64_t index, std::string word) {
  values_[key] = index;
  words_[std::move(key)] = std::move(word);
}

const std::string* Config::word(std::string_view key) const {
  const auto found = words_.find(key);
  return found == words_.end() ? nullptr : &found->second;
}

std::string Config::text(std::string_view key) const {
  if (const std::string* shown = word(key)) return *shown;
  return std::to_string(get(key));
}

void Config::erase(std::string_view key) {
  if (const auto found = values_.find(key); found != values_.end()) values_.erase(found);
  if (const auto found = words_.find(key); found != words_.end()) words_.erase(found);
}

std::string Config::to_string() const {
  std::string out;
  for (const auto& [key, value] : values_) {
    if (!out.empty()) out += ',';
    out += key + '=' + text(key);
  }
  return out;
}

void check_family_name(std::string_view name) {
  for (std::string_view known : kFamilyNames) {
    if (known == name) return;
  }
  std::string valid;
  for (std::string_view known : kFamilyNames) valid += (valid.empty() ? "" : ", ") + std::string(known);
  throw InputError("unknown pattern '" + std::string(name) + "' (valid: " + valid + ")");
}

} // namespace cachewise
