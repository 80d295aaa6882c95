// cachewise::model — the device profile (the contract between probe and model), the shared
// Config / ProblemSpec vocabulary, access-pattern description, the simulator and its time model,
// and the built-in families. An umbrella over the one-concept headers below, room by room
// (docs/architecture.md); include those directly to depend on less.
// Plain C++20: nothing here needs CUDA at build or run time.
#pragma once

#include "cachewise/model/errors.hpp"
#include "cachewise/model/problem.hpp"
#include "cachewise/model/search_space.hpp"
#include "cachewise/model/pattern/pattern.hpp"
#include "cachewise/model/profile/bundled_profiles.hpp"
#include "cachewise/model/profile/calibration.hpp"
#include "cachewise/model/profile/device_profile.hpp"
#include "cachewise/model/profile/profile_files.hpp"
#include "cachewise/model/profile/profile_json.hpp"
#include "cachewise/model/profile/sm_placement.hpp"
#include "cachewise/model/timing/gpu_architecture.hpp"
#include "cachewise/model/timing/prediction.hpp"
#include "cachewise/model/simulation/occupancy.hpp"
#include "cachewise/model/simulation/simulation.hpp"
#include "cachewise/model/families/families.hpp"
#include "cachewise/model/families/family_search_space.hpp"
