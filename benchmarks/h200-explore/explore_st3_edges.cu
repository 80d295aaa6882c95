// Experiment (session 8): can any 7-point f32 stencil3d kernel shape reach 90% of the
// same-size device-to-device copy at 256^3? Standalone on purpose: it tries shapes the
// kernels library does not have yet, times them as `advisor validate` does (CUDA events,
// back to back over input sets > 3x L2, median) and checks each on the interior points
// against rows_of_one<2> (the library's shape, 32x16 threads, z_chunk 8). Its kernels store
// whole rows (the border lanes hold a computed value) unless kSkipEdges says otherwise.
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -o explore_st3_edges benchmarks/h200-explore/explore_st3_edges.cu
//   ./explore_st3_edges [--rows-of-one] [n ...]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CHECK(call)                                                                                                    \
  do {                                                                                                                 \
    cudaError_t status_ = (call);                                                                                      \
    if (status_ != cudaSuccess) {                                                                                      \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(status_));                                           \
      std::exit(1);                                                                                                    \
    }                                                                                                                  \
  } while (0)

constexpr float kC0 = 0.4f, kC1 = 0.1f;

template <int V> struct alignas(4 * V) Vec {
  float lane[V];
};
template <int V> __device__ __forceinline__ Vec<V> load_vec(const float* p) { return *reinterpret_cast<const Vec<V>*>(p); }
template <int V> __device__ __forceinline__ void store_vec(float* p, const Vec<V>& v) { *reinterpret_cast<Vec<V>*>(p) = v; }

__constant__ float constant_weights[2];

template <int V, bool kSkipEdges, typename Index>
__device__ __forceinline__ void store_row(float* target, const Vec<V>& result, Index x0, Index n) {
  if (kSkipEdges && (x0 == 0 || x0 + V == n)) {
#pragma unroll
    for (int i = 0; i < V; ++i)
      if (x0 + i >= 1 && x0 + i < n - 1) target[i] = result.lane[i];
  } else {
    store_vec<V>(target, result);
  }
}

// The library's shape (stencil3d_streaming_vector): one row of V points per thread, the
// y neighbours and the z+1 plane loaded per plane. The knobs are what the library's kernel
// does differently: Index (it computes offsets in 64 bits), kBatch (it loads 2 planes' taps
// before their stores), kConstantWeights (its weights sit in __constant__ memory), kSkipEdges
// (it stores interior points only: the x = 0 and x = n-1 lanes of the edge threads are left
// out, so those rows' first and last sectors are written in part).
template <int V, typename Index = int, int kBatch = 1, bool kConstantWeights = false, bool kSkipEdges = false>
__global__ void rows_of_one(const float* __restrict__ in, float* __restrict__ out, Index n, int z_chunk) {
  const Index x0 = (Index(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  const Index y = Index(blockIdx.y) * blockDim.y + threadIdx.y;
  if (x0 >= n || y < 1 || y >= n - 1) return;
  const int row = int(n), plane = int(n * n);
  const Index first = max(Index(blockIdx.z) * z_chunk, Index(1)), end = min(Index(blockIdx.z) * z_chunk + z_chunk, n - 1);
  if (first >= end) return;
  const float* here = in + first * plane + y * row + x0;
  float* target = out + first * plane + y * row + x0;
  const float c0 = kConstantWeights ? constant_weights[0] : kC0, c1 = kConstantWeights ? constant_weights[1] : kC1;
  Vec<V> below = load_vec<V>(here - plane), centre = load_vec<V>(here);
  const bool has_left = x0 >= 1, has_right = x0 + V < n;
  int left_planes = int(end - first);
  for (; left_planes >= kBatch; left_planes -= kBatch) {
    Vec<V> above[kBatch], ym[kBatch], yp[kBatch];
    float left[kBatch], right[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const float* p = here + u * plane;
      above[u] = load_vec<V>(p + plane);
      left[u] = has_left ? p[-1] : 0.f;
      right[u] = has_right ? p[V] : 0.f;
      ym[u] = load_vec<V>(p - row);
      yp[u] = load_vec<V>(p + row);
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      Vec<V> result;
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float l = i > 0 ? centre.lane[i - 1] : left[u], r = i + 1 < V ? centre.lane[i + 1] : right[u];
        result.lane[i] = c0 * centre.lane[i] + c1 * (l + r + ym[u].lane[i] + yp[u].lane[i] + below.lane[i] + above[u].lane[i]);
      }
      store_row<V, kSkipEdges>(target + u * plane, result, x0, n);
      below = centre;
      centre = above[u];
    }
    here += kBatch * plane;
    target += kBatch * plane;
  }
  for (; left_planes > 0; --left_planes) {
    const Vec<V> above = load_vec<V>(here + plane);
    const float left = has_left ? here[-1] : 0.f, right = has_right ? here[V] : 0.f;
    const Vec<V> ym = load_vec<V>(here - row), yp = load_vec<V>(here + row);
    Vec<V> result;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const float l = i > 0 ? centre.lane[i - 1] : left, r = i + 1 < V ? centre.lane[i + 1] : right;
      result.lane[i] = c0 * centre.lane[i] + c1 * (l + r + ym.lane[i] + yp.lane[i] + below.lane[i] + above.lane[i]);
    }
    store_row<V, kSkipEdges>(target, result, x0, n);
    below = centre;
    centre = above;
    here += plane;
    target += plane;
  }
}

// R rows of V points per thread: the rows' own y neighbours come from registers, so per plane
// a thread loads R vectors of z+1 and 2 halo rows of z (not 3R vectors); the next plane's
// loads are issued before this plane's arithmetic.
template <int V, int R>
__global__ void rows_in_registers(const float* __restrict__ in, float* __restrict__ out, int n, int z_chunk) {
  const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  const int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * R;
  if (x0 >= n || y0 >= n) return;
  const int row = n, plane = n * n;
  const int first = max(int(blockIdx.z) * z_chunk, 1), end = min(int(blockIdx.z) * z_chunk + z_chunk, n - 1);
  if (first >= end) return;
  const float* here = in + (size_t)first * plane + (size_t)y0 * row + x0;
  float* target = out + (size_t)first * plane + (size_t)y0 * row + x0;
  Vec<V> below[R], centre[R], above[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    below[r] = load_vec<V>(here + r * row - plane);
    centre[r] = load_vec<V>(here + r * row);
    above[r] = load_vec<V>(here + r * row + plane);
  }
  const bool has_left = x0 >= 1, has_right = x0 + V < n;
  for (int z = first; z < end; ++z) {
    // In-plane halo of z: rows y0-1, y0+R and the x neighbours of each row.
    const Vec<V> ym = load_vec<V>(here - row), yp = load_vec<V>(here + R * row);
    float left[R], right[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      left[r] = has_left ? here[r * row - 1] : 0.f;
      right[r] = has_right ? here[r * row + V] : 0.f;
    }
    Vec<V> next[R];
    if (z + 1 < end) {
#pragma unroll
      for (int r = 0; r < R; ++r) next[r] = load_vec<V>(here + r * row + 2 * plane);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int y = y0 + r;
      Vec<V> result;
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float l = i > 0 ? centre[r].lane[i - 1] : left[r], rr = i + 1 < V ? centre[r].lane[i + 1] : right[r];
        const float down = r > 0 ? centre[r - 1].lane[i] : ym.lane[i];
        const float up = r + 1 < R ? centre[r + 1].lane[i] : yp.lane[i];
        result.lane[i] = kC0 * centre[r].lane[i] + kC1 * (l + rr + down + up + below[r].lane[i] + above[r].lane[i]);
      }
      if (y >= 1 && y < n - 1) store_vec<V>(target + r * row, result);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      below[r] = centre[r];
      centre[r] = above[r];
      above[r] = next[r];
    }
    here += plane;
    target += plane;
  }
}

// 2.5D with the plane in shared memory: a block of 32 x BY threads owns a (32V) x BY tile;
// y neighbours come from shared memory, x neighbours from registers and warp shuffles (the
// tile's left and right halo columns from global), z from registers. Loads for plane z+2 and
// the halo of z+1 are issued before plane z is computed.
template <int V, int BY>
__global__ void __launch_bounds__(32 * BY) plane_in_shared(const float* __restrict__ in, float* __restrict__ out, int n,
                                                            int z_chunk) {
  __shared__ Vec<V> tile[BY + 2][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = (blockIdx.x * 32 + tx) * V;
  const int y = blockIdx.y * BY + ty;
  const int row = n, plane = n * n;
  const int first = max(int(blockIdx.z) * z_chunk, 1), end = min(int(blockIdx.z) * z_chunk + z_chunk, n - 1);
  if (first >= end) return;
  const float* here = in + (size_t)first * plane + (size_t)y * row + x0;
  float* target = out + (size_t)first * plane + (size_t)y * row + x0;
  const bool low_edge = ty == 0, high_edge = ty == BY - 1;
  const bool has_left = x0 >= 1, has_right = x0 + V < n;
  Vec<V> below = load_vec<V>(here - plane), centre = load_vec<V>(here), above = load_vec<V>(here + plane);
  Vec<V> halo_y{};
  float halo_x = 0.f;
  const auto load_halo = [&](const float* at) {
    if (low_edge) halo_y = load_vec<V>(at - row);
    if (high_edge) halo_y = load_vec<V>(at + row);
    if (tx == 0 && has_left) halo_x = at[-1];
    if (tx == 31 && has_right) halo_x = at[V];
  };
  load_halo(here);
  for (int z = first; z < end; ++z) {
    tile[ty + 1][tx] = centre;
    if (low_edge) tile[0][tx] = halo_y;
    if (high_edge) tile[BY + 1][tx] = halo_y;
    const float my_halo_x = halo_x;
    Vec<V> next{};
    if (z + 1 < end) {
      next = load_vec<V>(here + 2 * plane);
      load_halo(here + plane);
    }
    __syncthreads();
    const Vec<V> ym = tile[ty][tx], yp = tile[ty + 2][tx];
    float left = __shfl_up_sync(0xffffffffu, centre.lane[V - 1], 1);
    float right = __shfl_down_sync(0xffffffffu, centre.lane[0], 1);
    if (tx == 0) left = my_halo_x;
    if (tx == 31) right = my_halo_x;
    Vec<V> result;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const float l = i > 0 ? centre.lane[i - 1] : left, r = i + 1 < V ? centre.lane[i + 1] : right;
      result.lane[i] = kC0 * centre.lane[i] + kC1 * (l + r + ym.lane[i] + yp.lane[i] + below.lane[i] + above.lane[i]);
    }
    if (y >= 1 && y < n - 1) store_vec<V>(target, result);
    __syncthreads();
    below = centre;
    centre = above;
    above = next;
    here += plane;
    target += plane;
  }
}

struct Buffers {
  std::vector<float*> in, out;
  ~Buffers() {
    for (float* p : in) cudaFree(p);
    for (float* p : out) cudaFree(p);
  }
};

__global__ void fill(float* p, size_t count, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    p[i] = float(h & 0xFFFF) / 65536.f;
  }
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  std::vector<int> sizes;
  bool only_rows_of_one = false; // --rows-of-one: the library shape's knobs only
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--rows-of-one") only_rows_of_one = true;
    else sizes.push_back(std::atoi(argv[i]));
  }
  if (sizes.empty()) sizes = {256, 512};
  int l2_bytes = 0;
  CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0));
  constexpr int kWarmup = 3, kRepeats = 9;
  for (int n : sizes) {
    const size_t count = size_t(n) * n * n, bytes = count * sizeof(float);
    const int sets = int(std::clamp<size_t>((3 * size_t(l2_bytes) + 2 * bytes - 1) / (2 * bytes), 1, 8));
    Buffers b;
    for (int s = 0; s < sets; ++s) {
      float *i = nullptr, *o = nullptr;
      CHECK(cudaMalloc(&i, bytes));
      CHECK(cudaMalloc(&o, bytes));
      fill<<<1024, 256>>>(i, count, 17u * s + 1);
      CHECK(cudaMemset(o, 0, bytes));
      b.in.push_back(i);
      b.out.push_back(o);
    }
    const float weights[2] = {kC0, kC1};
    CHECK(cudaMemcpyToSymbol(constant_weights, weights, sizeof(weights)));
    float* reference = nullptr;
    CHECK(cudaMalloc(&reference, bytes));
    cudaEvent_t start[kRepeats], stop[kRepeats];
    for (int i = 0; i < kRepeats; ++i) {
      CHECK(cudaEventCreate(&start[i]));
      CHECK(cudaEventCreate(&stop[i]));
    }
    const auto time = [&](const std::function<void(const float*, float*)>& launch) {
      for (int i = 0; i < kWarmup; ++i) launch(b.in[i % sets], b.out[i % sets]);
      for (int i = 0; i < kRepeats; ++i) {
        CHECK(cudaEventRecord(start[i]));
        launch(b.in[(kWarmup + i) % sets], b.out[(kWarmup + i) % sets]);
        CHECK(cudaEventRecord(stop[i]));
      }
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaGetLastError());
      std::vector<float> ms(kRepeats);
      for (int i = 0; i < kRepeats; ++i) CHECK(cudaEventElapsedTime(&ms[i], start[i], stop[i]));
      std::vector<float> sorted = ms;
      std::sort(sorted.begin(), sorted.end());
      return std::pair{median(ms) * 1000.f, (sorted.back() - sorted.front()) / median(ms)};
    };
    const auto copy = time([&](const float* i, float* o) { CHECK(cudaMemcpyAsync(o, i, bytes, cudaMemcpyDeviceToDevice)); });
    const double copy_gbs = 2.0 * bytes / (copy.first * 1e-6) / 1e9;
    std::printf("n=%d: %d input sets; copy %.1f us = %.0f GB/s (spread %.1f%%)\n", n, sets, copy.first, copy_gbs,
                100 * copy.second);
    std::printf("%-44s %9s %8s %9s %8s %s\n", "kernel", "us", "GB/s", "of copy", "spread", "max |diff|");
    // The reference output: the library's shape, vector 2, 32x16, z_chunk 8.
    CHECK(cudaMemset(reference, 0, bytes));
    rows_of_one<2><<<dim3(n / 64, n / 16, n / 8), dim3(32, 16)>>>(b.in[0], reference, n, 8);
    CHECK(cudaDeviceSynchronize());
    std::vector<float> expected(count), got(count);
    CHECK(cudaMemcpy(expected.data(), reference, bytes, cudaMemcpyDeviceToHost));
    const auto report = [&](const std::string& name, const std::function<void(const float*, float*)>& launch) {
      const auto t = time(launch);
      CHECK(cudaMemset(b.out[0], 0, bytes));
      launch(b.in[0], b.out[0]);
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(got.data(), b.out[0], bytes, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (int z = 1; z < n - 1; ++z)
        for (int y = 1; y < n - 1; ++y)
          for (int x = 1; x < n - 1; ++x) {
            const size_t at = (size_t(z) * n + y) * n + x;
            worst = std::max(worst, double(std::fabs(got[at] - expected[at])));
          }
      const double gbs = 2.0 * bytes / (t.first * 1e-6) / 1e9;
      std::printf("%-44s %9.1f %8.0f %8.1f%% %7.1f%% %.2g\n", name.c_str(), t.first, gbs, 100 * gbs / copy_gbs,
                  100 * t.second, worst);
    };
    for (int z : {8, 32})
      for (int by : {8, 16}) {
        const std::string shape = " 32x" + std::to_string(by) + " z" + std::to_string(z);
        const dim3 grid2(n / 64, n / by, n / z), grid4(n / 128, n / by, n / z), block(32, by);
        report("rows_of_one<2>" + shape, [=](const float* i, float* o) { rows_of_one<2><<<grid2, block>>>(i, o, n, z); });
        report("rows_of_one<2,int,1,false,skip_edges>" + shape,
               [=](const float* i, float* o) { rows_of_one<2, int, 1, false, true><<<grid2, block>>>(i, o, n, z); });
        report("rows_of_one<2,int,batch2>" + shape,
               [=](const float* i, float* o) { rows_of_one<2, int, 2><<<grid2, block>>>(i, o, n, z); });
        report("rows_of_one<2,int,batch2,constant>" + shape,
               [=](const float* i, float* o) { rows_of_one<2, int, 2, true><<<grid2, block>>>(i, o, n, z); });
        report("rows_of_one<2,int64,batch2>" + shape,
               [=](const float* i, float* o) { rows_of_one<2, long long, 2><<<grid2, block>>>(i, o, n, z); });
        report("rows_of_one<2,int64,batch2,constant>" + shape,
               [=](const float* i, float* o) { rows_of_one<2, long long, 2, true><<<grid2, block>>>(i, o, n, z); });
        report("rows_of_one<2,int64,batch2,constant,skip_edges>" + shape, [=](const float* i, float* o) {
          rows_of_one<2, long long, 2, true, true><<<grid2, block>>>(i, o, n, z);
        });
        report("rows_of_one<4>" + shape, [=](const float* i, float* o) { rows_of_one<4><<<grid4, block>>>(i, o, n, z); });
        report("rows_of_one<4,int,1,false,skip_edges>" + shape,
               [=](const float* i, float* o) { rows_of_one<4, int, 1, false, true><<<grid4, block>>>(i, o, n, z); });
      }
    if (!only_rows_of_one)
    for (int z : {8, 16, 32, 64})
      for (int by : {2, 4, 8}) {
        const std::string shape = " 32x" + std::to_string(by) + " z" + std::to_string(z);
        report("rows_in_registers<2,2>" + shape, [=](const float* i, float* o) {
          rows_in_registers<2, 2><<<dim3(n / 64, n / (2 * by), n / z), dim3(32, by)>>>(i, o, n, z);
        });
        report("rows_in_registers<2,4>" + shape, [=](const float* i, float* o) {
          rows_in_registers<2, 4><<<dim3(n / 64, n / (4 * by), n / z), dim3(32, by)>>>(i, o, n, z);
        });
        report("rows_in_registers<4,2>" + shape, [=](const float* i, float* o) {
          rows_in_registers<4, 2><<<dim3(n / 128, n / (2 * by), n / z), dim3(32, by)>>>(i, o, n, z);
        });
        report("rows_in_registers<1,4>" + shape, [=](const float* i, float* o) {
          rows_in_registers<1, 4><<<dim3(n / 32, n / (4 * by), n / z), dim3(32, by)>>>(i, o, n, z);
        });
      }
    if (!only_rows_of_one)
    for (int z : {8, 16, 32, 64}) {
      const std::string zs = " z" + std::to_string(z);
      report("plane_in_shared<1,8> 32x8" + zs, [=](const float* i, float* o) {
        plane_in_shared<1, 8><<<dim3(n / 32, n / 8, n / z), dim3(32, 8)>>>(i, o, n, z);
      });
      report("plane_in_shared<2,8> 32x8" + zs, [=](const float* i, float* o) {
        plane_in_shared<2, 8><<<dim3(n / 64, n / 8, n / z), dim3(32, 8)>>>(i, o, n, z);
      });
      report("plane_in_shared<2,16> 32x16" + zs, [=](const float* i, float* o) {
        plane_in_shared<2, 16><<<dim3(n / 64, n / 16, n / z), dim3(32, 16)>>>(i, o, n, z);
      });
      report("plane_in_shared<4,8> 32x8" + zs, [=](const float* i, float* o) {
        plane_in_shared<4, 8><<<dim3(n / 128, n / 8, n / z), dim3(32, 8)>>>(i, o, n, z);
      });
      report("plane_in_shared<4,4> 32x4" + zs, [=](const float* i, float* o) {
        plane_in_shared<4, 4><<<dim3(n / 128, n / 4, n / z), dim3(32, 4)>>>(i, o, n, z);
      });
    }
    CHECK(cudaFree(reference));
  }
  return 0;
}
