// Where a wave's blocks run, by near L2 partition (profile field l2.sm_placement).
#include "cachewise/model/profile/sm_placement.hpp"

namespace cachewise {

int near_partition_of_block(const SmPlacement& placement, std::int64_t block) {
  const auto sm = placement.dispatch_sm_ids[static_cast<std::size_t>(block) % placement.dispatch_sm_ids.size()];
  return placement.near_partition_by_sm[static_cast<std::size_t>(sm)];
}

int neighbours_sharing_a_partition(const SmPlacement& placement) {
  int sharing = 0;
  for (std::size_t block = 0; block + 1 < placement.dispatch_sm_ids.size(); ++block) {
    const auto i = static_cast<std::int64_t>(block);
    sharing += near_partition_of_block(placement, i) == near_partition_of_block(placement, i + 1) ? 1 : 0;
  }
  return sharing;
}

} // namespace cachewise
