// Simulator counts against expectations derived by hand from the access patterns.
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cachewise/model.hpp"
#include "../../model/src/pattern/pattern_builders.hpp"

namespace cachewise {
namespace {

using pattern_builders::affine;
using pattern_builders::loop;
using V = IndexVar;

DeviceProfile example_profile() { return load_profile(CACHEWISE_EXAMPLE_PROFILE); }

SimulationOptions exact() {
  SimulationOptions options;
  options.work_budget = 0;
  return options;
}

Prediction run(const ProblemSpec& problem, const std::string& config,
               const DeviceProfile& profile = example_profile()) {
  return simulate(build_pattern(problem, Config::parse(config)), profile, exact());
}

constexpr const char* kLoadRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
constexpr const char* kStoreRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
constexpr const char* kLoadSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
constexpr const char* kStoreSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
constexpr const char* kSharedLoadWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
constexpr const char* kSharedStoreWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
constexpr const char* kSharedLoadConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
constexpr const char* kSharedStoreConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";

TEST(Simulate, DirectTransposeWritesOneSectorPerLane) {
  // n=256 f32: every warp instruction covers 32 consecutive floats of one row of `in`
  // (one 128 B line = 4 sectors) and 32 different rows of `out` (32 lines, one sector each).
  const Prediction p = run({"transpose", 256}, "smem=0,tile=32,block_x=32,block_y=8");
  const double instructions = 256.0 * 256.0 / 32.0;
  EXPECT_EQ(p.metric(kLoadRequests), instructions);
  EXPECT_EQ(p.metric(kLoadSectors), instructions * 4);
  EXPECT_EQ(p.metric(kStoreRequests), instructions);
  EXPECT_EQ(p.metric(kStoreSectors), instructions * 32);
  EXPECT_EQ(p.metric("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio"), 32.0);
  EXPECT_EQ(p.metric(kSharedLoadWavefronts), 0.0);
  // Each byte is read once and written once: DRAM moves exactly the two matrices.
  EXPECT_EQ(p.metric("dram__bytes_read.sum"), 256.0 * 256 * 4);
  EXPECT_EQ(p.metric("dram__bytes_write.sum"), 256.0 * 256 * 4);
}

TEST(Simulate, SharedTransposeWithoutPadHas31ExtraWavefrontsPerColumnRead) {
  // n=64: 4 blocks x 8 warps x 4 row steps = 128 column reads of a 32x32 f32 tile; with row
  // pitch 32 words all 32 lanes hit one bank -> 32 wavefronts, 31 of them conflicts.
  const Prediction p = run({"transpose", 64}, "smem=1,tile=32,block_x=32,block_y=8,pad=0");
  EXPECT_EQ(p.metric(kSharedLoadWavefronts), 128.0 * 32);
  EXPECT_EQ(p.metric(kSharedLoadConflicts), 128.0 * 31);
  EXPECT_EQ(p.metric(kSharedStoreWavefronts), 128.0);
  EXPECT_EQ(p.metric(kSharedStoreConflicts), 0.0);
  // Both global sides are row accesses now: 4 sectors per request.
  EXPECT_EQ(p.metric(kStoreSectors), 128.0 * 4);
}

TEST(Simulate, SharedTransposeWithPadOneHasNoConflicts) {
  const Prediction p = run({"transpose", 64}, "smem=1,tile=32,block_x=32,block_y=8,pad=1");
  EXPECT_EQ(p.metric(kSharedLoadWavefronts), 128.0);
  EXPECT_EQ(p.metric(kSharedLoadConflicts), 0.0);
  EXPECT_EQ(p.metric(kSharedStoreConflicts), 0.0);
}

TEST(Simulate, Float64ColumnReadsAreServedPerHalfWarp) {
  // f64, tile 16, block 16x16: a warp is 2 thread rows of 16 lanes; 8-byte accesses are served
  // per half-warp, i.e. per thread row (fixed ty). Column read buf[tx][ty]:
  //  pad=0: pitch 16 doubles = 32 words, lane tx touches words 32*tx + 2*ty (+1): all 16 lanes
  //         in banks 2*ty and 2*ty+1 -> 16 wavefronts per half-warp, 15 of them conflicts;
  //  pad=1: pitch 34 words -> banks (2*tx + 2*ty) mod 32 (+1), distinct for 16 lanes -> 1.
  const ProblemSpec problem{"transpose", 16, 0, 0, DataType::f64};
  const double halves = 8 * 2; // 1 block x 8 warps x 1 step, 2 half-warps each
  const Prediction unpadded = run(problem, "smem=1,tile=16,block_x=16,block_y=16,pad=0");
  EXPECT_EQ(unpadded.metric(kSharedLoadWavefronts), halves * 16);
  EXPECT_EQ(unpadded.metric(kSharedLoadConflicts), halves * 15);
  const Prediction padded = run(problem, "smem=1,tile=16,block_x=16,block_y=16,pad=1");
  EXPECT_EQ(padded.metric(kSharedLoadWavefronts), halves);
  EXPECT_EQ(padded.metric(kSharedLoadConflicts), 0.0);
}

TEST(Simulate, UnitStrideCopyHasFourSectorsPerRequest) {
  const Prediction p = run({"copy", 1 << 16}, "block=256,vector=1,ept=1");
  EXPECT_EQ(p.metric(kLoadRequests), (1 << 16) / 32.0);
  EXPECT_EQ(p.metric("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"), 4.0);
  EXPECT_EQ(p.metric("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio"), 4.0);
  EXPECT_EQ(p.metric("l1tex__t_sector_hit_rate.pct"), 0.0);
}

TEST(Simulate, VectorFourCopyIsOneRequestOfSixteenSectorsPerInstruction) {
  // 32 lanes x 16 B = 512 B = 4 lines, 16 sectors, in one request.
  const Prediction p = run({"copy", 1 << 16}, "block=256,vector=4,ept=2");
  EXPECT_EQ(p.metric(kLoadRequests), (1 << 16) / 128.0);
  EXPECT_EQ(p.metric(kLoadSectors), (1 << 16) / 8.0);
  EXPECT_EQ(p.metric("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"), 16.0);
}

TEST(Simulate, StridedCopyReadsOneSectorPerElement) {
  // stride 16 floats = 64 B: each element lies in its own sector and its own 64 B DRAM
  // granule, so DRAM reads 64 B per 4-byte element.
  const Prediction p = run({"copy", 1 << 14}, "block=128,vector=1,ept=1,stride=16");
  EXPECT_EQ(p.metric(kLoadSectors), (1 << 14) * 1.0);
  EXPECT_EQ(p.metric(kStoreSectors), (1 << 14) / 8.0);
  EXPECT_EQ(p.metric("dram__bytes_read.sum"), (1 << 14) * 64.0);
  // stride 8 (32 B): two neighbouring elements share a granule, 32 B per element.
  const Prediction q = run({"copy", 1 << 14}, "block=128,vector=1,ept=1,stride=8");
  EXPECT_EQ(q.metric("dram__bytes_read.sum"), (1 << 14) * 32.0);
}

/// One thread of one block loads x[i * stride] for i in [0, count), then x[0] again.
KernelPattern single_thread_walk(std::int64_t stride_elements, std::int64_t count) {
  KernelPattern pattern;
  pattern.name = "walk";
  pattern.grid = {1, 1, 1};
  pattern.block = {1, 1, 1};
  pattern.arrays = {{"x", MemorySpace::global, 4, {stride_elements * (count + 1)}}};
  pattern.phases.push_back({{{"i", 0, count, 1}}, {{"x", false, {affine(0, {}, {{"i", stride_elements}})}}}});
  pattern.phases.push_back({{}, {{"x", false, {affine(0)}}}});
  return pattern;
}

/// An L1 of a single 4-way set, so any 5 lines compete for it.
DeviceProfile small_l1_profile() {
  DeviceProfile profile = example_profile();
  profile.l1.capacity_bytes.value = 4 * 128;
  profile.l1.capacity_max_carveout_bytes.reset();
  profile.l1.ways->value = 4;
  profile.l1.replacement.policy = ReplacementPolicy::lru;
  return profile;
}

TEST(Simulate, FiveLinesInOneFourWaySetEvictTheFirstUnderLru) {
  const std::int64_t line_stride = 128 / 4; // in floats
  const Prediction evicted = simulate(single_thread_walk(line_stride, 5), small_l1_profile(), exact());
  EXPECT_EQ(evicted.metric("l1tex__t_sector_hit_rate.pct"), 0.0);
  const Prediction kept = simulate(single_thread_walk(line_stride, 4), small_l1_profile(), exact());
  EXPECT_DOUBLE_EQ(kept.metric("l1tex__t_sector_hit_rate.pct"), 100.0 / 5.0);
}

TEST(Simulate, FifoEvictsTheOldestInsertionEvenWhenJustUsed) {
  // Lines 0,1,2,3, then 0 again (hit), then line 4 (evicts: LRU line 1, FIFO line 0), then 0.
  KernelPattern pattern = single_thread_walk(128 / 4, 4);
  const AffineIndex line_four = affine(4 * 128 / 4);
  pattern.phases.push_back({{}, {{"x", false, {line_four}}}});
  pattern.phases.push_back({{}, {{"x", false, {affine(0)}}}});
  DeviceProfile lru = small_l1_profile();
  EXPECT_DOUBLE_EQ(simulate(pattern, lru, exact()).metric("l1tex__t_sector_hit_rate.pct"), 100.0 * 2 / 7);
  DeviceProfile fifo = small_l1_profile();
  fifo.l1.replacement.policy = ReplacementPolicy::fifo;
  EXPECT_DOUBLE_EQ(simulate(pattern, fifo, exact()).metric("l1tex__t_sector_hit_rate.pct"), 100.0 * 1 / 7);
}

TEST(Simulate, StoresWithoutL2AllocationGoStraightToDram) {
  // 32 lanes write 4 whole sectors per line, 16 lines; nothing is cached, so every store
  // sector misses in L2 and is written to DRAM at once.
  KernelPattern pattern;
  pattern.name = "stream_out";
  pattern.block = {32, 1, 1};
  pattern.arrays = {{"y", MemorySpace::global, 4, {16 * 32}}};
  pattern.phases.push_back({{{"i", 0, 16, 1}}, {{"y", true, {affine(0, {{V::thread_x, 1}}, {{"i", 32}})}}}});
  DeviceProfile profile = example_profile();
  profile.l2.allocates_on_store.value = false;
  profile.l2.partitions = 1; // far-partition accounting is tested in l2_store_accounting_test.cpp
  const Prediction p = simulate(pattern, profile, exact());
  EXPECT_EQ(p.metric("lts__t_sectors_op_write.sum"), 64.0);
  EXPECT_EQ(p.metric("lts__t_sector_hit_rate.pct"), 0.0);
  EXPECT_EQ(p.metric("dram__bytes_write.sum"), 64.0 * 32);
}

TEST(Simulate, PartialSectorStoresAreMergedByADramRead) {
  // One thread writes 4 bytes into each of 16 separate lines: 16 partial sectors, each written
  // back (32 B) after a 32 B read for the merge. A full warp writing 32 consecutive floats
  // covers 4 whole sectors: no merge read.
  KernelPattern partial;
  partial.name = "partial";
  partial.block = {1, 1, 1};
  partial.arrays = {{"y", MemorySpace::global, 4, {16 * 32}}};
  partial.phases.push_back({{{"i", 0, 16, 1}}, {{"y", true, {affine(0, {}, {{"i", 32}})}}}});
  DeviceProfile one_partition = example_profile(); // far-partition accounting: l2_store_accounting_test.cpp
  one_partition.l2.partitions = 1;
  const Prediction p = simulate(partial, one_partition, exact());
  EXPECT_EQ(p.metric("lts__t_sectors_op_write.sum"), 16.0);
  EXPECT_EQ(p.metric("lts__t_sector_hit_rate.pct"), 100.0); // stores allocate: they count as hits
  EXPECT_EQ(p.metric("dram__bytes_write.sum"), 16.0 * 32);
  EXPECT_EQ(p.metric("dram__bytes_read.sum"), 16.0 * 32);

  KernelPattern full = partial;
  full.block = {32, 1, 1};
  full.phases[0].accesses[0].index = {affine(0, {{V::thread_x, 1}}, {{"i", 32}})};
  const Prediction q = simulate(full, one_partition, exact());
  EXPECT_EQ(q.metric("lts__t_sectors_op_write.sum"), 16.0 * 4);
  EXPECT_EQ(q.metric("dram__bytes_write.sum"), 16.0 * 128);
  EXPECT_EQ(q.metric("dram__bytes_read.sum"), 0.0);
}

/// Blocks 0 and 1 (SMs 0 and 1) both read the same `lines` 128 B lines, block 0 first.
KernelPattern two_sms_read_the_same_lines(std::int64_t lines) {
  KernelPattern pattern;
  pattern.name = "shared_reads";
  pattern.grid = {2, 1, 1};
  pattern.block = {32, 1, 1};
  pattern.arrays = {{"x", MemorySpace::global, 4, {lines * 32}}};
  pattern.phases.push_back({{{"i", 0, lines, 1}}, {{"x", false, {affine(0, {{V::thread_x, 1}}, {{"i", 32}})}}}});
  return pattern;
}

TEST(Simulate, FarPartitionLookupsCountTwiceInTheL2HitRate) {
  // Per sector, whatever its home: SM 0 and SM 1 have different near partitions, so one of
  // them reads it from a far home (near lookup + far lookup) and the other at its home.
  // SM 0 goes first and misses everywhere; SM 1 then hits on its last lookup.
  // -> 3 lookups and 1 hit per sector; DRAM reads each line once.
  const std::int64_t lines = 64;
  const Prediction p = simulate(two_sms_read_the_same_lines(lines), example_profile(), exact());
  EXPECT_EQ(p.metric("lts__t_sectors_op_read.sum"), lines * 4 * 3.0);
  EXPECT_DOUBLE_EQ(p.metric("lts__t_sector_hit_rate.pct"), 100.0 / 3.0);
  EXPECT_EQ(p.metric("dram__bytes_read.sum"), lines * 128.0);

  // One partition: no far lookups, 2 lookups and 1 hit per sector.
  DeviceProfile single = example_profile();
  single.l2.partitions = 1;
  const Prediction q = simulate(two_sms_read_the_same_lines(lines), single, exact());
  EXPECT_EQ(q.metric("lts__t_sectors_op_read.sum"), lines * 4 * 2.0);
  EXPECT_DOUBLE_EQ(q.metric("lts__t_sector_hit_rate.pct"), 50.0);
}

/// The example profile with a measured placement: block i of a wave on SM i, whose near
/// partition is `side(i)`.
template <typename Side>
DeviceProfile placed(Side side) {
  DeviceProfile profile = example_profile();
  SmPlacement placement;
  for (int sm = 0; sm < profile.device.sm_count; ++sm) {
    placement.dispatch_sm_ids.push_back(sm);
    placement.near_partition_by_sm.push_back(side(sm));
  }
  profile.l2.sm_placement = placement;
  return profile;
}

TEST(Simulate, BlocksOnTheSameNearPartitionShareItsCopyOfAFarLine) {
  // Both blocks near partition p. A line homed at p: SM 0 misses once, SM 1 hits once (2 lookups
  // per sector). A line homed elsewhere: SM 0 misses near and at home and leaves a near copy,
  // SM 1 hits that copy (3). Every line is homed at one side, so the totals over p = 0 and p = 1
  // make 5 lookups per sector, each placement with 1 hit per sector.
  const std::int64_t lines = 64;
  const double sectors = lines * 4.0;
  const Prediction on_0 = simulate(two_sms_read_the_same_lines(lines), placed([](int) { return 0; }), exact());
  const Prediction on_1 = simulate(two_sms_read_the_same_lines(lines), placed([](int) { return 1; }), exact());
  const double lookups_0 = on_0.metric("lts__t_sectors_op_read.sum");
  const double lookups_1 = on_1.metric("lts__t_sectors_op_read.sum");
  EXPECT_EQ(lookups_0 + lookups_1, 5.0 * sectors);
  EXPECT_GT(lookups_0, 2.0 * sectors); // the hash homes some lines on each side
  EXPECT_GT(lookups_1, 2.0 * sectors);
  EXPECT_DOUBLE_EQ(on_0.metric("lts__t_sector_hit_rate.pct"), 100.0 * sectors / lookups_0);
  EXPECT_EQ(on_0.metric("dram__bytes_read.sum"), lines * 128.0);

  // A placement that alternates sides is the default's (block i near partition i % 2): 3 each.
  const Prediction alternating =
      simulate(two_sms_read_the_same_lines(lines), placed([](int sm) { return sm % 2; }), exact());
  EXPECT_EQ(alternating.metric("lts__t_sectors_op_read.sum"), 3.0 * sectors);
  // The dispatch order decides which SM's side a block gets. Only the last SM is near to
  // partition 1: blocks dealt to SMs 0 and 1 share partition 0 (as on_0), blocks dealt to the
  // last two SMs (ids in reverse) do not.
  const int last_sm = example_profile().device.sm_count - 1;
  DeviceProfile last_differs = placed([last_sm](int sm) { return sm == last_sm ? 1 : 0; });
  EXPECT_EQ(simulate(two_sms_read_the_same_lines(lines), last_differs, exact()).metric("lts__t_sectors_op_read.sum"),
            lookups_0);
  std::ranges::reverse(last_differs.l2.sm_placement->dispatch_sm_ids);
  const Prediction split = simulate(two_sms_read_the_same_lines(lines), last_differs, exact());
  EXPECT_EQ(split.metric("lts__t_sectors_op_read.sum"), 3.0 * sectors);
}

TEST(Simulate, StencilWithSharedTileReadsEachInputSectorOnce) {
  // 2D star stencil radius 1 on 256x256 f32, 32x8 blocks: the smem version loads each tile
  // (with halo) once, the direct version issues 5 loads per point.
  const Prediction direct = run({"stencil2d", 256}, "radius=1,block_x=32,block_y=8,ept_y=1,smem=0");
  const Prediction tiled = run({"stencil2d", 256}, "radius=1,block_x=32,block_y=8,ept_y=1,smem=1");
  EXPECT_GT(direct.metric(kLoadRequests), 4.0 * tiled.metric(kLoadRequests) / 2.0);
  EXPECT_GT(tiled.metric(kSharedLoadWavefronts), 0.0);
  // Interior rows/cols only: (256-2) rows x (256-2) points stored.
  EXPECT_EQ(direct.metric("dram__bytes_write.sum"), tiled.metric("dram__bytes_write.sum"));
}

TEST(Simulate, VectorStencil2dMovesFourPointsPerAccessWithScalarEdges) {
  // 256x256 f32, radius 1, vector 4, one warp per block covering 128 columns (2 blocks per
  // row), 254 interior rows. Per warp-row: 5 load requests (centre, x0-1, x0+4, up, down).
  // Sectors per warp-row: each 512 B row vector 16; x0-1 (elements 4t-1) 16 in block 0 (lane
  // 0 has none) and 17 in block 1 (127..251); x0+4 17 in block 0 (4..128), 16 in block 1
  // (lane 31's 256 is outside) -> 81 per warp-row. Stores per row: one vector store per warp
  // (16 sectors each) and the edge vectors' scalar stores of points 1-3 and 252-254 (3 + 3
  // requests, one sector each).
  const Prediction p = run({"stencil2d", 256}, "radius=1,block_x=32,block_y=1,ept_y=1,smem=0,vector=4");
  const Prediction scalar = run({"stencil2d", 256}, "radius=1,block_x=32,block_y=1,ept_y=1,smem=0");
  EXPECT_EQ(p.metric(kLoadRequests), 254.0 * 2 * 5);
  EXPECT_EQ(p.metric(kLoadSectors), 254.0 * 162);
  EXPECT_EQ(p.metric(kStoreRequests), 254.0 * 8);
  EXPECT_EQ(p.metric(kStoreSectors), 254.0 * 38);
  EXPECT_EQ(scalar.metric(kLoadRequests), 254.0 * 8 * 5);
  // The same points are written and the same input is read.
  EXPECT_EQ(p.metric("dram__bytes_write.sum"), scalar.metric("dram__bytes_write.sum"));
  EXPECT_EQ(p.metric("dram__bytes_read.sum"), scalar.metric("dram__bytes_read.sum"));
}

TEST(Simulate, VectorStencil3dStreamingCountsPerPlane) {
  // 16 planes x 16 rows x 128 columns f32, mode 1, vector 4, block 32x1 (one warp = one row
  // of 128 columns), z_chunk 8 (2 chunks), 14 interior rows. Per row: before the planes, the
  // centre vector of both chunks and z0-1 of the second (chunk 0's is outside) = 3 requests;
  // in[z+1] for z in [0, 15) = 15; for the 14 interior planes x0-1, x0+4, y-1, y+1 = 56.
  // Stores per interior plane: one vector store of the whole row (the border points 0 and 127
  // carry their centre): 1 request of 512 B = 16 sectors.
  const Prediction p = run({"stencil3d", 16, 128, 16}, "mode=1,block_x=32,block_y=1,z_chunk=8,vector=4");
  EXPECT_EQ(p.metric(kLoadRequests), 14.0 * (3 + 15 + 56));
  EXPECT_EQ(p.metric(kStoreRequests), 14.0 * 14);
  EXPECT_EQ(p.metric(kStoreSectors), 14.0 * 14 * 16);
  // The scalar kernel writes the same whole rows (4 warps of 32 points per row), so no sector
  // is written in part and DRAM reads nothing but the input the taps touch: all of it except
  // rows 0 and 15 of planes 0 and 15 (no interior point's tap), 16 x 16 x 512 - 4 x 512 bytes.
  const Prediction scalar = run({"stencil3d", 16, 128, 16}, "mode=1,block_x=32,block_y=1,z_chunk=8");
  EXPECT_EQ(scalar.metric(kStoreRequests), 14.0 * 14 * 4);
  EXPECT_EQ(scalar.metric(kStoreSectors), 14.0 * 14 * 16);
  EXPECT_EQ(p.metric("dram__bytes_write.sum"), scalar.metric("dram__bytes_write.sum"));
  EXPECT_EQ(p.metric("dram__bytes_write.sum"), 14.0 * 14 * 128 * 4);
  EXPECT_EQ(scalar.metric("dram__bytes_read.sum"), (16.0 * 16 - 4) * 128 * 4);
  // Load sectors per interior row (4 warps of 32 floats): the chunks' first centres and z0-1
  // of the second chunk 3 x 16; in[z+1] 15 x 16; per interior plane y-1, y+1 2 x 16 and x-1,
  // x+1 2 x 4 x 5: the kernel indexes flat, so x-1 of x = 0 (the row before's last point) and
  // x+1 of x = 127 load too, and each warp's x-shifted taps span 5 sectors (kernels/src/stencil3d.cu).
  EXPECT_EQ(scalar.metric(kLoadSectors), 14.0 * (3 * 16 + 15 * 16 + 14 * (2 * 16 + 2 * 4 * 5)));
}

/// An L1 of one 5-way LRU set that allocates on stores; one L2 partition, sector fetches.
DeviceProfile five_line_l1_profile() {
  DeviceProfile profile = example_profile();
  profile.l1.capacity_bytes.value = 5 * 128;
  profile.l1.capacity_max_carveout_bytes.reset();
  profile.l1.ways->value = 5;
  profile.l1.replacement.policy = ReplacementPolicy::lru;
  profile.l1.allocates_on_store.value = true;
  profile.l2.partitions = 1;
  profile.dram.fetch_granularity_bytes.reset();
  return profile;
}

TEST(Simulate, BatchedStencil3dStreamingLoadsEightPlanesBeforeTheirStores) {
  // 8 planes x 3 rows x 32 columns f32, mode 1, block 32x1, one chunk: one warp (row y = 1)
  // walks the planes. Lines: A_z, B_z, C_z the rows 0, 1, 2 of `in` at plane z, O_z row 1 of
  // `out`. Per interior plane z (1..6): in[z+1] = B_{z+1} (4 sectors), x+1 = B_z + C_z's
  // sector 0, x-1 = A_z's sector 3 + B_z, y-1 = A_z, y+1 = C_z (22 sectors), then O_z
  // stored. Before the planes B_0; z = 0 loads only in[1] = B_1. 140 load sectors, 80 of them
  // distinct, 6 x 4 store sectors. The L1 keeps 5 lines (LRU) and allocates on stores.
  // z_chunk 8 (batched: z = 0..7's loads, f32 order: x+1, x-1, y-1, y+1 of z = 0, then per
  // z in[z+1] and its taps, in[1] last; then the stores): B_{z+1} is loaded, then A_z, B_z,
  // C_z and B_{z+2}, and is used next (5 lines): per plane z in 2..6, x+1 hits B_z (4),
  // x-1 B_z (4), y-1 A_z's sector 3 and y+1 C_z's sector 0: 10; plane 1 only 6 (its x+1 is
  // B_1's first load: z = 0's in[z+1] comes last in the batch, and misses again there):
  // L2 read lookups 84 (80 cold misses + 4 hits).
  const DeviceProfile profile = five_line_l1_profile();
  const ProblemSpec volume{"stencil3d", 3, 32, 8};
  const Prediction batched = run(volume, "mode=1,block_x=32,block_y=1,z_chunk=8", profile);
  EXPECT_EQ(batched.metric(kLoadSectors), 140.0);
  EXPECT_EQ(batched.metric(kStoreSectors), 24.0);
  EXPECT_DOUBLE_EQ(batched.metric("l1tex__t_sector_hit_rate.pct"), 100.0 * (6 + 5 * 10) / (140 + 24));
  EXPECT_EQ(batched.metric("lts__t_sectors_op_read.sum"), 84.0);
  // Stores allocate in L2: every store sector is a hit.
  EXPECT_DOUBLE_EQ(batched.metric("lts__t_sector_hit_rate.pct"), 100.0 * (4 + 24) / (84 + 24));
  EXPECT_EQ(batched.metric("dram__bytes_read.sum"), 80.0 * 32);
  // z_chunk 9 (plane by plane: in[z+1], x-1, x+1, y-1, y+1, store; planes 7 and 8 load in[8]
  // and beyond, outside the volume): between B_{z+1}'s load and its use at plane z+1 come
  // A_z, B_z, C_z, O_z, B_{z+2} and A_{z+1}, 6 lines, so planes 2..6 load B_z again from L2
  // (5 x 4 read hits) and hit only x+1's B_z, A_z's and C_z's one sector: 6; plane 1 10.
  const Prediction planes = run(volume, "mode=1,block_x=32,block_y=1,z_chunk=9", profile);
  EXPECT_EQ(planes.metric(kLoadSectors), 140.0);
  EXPECT_DOUBLE_EQ(planes.metric("l1tex__t_sector_hit_rate.pct"), 100.0 * (10 + 5 * 6) / (140 + 24));
  EXPECT_EQ(planes.metric("lts__t_sectors_op_read.sum"), 100.0);
  EXPECT_DOUBLE_EQ(planes.metric("lts__t_sector_hit_rate.pct"), 100.0 * (20 + 24) / (100 + 24));
  EXPECT_EQ(planes.metric("dram__bytes_read.sum"), 80.0 * 32);
}

TEST(Simulate, BlockedStencil3dBorderLanesLoadTheirCentreAlone) {
  // 16 planes x 16 rows x 128 columns f32, mode 0, block 32x1x1: 4 warps per row, 14 x 14
  // interior rows. The compiled kernel branches: the interior lanes x in [1, 127) load the 7
  // taps, then the border lanes x = 0, 127 their centre in one load of its own. Warp 0 (x 0..31):
  // x+1 of x = 1..31 spans 5 sectors, x-1 (x = 0..30) and the other 5 taps 4 each, the border
  // centre 1 sector: 8 requests, 30 sectors; warp 3 likewise (x-1 5 sectors); warps 1 and 2
  // have no border lane: 7 requests, 5 + 5 + 5 x 4 = 30 sectors. Per row 30 requests, 120
  // sectors (every lane loading the 7 taps in one set would give 28 and 118).
  const Prediction p = run({"stencil3d", 16, 128, 16}, "mode=0,block_x=32,block_y=1,block_z=1");
  EXPECT_EQ(p.metric(kLoadRequests), 14.0 * 14 * 30);
  EXPECT_EQ(p.metric(kLoadSectors), 14.0 * 14 * 120);
  EXPECT_EQ(p.metric(kStoreRequests), 14.0 * 14 * 4);
  EXPECT_EQ(p.metric(kStoreSectors), 14.0 * 14 * 16);
  // 3 planes x 10 rows x 16 columns (64 B = 2 sectors a row), block 16x2: one warp covers two
  // rows and both borders of each. Blocks y = 1..3 hold two interior rows: each of the 7 loads
  // 4 sectors, and the 4 border points' centres are one load of 4 sectors (one instruction: 8
  // requests, not 9); blocks 0 and 4 one interior row (1 and 8): 8 requests, 7 x 2 + 2 sectors.
  const Prediction narrow = run({"stencil3d", 10, 16, 3}, "mode=0,block_x=16,block_y=2,block_z=1");
  EXPECT_EQ(narrow.metric(kLoadRequests), 3.0 * 8 + 2.0 * 8);
  EXPECT_EQ(narrow.metric(kLoadSectors), 3.0 * (7 * 4 + 4) + 2.0 * (7 * 2 + 2));
  // f16 (a warp's 32 points 64 B = 2 sectors): every lane loads the six neighbours before the
  // branch, x-1 of x = 0 the row before's last point and x+1 of x = 127 the next row's first,
  // so each x-shifted tap spans 3 sectors in every warp, the other four 2; then the interior
  // centre (2 sectors) and, in warps 0 and 3, the border centre (1): per row 4 x (3 + 3 + 4 x 2
  // + 2) + 2 x 1 = 66 sectors in 4 x 7 + 2 = 30 requests.
  const Prediction half = run({"stencil3d", 16, 128, 16, DataType::f16}, "mode=0,block_x=32,block_y=1,block_z=1");
  EXPECT_EQ(half.metric(kLoadRequests), 14.0 * 14 * 30);
  EXPECT_EQ(half.metric(kLoadSectors), 14.0 * 14 * 66);
}

TEST(Simulate, GemmBInnerLoopReadsBroadcastAcrossRows) {
  // bm=bn=32, tm=tn=2: 16x16 threads, warp = 2 thread rows. As[ty*2+i][kk]: lanes of one row
  // share an address (broadcast) and the two rows' addresses are 2*(bk+pad) words apart.
  // With bk=8, pad=0: words 0 and 16 -> banks 0 and 16: 1 wavefront, no conflict.
  const Prediction p = run({"gemm", 64}, "bm=32,bn=32,bk=8,tm=2,tn=2,pad=0");
  EXPECT_EQ(p.metric("dram__bytes_write.sum"), 64.0 * 64 * 4);
  EXPECT_GT(p.metric(kSharedLoadWavefronts), 0.0);
}

TEST(Simulate, GemmIssuesTwentyTileLoadsPerWarpPerKStep) {
  // bm=128, bn=32, bk=32, tm=tn=4: 8x32 = 256 threads (8 warps). Per k-step a thread loads
  // 128*32/256 = 16 A and 32*32/256 = 4 B elements: 20 loads, which the kernel issues as 5
  // batches of 4 and the time estimate as 5 rounds of 4 in flight. n=128: 4x1 blocks, 4 k-steps.
  const Prediction p = run({"gemm", 128}, "bm=128,bn=32,bk=32,tm=4,tn=4,pad=1");
  EXPECT_EQ(p.metric(kLoadRequests), 4.0 * 8 * 4 * 20);
}

// gemm 4x2 f32, pad 0, bk 16, 256^3 (8 x 4 blocks of 16 x 16 threads: 256 warps, 16 k-steps):
// a warp holds thread rows ty and ty+1, whose As rows (4ty + i) lie 4 * 16 words apart, in one
// bank. The compiled gemm_tiled<float, 4, 2> (its kernel facts) loads, per group of 4 kk, As
// row 0 as one 16-byte load (four 8-lane phases of one address: 4 wavefronts), row 2 as two
// 8-byte loads (two 16-lane phases each: 4), rows 1 and 3 as 8 scalars (two addresses in one
// bank: 2 wavefronts, 1 conflict each) and Bs as 8 scalars whose two half-warps read the
// same 16 words (1 wavefront): 32 wavefronts and 8 conflicts per group, 4 groups a k-step.
// One element per kk, as the source reads them, would be 40 and 16.
TEST(Simulate, GemmMergedFragmentLoadsConflictAsCompiled) {
  const Prediction p = run({"gemm", 256}, "bm=64,bn=32,bk=16,tm=4,tn=2,pad=0");
  const double groups = 256.0 * 16 * 4;
  EXPECT_EQ(p.metric(kSharedLoadConflicts), groups * 8);
  EXPECT_EQ(p.metric(kSharedLoadWavefronts), groups * 32);
  // bk 6, 192^3 (6 x 3 blocks, 32 k-steps): the thread rows' As rows lie 4 * 6 words apart, in
  // different banks (no conflicts). One group of 4 kk (4 + 4 + 8 As and 8 Bs wavefronts), then
  // the remainder loop's kk 4 and 5 one element each (4 As and 2 Bs wavefronts a kk).
  const Prediction rest = run({"gemm", 192}, "bm=64,bn=32,bk=6,tm=4,tn=2,pad=0");
  const double warp_k_steps = 6.0 * 3 * 8 * 32;
  EXPECT_EQ(rest.metric(kSharedLoadConflicts), 0.0);
  EXPECT_EQ(rest.metric(kSharedLoadWavefronts), warp_k_steps * (24 + 2 * 6));
}

TEST(Simulate, SharedMemoryOverTheLimitIsRejected) {
  try {
    run({"transpose", 4096}, "smem=1,tile=256,block_x=32,block_y=8,pad=1");
    FAIL() << "accepted a 263 KiB tile";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "pattern needs 263168 bytes of shared memory per block; the device allows 232448");
  }
}

// ----- loops that odd blocks walk backwards (Loop::reversed_where_odd) -----

/// single_thread_walk over lines 0..4 in two blocks (block_z = 0, 1), each on its own SM. In
/// small_l1_profile's L1 (one 4-way LRU set) walking up has evicted line 0 by the final load of
/// it; walking down loaded it last.
KernelPattern walk_then_line_zero(std::optional<IndexVar> reversed_where_odd) {
  KernelPattern pattern = single_thread_walk(128 / 4, 5);
  pattern.grid = {1, 1, 2};
  pattern.phases[0].loops[0].reversed_where_odd = reversed_where_odd;
  return pattern;
}

TEST(ReversedLoops, OddBlocksWalkTheLoopBackwards) {
  // 12 one-sector loads; only block 1's last load hits, and only when it walked down.
  const auto hit_rate = [](std::optional<IndexVar> reversed) {
    return simulate(walk_then_line_zero(reversed), small_l1_profile(), exact()).metric("l1tex__t_sector_hit_rate.pct");
  };
  EXPECT_EQ(hit_rate(std::nullopt), 0.0);
  EXPECT_DOUBLE_EQ(hit_rate(V::block_z), 100.0 / 12.0);
  // Both blocks have block_x = 0: neither is odd along x.
  EXPECT_EQ(hit_rate(V::block_x), 0.0);
}

TEST(ReversedLoops, OnlyABlockIndexOfAPhasesOwnLoopMayReverseIt) {
  KernelPattern by_thread = walk_then_line_zero(V::thread_x);
  try {
    simulate(by_thread, example_profile(), exact());
    FAIL() << "a loop reversed by thread_x was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "pattern.phases[0].loops[0].reversed_where_odd: expected block_x, block_y or block_z");
  }
  KernelPattern outer = walk_then_line_zero(std::nullopt);
  outer.phase_loops.push_back({loop("t", 2), 1, 1});
  outer.phase_loops[0].loop.reversed_where_odd = V::block_z;
  EXPECT_THROW(simulate(outer, example_profile(), exact()), InputError);
}

TEST(ReversedLoops, JsonNamesTheBlockIndexAndRejectsOtherNames) {
  const KernelPattern pattern = walk_then_line_zero(V::block_z);
  const nlohmann::json document = pattern_to_json(pattern);
  EXPECT_EQ(document["phases"][0]["loops"][0]["reversed_where_odd"], "block_z");
  EXPECT_EQ(pattern_from_json(document), pattern);
  nlohmann::json typo = document;
  typo["phases"][0]["loops"][0]["reversed_where_odd"] = "block_w";
  try {
    pattern_from_json(typo);
    FAIL() << "accepted block_w";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "pattern.phases[0].loops[0].reversed_where_odd: expected block_x, block_y or block_z, got 'block_w'");
  }
}

/// The same kernel with every chunk walking up: no loop reversed, no odd-chunk offsets.
KernelPattern walking_up(KernelPattern pattern) {
  for (Phase& phase : pattern.phases) {
    for (Loop& each : phase.loops) each.reversed_where_odd.reset();
    for (Access& access : phase.accesses) {
      for (AffineIndex& index : access.index) index.quotient_terms.clear();
    }
  }
  return pattern;
}

TEST(ReversedLoops, Stencil3dOddChunksWalkingDownReadEveryPlaneOnce) {
  // n=256 f32, 128x2-thread vector-2 blocks in 32-plane chunks: one wave, 8 chunks, 7
  // boundaries. Walking up, a chunk reads the two planes at its bottom boundary at its start
  // and the chunk below reads them at its end, 32 planes of the whole grid's traffic (128 MiB)
  // later, past the 60 MiB L2: both come from DRAM twice (14 planes; one allowed for blocks that
  // do not start together). With the odd chunks walking down, the two chunks at a boundary read
  // its planes in the same iteration: every plane once.
  const double plane_bytes = 256.0 * 256 * 4;
  const double input_bytes = 256 * plane_bytes;
  const KernelPattern down =
      build_pattern({"stencil3d", 256}, Config::parse("mode=1,block_x=128,block_y=2,vector=2,z_chunk=32"));
  ASSERT_EQ(down.grid.count(), 1024); // within one wave of 132 SMs x 8 blocks
  const auto dram_read = [&](const KernelPattern& pattern) {
    return simulate(pattern, example_profile(), exact()).metric("dram__bytes_read.sum");
  };
  // Rows 0 and n-1 of planes 0 and k-1 (4 KiB) no thread loads.
  const double down_bytes = dram_read(down);
  EXPECT_LE(down_bytes, input_bytes);
  EXPECT_GE(down_bytes, input_bytes - 4 * 256 * 4);
  const double up = dram_read(walking_up(down));
  EXPECT_GE(up, input_bytes + 13 * plane_bytes);
  EXPECT_LE(up, input_bytes + 14 * plane_bytes);
}

} // namespace
} // namespace cachewise
