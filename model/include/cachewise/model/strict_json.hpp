// Parsing JSON a user wrote (profiles, patterns, kernel specs, Kernel Tuner caches): a key given
// twice in one object is refused, where nlohmann (like Python) would keep the last silently, and
// so is nesting deeper than kMaxJsonDepth, which the recursive dump() of an error message
// could not print without overflowing the stack.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cachewise/model/errors.hpp"

namespace cachewise {

/// Objects and arrays nest at most this deep: clang's default bracket depth, far past any
/// file this project reads.
inline constexpr int kMaxJsonDepth = 256;

/// `input` (a stream or text) parsed as Json. Throws InputError "duplicate key 'l1.ways'" (the
/// key's path) or "nested deeper than 256 levels at 'a[0].b'"; a syntax error throws
/// nlohmann::json::parse_error, or gives a discarded value when `allow_exceptions` is false.
template <typename Json = nlohmann::json, typename Input>
Json parse_strict_json(Input&& input, bool allow_exceptions = true) {
  struct Open {
    bool object = true;
    std::set<std::string, std::less<>> keys;
    std::string key;       ///< the member being read (objects)
    std::size_t index = 0; ///< the element being read (arrays)
  };
  std::vector<Open> open;
  const auto path = [&open](std::size_t containers) {
    std::string text;
    for (std::size_t i = 0; i < containers; ++i) {
      if (open[i].object) {
        if (!text.empty()) text += '.';
        text += open[i].key;
      } else {
        text += '[';
        text += std::to_string(open[i].index);
        text += ']';
      }
    }
    return text;
  };
  using Event = typename Json::parse_event_t;
  const auto check = [&](int /*depth*/, Event event, Json& parsed) {
    switch (event) {
    case Event::object_start:
    case Event::array_start:
      if (open.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
        throw InputError("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels at '" + path(open.size()) +
                         "'");
      }
      open.push_back({event == Event::object_start, {}, {}, 0});
      break;
    case Event::key: {
      const auto& key = parsed.template get_ref<const std::string&>();
      if (!open.back().keys.insert(key).second) {
        const std::string outer = path(open.size() - 1);
        throw InputError("duplicate key '" + (outer.empty() ? key : outer + "." + key) + "'");
      }
      open.back().key = key;
      break;
    }
    case Event::object_end:
    case Event::array_end:
      open.pop_back();
      if (!open.empty() && !open.back().object) ++open.back().index;
      break;
    case Event::value:
      if (!open.empty() && !open.back().object) ++open.back().index;
      break;
    }
    return true;
  };
  return Json::parse(std::forward<Input>(input), check, allow_exceptions);
}

} // namespace cachewise
