// The probe buffer and the kernels that write chains into it or pull ranges through L2.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "host_code.cuh"

namespace cachewise::probe::gpu {
namespace {

/// Node i points to the next node of its cycle: cycles are runs of `chain_length` consecutive
/// entries (1: self loops; count: one cycle through all).
__global__ void write_chain_kernel(Address base, const Address* offsets, long long count, long long chain_length) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const long long first = i / chain_length * chain_length;
  const long long end = min(first + chain_length, count);
  const long long next = i + 1 < end ? i + 1 : first;
  *reinterpret_cast<Address*>(base + offsets[i]) = base + offsets[next];
}

__global__ void stream_kernel(const uint4* data, unsigned long long count, uint4* sink) {
  unsigned acc = 0;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    acc ^= __ldcg(data + i).x;
  }
  if (acc == 0x9e3779b9u) sink->x = acc; // practically never true; keeps the loads alive
}

__global__ void gather_kernel(Address base, const Address* offsets, long long count, Address* sink) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const Address value = load_cg(base + offsets[i]);
  if (value == 1) *sink = value;
}

__global__ void store_sectors_kernel(Address base, const Address* offsets, long long count) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  auto* sector = reinterpret_cast<uint4*>(base + offsets[i]);
  __stcg(sector, make_uint4(0u, 0u, 0u, 0u));
  __stcg(sector + 1, make_uint4(0u, 0u, 0u, 0u));
}

} // namespace

DeviceBuffer::DeviceBuffer(std::uint64_t bytes) : bytes_(bytes) {
  const cudaError_t status = cudaMalloc(&data_, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError(); // an allocation failure is not sticky: clear it so later checks see their own errors
    check_cuda(status, "cudaMalloc (probe buffer)");
  }
  zero(0, bytes);
}

DeviceBuffer::~DeviceBuffer() { cudaFree(data_); }

void DeviceBuffer::zero(std::uint64_t offset, std::uint64_t bytes) const {
  check_range(*this, offset, bytes, "zero");
  check_cuda(cudaMemset(static_cast<char*>(data_) + offset, 0, bytes), "cudaMemset (probe buffer)");
  check_cuda(cudaDeviceSynchronize(), "cudaMemset (probe buffer)");
}

void write_chains(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets, std::size_t chain_length) {
  if (offsets.empty()) return;
  if (chain_length == 0) throw std::runtime_error("write_chains: chain length 0");
  for (std::uint64_t offset : offsets) check_range(buffer, offset, 8, "write_chain");
  DeviceArray<Address> device_offsets(offsets.size());
  device_offsets.upload(std::vector<Address>(offsets.begin(), offsets.end()));
  constexpr unsigned kThreads = 256;
  write_chain_kernel<<<blocks_for(offsets.size(), kThreads), kThreads>>>(base_of(buffer), device_offsets.get(),
                                                                         static_cast<long long>(offsets.size()),
                                                                         static_cast<long long>(chain_length));
  finish_launch("write_chain_kernel");
}

void write_chain(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets) {
  write_chains(buffer, offsets, std::max<std::size_t>(offsets.size(), 1));
}

void write_self_loops(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets) {
  write_chains(buffer, offsets, 1);
}

std::uint64_t free_device_memory_bytes() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return free_bytes;
}

void stream_through_l2(const DeviceBuffer& buffer, std::uint64_t offset, std::uint64_t bytes) {
  check_range(buffer, offset, bytes, "stream_through_l2");
  DeviceArray<uint4> sink(1);
  const auto* data = reinterpret_cast<const uint4*>(static_cast<const char*>(buffer.data()) + offset);
  stream_kernel<<<static_cast<unsigned>(4 * current_sm_count()), 512>>>(data, bytes / sizeof(uint4), sink.get());
  finish_launch("stream_kernel");
}

void gather_through_l2(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets) {
  if (offsets.empty()) return;
  DeviceArray<Address> device_offsets(offsets.size());
  device_offsets.upload(std::vector<Address>(offsets.begin(), offsets.end()));
  DeviceArray<Address> sink(1);
  constexpr unsigned kThreads = 256;
  gather_kernel<<<blocks_for(offsets.size(), kThreads), kThreads>>>(base_of(buffer), device_offsets.get(),
                                                                    static_cast<long long>(offsets.size()), sink.get());
  finish_launch("gather_kernel");
}

void store_sectors(const DeviceBuffer& buffer, const std::vector<std::uint64_t>& offsets) {
  if (offsets.empty()) return;
  for (std::uint64_t offset : offsets) {
    if (offset % 32 != 0) throw std::runtime_error("store_sectors: offsets must be 32-byte aligned");
    check_range(buffer, offset, 32, "store_sectors");
  }
  DeviceArray<Address> device_offsets(offsets.size());
  device_offsets.upload(std::vector<Address>(offsets.begin(), offsets.end()));
  constexpr unsigned kThreads = 256;
  store_sectors_kernel<<<blocks_for(offsets.size(), kThreads), kThreads>>>(base_of(buffer), device_offsets.get(),
                                                                           static_cast<long long>(offsets.size()));
  finish_launch("store_sectors_kernel");
}

} // namespace cachewise::probe::gpu
