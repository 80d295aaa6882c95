// GPU microbenchmark primitives of the probe (implemented in memory_, latency_, bandwidth_ and
// device_benchmarks.cu). The declarations are plain C++ so the stages need no CUDA compiler. Every function
// synchronises and throws std::runtime_error on a CUDA error.
#pragma once

#include <cstdint>
#include <vector>

namespace cachewise::probe::gpu {

/// How a load is issued: ld.global.ca (L1 and L2), ld.global.cg (L2 only, GPU-coherent), or a plain
/// ld.global as ordinary kernels issue it (bandwidth kernels only).
enum class CacheOp { ca, cg, plain };

/// One device allocation, zero-filled, freed on destruction.
class DeviceBuffer {
public:
  explicit DeviceBuffer(std::uint64_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::uint64_t bytes() const { return bytes_; }
  void* data() const { return data_; }
  /// Zero-fills [offset, offset + bytes).
  void zero(std::uint64_t offset, std::uint64_t bytes) const;

private:
  void* data_ = nullptr;
  std::uint64_t bytes_ = 0;
};

/// Links the nodes at `offsets` into a cycle: the 8 bytes at offsets[i] hold the address of
/// offsets[i + 1] (the last points back to the first).
void write_chain(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets);

/// Makes the 8 bytes at each offset point to themselves (for per-address timing).
void write_self_loops(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets);

/// Links the nodes at `offsets` into separate cycles of `chain_length` consecutive entries each
/// (the last one may be shorter): the walkers of eviction_test_cycles follow one cycle each.
void write_chains(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets, std::size_t chain_length);

/// Most walkers (threads of one block) an eviction test can have.
inline constexpr std::size_t kMaxWalkers = 1024;

/// One eviction test, run by one block on SM `sm` (-1: wherever it lands): thread 0 loads
/// `target` (skipped when has_target is false); then walker w follows cycle w of the chains (as
/// written by write_chains over `offsets` with `chain_length`) `walks` times around; then thread 0
/// times one load of `probe` (clock64 around it, loop and wait included).
struct EvictionTest {
  CacheOp op = CacheOp::ca;
  bool has_target = true;
  std::uint64_t target = 0;
  std::uint64_t probe = 0;
  std::size_t chain_length = 1; ///< ceil(offsets / chain_length) <= kMaxWalkers
  int walks = 2;
  int sm = -1;
};
/// Cycles of the timed probe load. The block's only shared memory is two words, so the L1 it
/// runs with is the driver's default carveout, as in the L1 chases.
std::uint32_t eviction_test_cycles(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets,
                                   const EvictionTest& test);

/// Free device memory now (cudaMemGetInfo), in bytes.
std::uint64_t free_device_memory_bytes();

/// Options of one pointer chase by a single thread.
struct ChaseOptions {
  CacheOp op = CacheOp::cg;
  std::int64_t warm_hops = 0;
  std::int64_t timed_hops = 1024; ///< rounded up to a multiple of 8
  int sm = -1;                    ///< run on this SM id (%smid); -1: wherever it lands
  int l1_carveout_percent =
      -1; ///< cudaFuncAttributePreferredSharedMemoryCarveout 0..100; -1: never set (driver default)
};

/// Mean cycles per hop (clock64 around the timed hops) following the chain from `start_offset`.
double chase_mean_cycles(const DeviceBuffer& buffer, std::uint64_t start_offset, const ChaseOptions& options);

/// Largest number of hops chase_per_hop can time in one launch.
inline constexpr int kMaxTimedHops = 4096;

/// Cycles of each of `hops` consecutive ld.global.cg hops (timed one by one) from SM `sm`.
std::vector<std::uint32_t> chase_per_hop(const DeviceBuffer& buffer, std::uint64_t start_offset, int hops, int sm);

/// Latency of each address from SM `sm`: each offset must hold a self loop (write_self_loops);
/// `timed_loads` dependent ld.global.cg loads per address after `warm_loads` untimed ones.
/// Returns cycles per load.
std::vector<double> self_loop_latencies(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets, int sm,
                                        int warm_loads = 2, int timed_loads = 16);

/// Per address, from SM `sm` (one thread, in the offsets' order): the cycles of the empty timing
/// frame (the frame of one timed load with a register move instead of the load), of the first
/// load of the address, and of a second load of it right after. The 8 bytes at each offset must
/// hold zero (store_sectors).
struct FirstLoadTimes {
  std::vector<std::uint32_t> empty_frame;
  std::vector<std::uint32_t> first;
  std::vector<std::uint32_t> second;
};
inline constexpr int kMaxFirstLoads = 2048;
FirstLoadTimes first_load_cycles(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets, CacheOp op,
                                 int sm);

/// Writes a whole 32-byte sector of zeros at each (32-byte aligned) offset with st.global.cg from
/// a grid of threads: L2 allocates the sectors from the stores, with no DRAM fill.
void store_sectors(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets);

/// Every SM reads [offset, offset + bytes) once with ld.global.cg: warms L2 with that range, or
/// evicts everything else when the range is several times the L2.
void stream_through_l2(const DeviceBuffer& buffer, std::uint64_t offset, std::uint64_t bytes);

/// Every SM loads the 8 bytes at each offset once with ld.global.cg (warms L2 with just those lines).
void gather_through_l2(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets);

/// A scripted access sequence run by one thread, in order, each access depending on the last.
enum class Op : std::uint32_t { load_ca, load_cg, store_wb, store_cg };
struct ScriptStep {
  Op op = Op::load_cg;
  std::uint64_t offset = 0;
  bool timed = false;
};
inline constexpr int kMaxScriptSteps = 512;
/// Cycles of each timed load, in script order. Every accessed 8-byte word must hold zero.
std::vector<std::uint32_t> run_script(const DeviceBuffer& buffer, const std::vector<ScriptStep>& steps, int sm);

/// Bandwidth kernels (16-byte accesses, whole chip). Each returns seconds per launch for `repeats`
/// launches (medians are taken by the caller).
enum class Sharing {
  whole_grid, ///< the grid strides over [0, bytes) together, `passes` times
  per_block,  ///< block b reads its own [b * bytes, (b + 1) * bytes), `passes` times (2 blocks per SM)
};
struct BandwidthRun {
  std::uint64_t bytes = 0; ///< range touched
  int passes = 1;
  Sharing sharing = Sharing::whole_grid;
  CacheOp op = CacheOp::plain; ///< loads and stores (cg stores use st.global.cg, others plain stores)
  bool store = false;
  int repeats = 5;
};
/// Seconds per launch; bytes moved per launch = bytes * passes (* blocks for per_block).
std::vector<double> bandwidth_seconds(const DeviceBuffer& buffer, const BandwidthRun& run);
/// Bytes one launch of `run` moves (what bandwidth_seconds' times divide).
std::uint64_t bandwidth_bytes_moved(const BandwidthRun& run);

/// L1 read bandwidth: one block of kL1ReadThreads per SM (its dynamic shared memory keeps a second
/// block off the SM), each re-reading its own kL1ReadSetBytes at the buffer's start with 16-byte
/// ld.global.ca, kL1ReadUnroll independent loads in flight per thread, `iterations` times after
/// one untimed pass. Times every launch by CUDA events (after one warm-up launch) and, in the
/// last launch, each block's loop by clock64.
inline constexpr unsigned kL1ReadThreads = 1024;
inline constexpr std::uint64_t kL1ReadSetBytes = 32 * 1024;
inline constexpr int kL1ReadUnroll = 8;
struct L1ReadTimes {
  std::vector<double> seconds;         ///< per launch
  std::vector<long long> block_cycles; ///< per block of the last launch
  std::vector<int> block_sms;          ///< %smid of each block of the last launch
  std::uint64_t bytes_per_block = 0;   ///< read by one block in one launch
  std::uint64_t bytes_per_launch = 0;
};
L1ReadTimes l1_read_times(const DeviceBuffer& buffer, int iterations, int repeats);

/// Seconds per copy of the buffer's first `bytes` to the next `bytes` (after one warm-up): 16-byte
/// vectors, `burst` (1, 2, 4 or 8) per thread in one batch, its loads then its stores, in
/// 128-thread blocks whose vectors are contiguous (the library's copy kernel's shape).
std::vector<double> burst_copy_seconds(const DeviceBuffer& buffer, std::uint64_t bytes, int burst, int repeats);

/// Seconds per launch of 4-byte stores of which each lane of a warp writes into its own
/// 128-byte line of [0, run.bytes) (one sector of each of 32 lines per warp store), the whole
/// grid (2 blocks x 1024 threads per SM, 4 stores in flight per thread) walking the range
/// `run.passes` times; run.sharing, op and store are ignored. sparse_line_stores: the
/// (one-sector) line stores one launch makes.
std::vector<double> sparse_line_store_seconds(const DeviceBuffer& buffer, const BandwidthRun& run);
std::uint64_t sparse_line_stores(const BandwidthRun& run);

/// Seconds per copy of the same shape walked: a thread moves `rounds` vectors one after another
/// (each loaded, then stored), so a block lives `rounds` times longer than with one.
std::vector<double> copy_walk_seconds(const DeviceBuffer& buffer, std::uint64_t bytes, int rounds, int repeats);

/// Seconds per copy of an n x n matrix of 4-byte words at the buffer's start to the next n x n
/// (after one warm-up), a `tile` x `tile` tile (32, 64 or 128) per 32x8-thread block, to the same
/// tile or, `mirrored`, to tile (y, x) untransposed: each warp stores 4 x tile contiguous bytes
/// per row, the rows n words apart, and with `mirrored` the blocks around it write other rows.
std::vector<double> tile_copy_seconds(const DeviceBuffer& buffer, std::uint64_t n, int tile, bool mirrored,
                                      int repeats);

/// Shared memory: cycles per dependent 4-byte load when lane i of one warp reads byte offset
/// i * stride_bytes (mean over `iterations`).
double shared_load_cycles(int stride_bytes, int iterations);

/// The distinct %smid values the blocks of a wide launch ran on, ascending (SM ids need not be
/// contiguous, so pinned kernels pick from these).
std::vector<int> sm_ids();

/// The SM of each block of a launch of one block per SM (block i on SM result[i]): the order in
/// which the hardware deals a wave's blocks to SMs.
std::vector<int> block_dispatch_order();

/// SM clock seen by a kernel: clock64 ticks over %globaltimer nanoseconds, in MHz.
double measured_sm_clock_mhz();

} // namespace cachewise::probe::gpu
