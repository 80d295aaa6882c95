// cachewise::family_search_space — the candidate space the advisor ranks for a built-in family.
#pragma once

#include "cachewise/model/problem.hpp"
#include "cachewise/model/profile/device_profile.hpp"
#include "cachewise/model/search_space.hpp"

namespace cachewise {

/// The advisor's candidate space for a family (docs/advisor.md lists the values): tile sizes,
/// pads, block shapes, elements per thread, vector widths. `fixed` pins keys to one value
/// (e.g. copy's `stride`, stencil2d's `radius`); an unknown key throws InputError. The only
/// constraints are the advisor's own search policy (whole warps, no duplicate configs);
/// family rules and device limits are left to build_pattern and check_fits_device.
SearchSpace family_search_space(const ProblemSpec& problem, const DeviceProfile& profile, const Config& fixed = {});

} // namespace cachewise
