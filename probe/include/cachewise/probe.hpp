// cachewise::probe — microbenchmarks that measure a GPU's cache model, curve analysis, and
// profile assembly.
#pragma once

#include "cachewise/model.hpp"

namespace cachewise::probe {} // namespace cachewise::probe
