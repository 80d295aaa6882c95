// cachewise::advisor::describe — a problem named in one line, as tables, titles and errors show it.
#pragma once

#include <string>

#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// "transpose n=4096 f32", with m and k only when set.
std::string describe(const ProblemSpec& problem);

} // namespace cachewise::advisor
