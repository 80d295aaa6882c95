// cachewise::model — the device profile (the contract between probe and model), the shared
// Config / ProblemSpec vocabulary, access-pattern description and the simulator. An umbrella
// over the one-concept headers below; include those directly to depend on less.
// Plain C++20: nothing here needs CUDA at build or run time.
#pragma once

#include "cachewise/calibration.hpp"
#include "cachewise/errors.hpp"
#include "cachewise/families.hpp"
#include "cachewise/occupancy.hpp"
#include "cachewise/pattern.hpp"
#include "cachewise/prediction.hpp"
#include "cachewise/problem.hpp"
#include "cachewise/profile.hpp"
#include "cachewise/simulation.hpp"
