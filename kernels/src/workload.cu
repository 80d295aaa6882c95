#include <algorithm>
#include <string>

#include <cuda_fp16.h>

#include "cachewise/kernels.hpp"
#include "cuda_check.hpp"
#include "family_arrays.hpp"

namespace cachewise::kernels {
namespace {

__device__ __forceinline__ unsigned long long mix_bits(unsigned long long x) { // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Uniform in [-1, 1), never exactly 0, a pure function of (seed, index).
template <typename T>
__global__ void fill_random(T* data, long long count, unsigned long long seed) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    double value =
        static_cast<double>(mix_bits(seed ^ mix_bits(static_cast<unsigned long long>(i))) >> 11) * 0x1.0p-52 - 1.0;
    if (static_cast<float>(value) == 0.0f || __half2float(__double2half(value)) == 0.0f) value = 0.5;
    if constexpr (std::is_same_v<T, __half>) {
      data[i] = __double2half(value);
    } else {
      data[i] = static_cast<T>(value);
    }
  }
}

template <typename T>
void fill_random_on_device(void* data, std::int64_t count, std::uint64_t seed) {
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((count + kThreads - 1) / kThreads, 1, 65535));
  fill_random<T><<<blocks, kThreads>>>(static_cast<T*>(data), count, seed);
  check_cuda(cudaGetLastError(), "launch of fill_random");
}

double to_double(const unsigned char* bytes, DataType type, std::int64_t index) {
  switch (type) {
  case DataType::f32: return reinterpret_cast<const float*>(bytes)[index];
  case DataType::f64: return reinterpret_cast<const double*>(bytes)[index];
  case DataType::f16: return __half2float(reinterpret_cast<const __half*>(bytes)[index]);
  }
  return 0.0;
}

} // namespace

struct Workload::Impl {
  ProblemSpec problem;
  std::vector<std::int64_t> array_elements;
  std::vector<std::vector<void*>> sets; ///< per set: inputs, then output
  int selected = 0;

  ~Impl() {
    for (auto& set : sets) {
      for (void* pointer : set) cudaFree(pointer);
    }
  }
  std::int64_t bytes_of(std::size_t array) const { return array_elements[array] * element_bytes(problem.dtype); }

  std::vector<double> copy_to_host(std::size_t array) const {
    std::vector<unsigned char> raw(static_cast<std::size_t>(bytes_of(array)));
    check_cuda(
        cudaMemcpy(raw.data(), sets[static_cast<std::size_t>(selected)][array], raw.size(), cudaMemcpyDeviceToHost),
        "cudaMemcpy (device to host)");
    std::vector<double> values(static_cast<std::size_t>(array_elements[array]));
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = to_double(raw.data(), problem.dtype, static_cast<std::int64_t>(i));
    return values;
  }
};

Workload::Workload(const ProblemSpec& problem, const Config& config, int input_sets, std::uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  if (input_sets < 1)
    throw InputError("kernels: a workload needs at least one input set, got " + std::to_string(input_sets));
  impl_->problem = problem;
  impl_->array_elements = family_shape(problem, config).array_elements;
  require_device();
  const std::size_t inputs = impl_->array_elements.size() - 1;
  for (int set = 0; set < input_sets; ++set) {
    std::vector<void*>& pointers = impl_->sets.emplace_back();
    for (std::size_t array = 0; array < impl_->array_elements.size(); ++array) {
      void* pointer = nullptr;
      check_cuda(cudaMalloc(&pointer, static_cast<std::size_t>(impl_->bytes_of(array))),
                 ("cudaMalloc of " + std::to_string(impl_->bytes_of(array)) + " bytes").c_str());
      pointers.push_back(pointer);
      if (array == inputs) continue;
      const std::uint64_t array_seed = seed * 1000003ULL + static_cast<std::uint64_t>(set) * 64 + array;
      switch (problem.dtype) {
      case DataType::f32: fill_random_on_device<float>(pointer, impl_->array_elements[array], array_seed); break;
      case DataType::f64: fill_random_on_device<double>(pointer, impl_->array_elements[array], array_seed); break;
      case DataType::f16: fill_random_on_device<__half>(pointer, impl_->array_elements[array], array_seed); break;
      }
    }
    impl_->selected = set;
    poison_outputs();
  }
  impl_->selected = 0;
  check_cuda(cudaDeviceSynchronize(), "workload initialisation");
}

Workload::~Workload() = default;
Workload::Workload(Workload&&) noexcept = default;
Workload& Workload::operator=(Workload&&) noexcept = default;

const ProblemSpec& Workload::problem() const { return impl_->problem; }
const std::vector<std::int64_t>& Workload::array_elements() const { return impl_->array_elements; }
int Workload::input_sets() const { return static_cast<int>(impl_->sets.size()); }
int Workload::selected_set() const { return impl_->selected; }

void Workload::select_set(int index) {
  if (index < 0 || index >= input_sets()) {
    throw InputError("kernels: input set " + std::to_string(index) + " out of range (" + std::to_string(input_sets()) +
                     " sets)");
  }
  impl_->selected = index;
}

void Workload::poison_outputs() {
  const std::size_t output = impl_->array_elements.size() - 1;
  // All-ones bytes are a NaN in f16, f32 and f64 alike.
  check_cuda(cudaMemset(impl_->sets[static_cast<std::size_t>(impl_->selected)][output], 0xFF,
                        static_cast<std::size_t>(impl_->bytes_of(output))),
             "cudaMemset (poison outputs)");
}

std::int64_t Workload::bytes_per_set() const {
  std::int64_t total = 0;
  for (std::size_t array = 0; array < impl_->array_elements.size(); ++array) total += impl_->bytes_of(array);
  return total;
}

std::vector<std::vector<double>> Workload::inputs_on_host() const {
  std::vector<std::vector<double>> inputs;
  for (std::size_t array = 0; array + 1 < impl_->array_elements.size(); ++array)
    inputs.push_back(impl_->copy_to_host(array));
  return inputs;
}

std::vector<double> Workload::output_on_host() const { return impl_->copy_to_host(impl_->array_elements.size() - 1); }

std::vector<void*> Workload::device_arrays() const { return impl_->sets[static_cast<std::size_t>(impl_->selected)]; }

} // namespace cachewise::kernels
