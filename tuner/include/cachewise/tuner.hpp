// cachewise::tuner — build-time autotuning over advisor-ranked candidates, timer injected.
#pragma once

#include "cachewise/advisor.hpp"

namespace cachewise::tuner {} // namespace cachewise::tuner
