// Stages: L1, L2 and DRAM bandwidths, copy shapes, spread writes.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <map>

#include "cachewise/kernels.hpp"
#include "probe_stages.hpp"

namespace cachewise::probe::detail {

/// L1 read bandwidth with enough loads in flight: one block of 1024 threads per SM, each thread
/// keeping 8 independent 16-byte ld.global.ca of its SM's own 32 KiB in flight. Bytes over CUDA-
/// event time, cross-checked by the bytes each block read over its own clock64 cycles at the SM
/// clock measured right after (both count only L1 hits: the set is read once before timing).
void Probe::l1_bandwidth() {
  const double target = quick() ? 16e9 : 64e9;
  const double per_iteration = static_cast<double>(gpu::kL1ReadUnroll) * gpu::kL1ReadThreads * 16.0 * sm_count();
  const int iterations = std::max(1, static_cast<int>(target / per_iteration));
  const gpu::L1ReadTimes times = gpu::l1_read_times(*buffer_, iterations, repeats());
  const double clock_mhz = gpu::measured_sm_clock_mhz();
  std::vector<double> rates;
  for (double seconds : times.seconds) rates.push_back(gb_per_s(times.bytes_per_launch, seconds));
  const Summary events = summarize(rates);
  const double cycles = median(std::vector<double>(times.block_cycles.begin(), times.block_cycles.end()));
  const double bytes_per_cycle = cycles > 0 ? static_cast<double>(times.bytes_per_block) / cycles : 0.0;
  const double by_clock = bytes_per_cycle * sm_count() * clock_mhz * 1e6 / 1e9;
  std::vector<int> sms = times.block_sms;
  std::ranges::sort(sms);
  const auto distinct = static_cast<int>(std::unique(sms.begin(), sms.end()) - sms.begin());
  // The earlier kernel, for comparison: 2 blocks per SM, 4 loads in flight per thread, index
  // arithmetic between the loads.
  gpu::BandwidthRun run;
  run.sharing = gpu::Sharing::per_block;
  run.op = CacheOp::plain;
  run.repeats = repeats();
  run.bytes = 16 * kKiB;
  run.passes = passes_for(static_cast<std::uint64_t>(static_cast<double>(run.bytes) * 2 * sm_count()), target / 4);
  const Summary strided = bandwidth(run);
  Confidence confidence = weakest(confidence_from_spread(events.spread), agreement_confidence(events.median, by_clock));
  if (distinct != sm_count()) confidence = Confidence::low;
  std::ostringstream method;
  method << "one block of " << gpu::kL1ReadThreads << " threads per SM (dynamic shared memory keeps a second "
         << "block off each SM; blocks ran on " << distinct << " distinct SMs of " << sm_count()
         << "), each re-reading "
         << "its own " << format_bytes(static_cast<double>(gpu::kL1ReadSetBytes)) << " with 16-byte ld.global.ca, "
         << gpu::kL1ReadUnroll << " independent loads in flight per thread, " << iterations << " iterations after one "
         << "untimed pass; bytes over CUDA-event time, median of launches; cross-check by each block's clock64: "
         << format_number(bytes_per_cycle) << " B per cycle per SM (median block) x " << sm_count() << " SMs x "
         << format_number(clock_mhz, 0)
         << " MHz (clock64 over %globaltimer, measured right after) = " << format_number(by_clock, 0)
         << " GB/s; the 2-blocks-per-SM strided kernel (4 loads in flight, 16 KiB per "
         << "block, plain loads): " << format_number(strided.median, 0) << " GB/s";
  profile_.l1.read_bandwidth_gb_per_s =
      measured(events.median, {method.str(), events.samples, events.spread, confidence});
  l1_bandwidth_curve();
}

/// Cross-check of the L1 capacity: per-SM bandwidth falls once the SM's data leaves L1 (two
/// blocks per SM, each re-reading its own range with plain 16-byte loads).
void Probe::l1_bandwidth_curve() {
  constexpr double kBlocksPerSm = 2;
  const double blocks = kBlocksPerSm * sm_count();
  const double target = quick() ? 4e9 : 16e9;
  gpu::BandwidthRun run;
  run.sharing = gpu::Sharing::per_block;
  run.op = CacheOp::plain;
  run.repeats = quick() ? 1 : 3;
  std::vector<Point> curve;
  const std::vector<double> per_sm_kib =
      quick() ? std::vector<double>{64, 128, 192, 256, 320, 384}
              : std::vector<double>{32, 64, 96, 128, 160, 176, 192, 208, 224, 240, 256, 288, 320, 384, 512};
  for (double kib : per_sm_kib) {
    run.bytes = static_cast<std::uint64_t>(kib * kKiB / kBlocksPerSm);
    run.passes = passes_for(static_cast<std::uint64_t>(static_cast<double>(run.bytes) * blocks), target / 2);
    curve.emplace_back(kib * kKiB, bandwidth(run).median);
  }
  add_curve("L1 read bandwidth vs per-SM working set", "bytes (per-SM working set)", "GB/s", curve);
  cross_check_capacity(profile_.l1.capacity_bytes, find_drop(curve), "bandwidth knee (plain 16-byte loads)");
}

void Probe::l2_bandwidth() {
  const double target = quick() ? 2e9 : 8e9;
  gpu::BandwidthRun run;
  run.repeats = quick() ? 1 : 3;
  std::vector<Point> curve;
  const std::vector<double> sizes_mib =
      quick() ? std::vector<double>{8, 32, 64, 128, 256}
              : std::vector<double>{4, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 128, 192, 256};
  for (double mib : sizes_mib) {
    run.bytes = static_cast<std::uint64_t>(mib * kMiB);
    run.passes = passes_for(run.bytes, target);
    curve.emplace_back(static_cast<double>(run.bytes), bandwidth(run).median);
  }
  add_curve("L2 read bandwidth vs working set", kWorkingSetUnit, "GB/s", curve);
  cross_check_capacity(profile_.l2.capacity_bytes, find_drop(curve), "read-bandwidth knee (plain 16-byte loads)");

  run.bytes = 8 * kMiB;
  run.passes = passes_for(run.bytes, target);
  run.repeats = repeats();
  const Summary read = bandwidth(run);
  run.op = CacheOp::cg;
  const Summary read_cg = bandwidth(run);
  profile_.l2.read_bandwidth_gb_per_s = measured(
      read.median, provenance_from("all SMs (2 blocks x 1024 threads each, 4 loads in flight per thread) re-read an "
                                   "8 MiB L2-resident range with plain 16-byte loads; CUDA events; with ld.global.cg "
                                   "instead: " +
                                       format_number(read_cg.median, 0) + " GB/s",
                                   read));
  run.store = true;
  run.op = CacheOp::plain;
  const Summary write = bandwidth(run);
  profile_.l2.write_bandwidth_gb_per_s =
      measured(write.median, provenance_from("all SMs re-write an 8 MiB L2-resident range with plain 16-byte "
                                             "stores; CUDA events",
                                             write));
  // The same range written one sector per line: 4 bytes per lane, each lane its own line (a
  // transpose without shared memory stores so); time per sector over the whole-line stores'.
  const double whole_sectors_per_s = write.median * 1e9 / 32;
  const auto sparse_sectors = static_cast<double>(gpu::sparse_line_stores(run));
  std::vector<double> slowdowns;
  for (double seconds : gpu::sparse_line_store_seconds(*buffer_, run)) {
    slowdowns.push_back(whole_sectors_per_s / (sparse_sectors / seconds));
  }
  const Summary sparse = summarize(slowdowns);
  profile_.l2.sparse_line_write_slowdown = measured(
      sparse.median, provenance_from("all SMs re-write the same 8 MiB L2-resident range 4 bytes per lane, each lane "
                                     "of a warp store in its own line (one sector of each of 32 lines, 4 stores in "
                                     "flight per thread): time per sector over the 16-byte stores' (" +
                                         format_number(write.median, 0) + " GB/s, whole lines); CUDA events",
                                     sparse));
}

void Probe::dram_bandwidth() {
  const std::uint64_t bytes = quick() ? 1 * kGiB : 4 * kGiB;
  gpu::BandwidthRun run;
  run.bytes = bytes;
  run.repeats = repeats();
  const Summary read = bandwidth(run);
  profile_.dram.read_bandwidth_gb_per_s =
      measured(read.median, provenance_from("all SMs read " + format_bytes(static_cast<double>(bytes)) +
                                                " once with plain 16-byte loads (2 blocks x 1024 threads per SM, 4 in "
                                                "flight per thread); CUDA events; median of launches",
                                            read));
  run.store = true;
  const Summary write = bandwidth(run);
  profile_.dram.write_bandwidth_gb_per_s =
      measured(write.median, provenance_from("all SMs write " + format_bytes(static_cast<double>(bytes)) +
                                                 " once with plain 16-byte stores; CUDA events; median of launches",
                                             write));
  // The copy ceiling the kernels component holds kernels to: each sample is its median of 15 copies.
  const std::uint64_t copy_bytes = bytes / 2;
  std::vector<double> rates;
  for (int r = 0; r < repeats(); ++r) {
    rates.push_back(kernels::measure_copy_bandwidth_gb_per_s(static_cast<std::int64_t>(copy_bytes)));
  }
  const Summary copy = summarize(rates);
  profile_.dram.copy_bandwidth_gb_per_s = measured(
      copy.median, provenance_from("kernels::measure_copy_bandwidth_gb_per_s: cudaMemcpyAsync device-to-device of " +
                                       format_bytes(static_cast<double>(copy_bytes)) +
                                       ", bytes read + written over CUDA-event time, median of 15 copies; median "
                                       "of those medians",
                                   copy));
  copy_shape_slowdowns(bytes / 4);
}

/// The same copy of `copy_bytes` in other shapes, each against its one-vector form: 2, 4, 8
/// vectors per thread (a thread's loads, then its stores: the model's store_burst), and walks
/// of 4, 16, 64 vectors per thread one after another (blocks that live that many times
/// longer: the model's block_walk_slowdown by load rounds). Each repeat times every shape back
/// to back and contributes its ratios, so clock drift cancels.
void Probe::copy_shape_slowdowns(std::uint64_t copy_bytes) {
  constexpr int kTimesPerPoint = 5;
  const std::vector<int> bursts{2, 4, 8};
  const std::vector<int> walks{4, 16, 64};
  std::map<int, std::vector<double>> burst_ratios;
  std::map<int, std::vector<double>> walk_ratios;
  const auto burst_seconds = [&](int burst) {
    return summarize(gpu::burst_copy_seconds(*buffer_, copy_bytes, burst, kTimesPerPoint)).median;
  };
  const auto walk_seconds = [&](int rounds) {
    return summarize(gpu::copy_walk_seconds(*buffer_, copy_bytes, rounds, kTimesPerPoint)).median;
  };
  for (int r = 0; r < repeats(); ++r) {
    const double one = burst_seconds(1);
    for (int burst : bursts) burst_ratios[burst].push_back(burst_seconds(burst) / one);
    const double one_round = walk_seconds(1);
    for (int rounds : walks) walk_ratios[rounds].push_back(walk_seconds(rounds) / one_round);
  }
  const std::string against = ", time over the same copy with 1 vector per thread; median of " +
                              std::to_string(kTimesPerPoint) + " launches each, median of the repeats' ratios";
  for (int burst : bursts) {
    const Summary slowdown = summarize(burst_ratios[burst]);
    profile_.dram.store_burst_slowdown[burst] = measured(
        slowdown.median,
        provenance_from("copy of " + format_bytes(static_cast<double>(copy_bytes)) + " with " + std::to_string(burst) +
                            " 16-byte vectors per thread (its loads, then its stores; 128-thread blocks, a block's "
                            "vectors contiguous)" +
                            against,
                        slowdown));
  }
  for (int rounds : walks) {
    const Summary slowdown = summarize(walk_ratios[rounds]);
    profile_.dram.block_walk_slowdown[rounds] = measured(
        slowdown.median,
        provenance_from("copy of " + format_bytes(static_cast<double>(copy_bytes)) +
                            " (128-thread blocks, a block's 16-byte vectors contiguous) with " +
                            std::to_string(rounds) + " rounds of 1 vector per thread, one after another" + against,
                        slowdown));
  }
}

/// A transpose's stores: rows a warp writes a run of S bytes of while the blocks dispatched
/// around it write other rows. The tiled copy of an 8192 x 8192 f32 matrix (rows 32 KiB apart,
/// 256 MiB each way) to the mirrored tile over the same copy to the same tile, S = 4 x tile
/// (docs/model.md, "DRAM factors"). Each repeat times both of every tile back to back.
void Probe::spread_writes() {
  constexpr std::uint64_t kMatrixWords = 8192;
  constexpr int kTimesPerPoint = 5;
  const std::vector<int> tiles{32, 64, 128};
  std::map<int, std::vector<double>> ratios;
  const auto seconds = [&](int tile, bool mirrored) {
    return summarize(gpu::tile_copy_seconds(*buffer_, kMatrixWords, tile, mirrored, kTimesPerPoint)).median;
  };
  for (int r = 0; r < repeats(); ++r) {
    for (int tile : tiles) ratios[tile].push_back(seconds(tile, true) / seconds(tile, false));
  }
  for (int tile : tiles) {
    const Summary slowdown = summarize(ratios[tile]);
    profile_.dram.spread_write_slowdown[4 * tile] = measured(
        slowdown.median,
        provenance_from("tiled copy of an 8192 x 8192 f32 matrix (rows 32 KiB apart), " + std::to_string(tile) + " x " +
                            std::to_string(tile) + " tiles per 32x8-thread block, each warp storing " +
                            std::to_string(4 * tile) +
                            " contiguous bytes per row (4 loads, then 4 stores per batch): time to the mirrored tile "
                            "(tile (x, y) to (y, x), untransposed) over the time to the same tile; median of " +
                            std::to_string(kTimesPerPoint) + " launches each, median of the repeats' ratios",
                        slowdown));
  }
}

} // namespace cachewise::probe::detail
