// cachewise::advisor — candidate spaces per family, device-limit filtering, ranking by the
// model's predicted time, and a one-line reason per candidate. Plain C++, no GPU needed.
#pragma once

#include "cachewise/model.hpp"

namespace cachewise::advisor {} // namespace cachewise::advisor
