// cachewise::advisor::family_search_space — the advisor's candidate space for a built-in family.
#pragma once

#include "cachewise/advisor/search_space.hpp"
#include "cachewise/model.hpp"

namespace cachewise::advisor {

/// The advisor's candidate space for a family (docs/advisor.md lists the values): tile sizes,
/// pads, block shapes, elements per thread, vector widths. `fixed` pins keys to one value
/// (e.g. copy's `stride`, stencil2d's `radius`); an unknown key throws InputError. The only
/// constraints are the advisor's own search policy (whole warps, no duplicate configs);
/// family rules and device limits are left to build_pattern and check_fits_device.
SearchSpace family_search_space(const ProblemSpec& problem, const DeviceProfile& profile, const Config& fixed = {});

} // namespace cachewise::advisor
