// Event-based timing of kernels and of the device-to-device copy that serves as their ceiling.
#include <algorithm>
#include <string>
#include <vector>

#include "cachewise/kernels.hpp"
#include "cuda_check.hpp"
#include "family_arrays.hpp"
#include "launchers.hpp"

namespace cachewise::kernels {
namespace {

/// Owns a pair of events per timed launch, so nothing synchronises between launches.
class EventPairs {
public:
  explicit EventPairs(int count) : events_(static_cast<std::size_t>(2 * count)) {
    for (cudaEvent_t& event : events_) check_cuda(cudaEventCreate(&event), "cudaEventCreate");
  }
  ~EventPairs() {
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
  }
  EventPairs(const EventPairs&) = delete;
  EventPairs& operator=(const EventPairs&) = delete;
  cudaEvent_t start(int i) const { return events_[static_cast<std::size_t>(2 * i)]; }
  cudaEvent_t stop(int i) const { return events_[static_cast<std::size_t>(2 * i + 1)]; }
  std::vector<double> elapsed_ms() const {
    check_cuda(cudaEventSynchronize(events_.back()), "cudaEventSynchronize");
    std::vector<double> times;
    for (std::size_t i = 0; i < events_.size(); i += 2) {
      float milliseconds = 0.0f;
      check_cuda(cudaEventElapsedTime(&milliseconds, events_[i], events_[i + 1]), "cudaEventElapsedTime");
      times.push_back(milliseconds);
    }
    return times;
  }

private:
  std::vector<cudaEvent_t> events_;
};

double quantile(std::vector<double> sorted, double q) {
  std::sort(sorted.begin(), sorted.end());
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

int device_l2_bytes() { return current_device_attribute(cudaDevAttrL2CacheSize, "cudaDeviceGetAttribute(L2 size)"); }

} // namespace

Timing time_kernel(const ProblemSpec& problem, const Config& config, Workload& workload, const TimingOptions& options) {
  if (options.repeats < 1 || options.warmup_launches < 1) {
    throw InputError("kernels: timing needs repeats >= 1 and warmup_launches >= 1");
  }
  // Validate once (the first launch), then launch straight from the prepared request, so no
  // host work sits between a start event and its kernel.
  workload.select_set(0);
  launch_family_kernel(problem, config, workload);
  const KernelPattern pattern = build_pattern(problem, config);
  const FamilyShape shape = family_shape(problem, config);
  const int sets = workload.input_sets();
  std::vector<std::vector<void*>> arrays_by_set;
  for (int set = 0; set < sets; ++set) {
    workload.select_set(set);
    arrays_by_set.push_back(workload.device_arrays());
  }
  const auto launch_set = [&](int set) {
    launch_request({problem, config, pattern, shape, arrays_by_set[static_cast<std::size_t>(set)], nullptr});
  };
  for (int i = 1; i < options.warmup_launches; ++i) launch_set(i % sets);
  const EventPairs events(options.repeats);
  for (int i = 0; i < options.repeats; ++i) {
    check_cuda(cudaEventRecord(events.start(i)), "cudaEventRecord");
    launch_set(i % sets);
    check_cuda(cudaEventRecord(events.stop(i)), "cudaEventRecord");
  }
  workload.select_set(0);
  const std::vector<double> times = events.elapsed_ms();
  check_cuda(cudaGetLastError(), "timed launches");
  Timing timing;
  timing.median_ms = quantile(times, 0.5);
  timing.p25_ms = quantile(times, 0.25);
  timing.p75_ms = quantile(times, 0.75);
  timing.repeats = options.repeats;
  timing.bandwidth_gb_per_s = static_cast<double>(pattern.useful_bytes) / (timing.median_ms * 1e-3) / 1e9;
  return timing;
}

int timing_input_sets(const ProblemSpec& problem, const Config& config) {
  constexpr int kMaxSets = 8;
  require_device();
  std::int64_t bytes_per_set = 0;
  for (const std::int64_t elements : family_shape(problem, config).array_elements) {
    bytes_per_set += elements * element_bytes(problem.dtype);
  }
  const std::int64_t wanted_bytes = 3 * static_cast<std::int64_t>(device_l2_bytes());
  return static_cast<int>(std::clamp<std::int64_t>((wanted_bytes + bytes_per_set - 1) / bytes_per_set, 1, kMaxSets));
}

Timing time_kernel(const ProblemSpec& problem, const Config& config, const TimingOptions& options) {
  build_pattern(problem, config); // reject a bad config before allocating anything
  const int sets = options.input_sets > 0 ? options.input_sets : timing_input_sets(problem, config);
  Workload workload(problem, config, sets, options.seed);
  return time_kernel(problem, config, workload, options);
}

namespace {

/// Reads every 16 bytes of `words` once (grid-stride); the result only feeds an impossible
/// store, so the loads stay.
__global__ void read_everything(const uint4* __restrict__ words, std::size_t count, unsigned* sink) {
  unsigned folded = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 word = words[i];
    folded ^= word.x ^ word.y ^ word.z ^ word.w;
  }
  if (folded == 0x9E3779B9u && threadIdx.x == 0xFFFF) *sink = folded;
}

} // namespace

void evict_l2() {
  require_device();
  const auto bytes = static_cast<std::size_t>(2 * static_cast<std::int64_t>(device_l2_bytes()));
  // One buffer for the process: no allocation between a kernel and the eviction measured with
  // it (validate counts that eviction's DRAM writes as the kernel's).
  static const struct Scratch {
    void* pointer = nullptr;
    explicit Scratch(std::size_t size) {
      check_cuda(cudaMalloc(&pointer, size + sizeof(unsigned)), "cudaMalloc (L2 eviction buffer)");
    }
    ~Scratch() { cudaFree(pointer); }
  } scratch(bytes);
  // Reads, not writes: the lines they leave are clean, so the next kernel pays no write-back
  // of eviction data, and dirty lines of the kernel before are written back here.
  constexpr int kThreads = 256, kBlocks = 1024; // grid-stride: enough blocks to fill any GPU
  read_everything<<<kBlocks, kThreads>>>(static_cast<const uint4*>(scratch.pointer), bytes / sizeof(uint4),
                                         reinterpret_cast<unsigned*>(static_cast<char*>(scratch.pointer) + bytes));
  check_cuda(cudaGetLastError(), "launch of the L2 eviction kernel");
  check_cuda(cudaDeviceSynchronize(), "L2 eviction");
}

double measure_copy_bandwidth_gb_per_s(std::int64_t bytes) {
  if (bytes <= 0) throw InputError("kernels: copy bandwidth needs a positive byte count, got " + std::to_string(bytes));
  require_device();
  constexpr int kWarmup = 3, kRepeats = 15, kMaxPairs = 8;
  // Rotate over enough buffer pairs that a copy never finds its source in L2 (as kernel timing
  // rotates input sets): a small copy repeated on one pair would measure L2, not DRAM.
  const std::int64_t wanted_bytes = 3 * static_cast<std::int64_t>(device_l2_bytes());
  const int pairs =
      static_cast<int>(std::clamp<std::int64_t>((wanted_bytes + 2 * bytes - 1) / (2 * bytes), 1, kMaxPairs));
  struct Buffers {
    std::vector<void*> pointers;
    ~Buffers() {
      for (void* pointer : pointers) cudaFree(pointer);
    }
  } buffers;
  for (int i = 0; i < 2 * pairs; ++i) {
    void* pointer = nullptr;
    check_cuda(cudaMalloc(&pointer, static_cast<std::size_t>(bytes)), "cudaMalloc (copy buffers)");
    buffers.pointers.push_back(pointer);
    check_cuda(cudaMemset(pointer, 0x5A, static_cast<std::size_t>(bytes)), "cudaMemset");
  }
  const auto copy = [&](int i) {
    const int pair = i % pairs;
    check_cuda(cudaMemcpyAsync(buffers.pointers[2 * pair + 1], buffers.pointers[2 * pair],
                               static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice),
               "cudaMemcpyAsync");
  };
  for (int i = 0; i < kWarmup; ++i) copy(i);
  const EventPairs events(kRepeats);
  for (int i = 0; i < kRepeats; ++i) {
    check_cuda(cudaEventRecord(events.start(i)), "cudaEventRecord");
    copy(i);
    check_cuda(cudaEventRecord(events.stop(i)), "cudaEventRecord");
  }
  const double median_ms = quantile(events.elapsed_ms(), 0.5);
  return 2.0 * static_cast<double>(bytes) / (median_ms * 1e-3) / 1e9;
}

} // namespace cachewise::kernels
