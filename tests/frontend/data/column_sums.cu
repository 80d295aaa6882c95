// Each thread sums a column of a 1024-row table n times over: n is the trip count, an argument.
__global__ void column_sums(const float* in, float* out, long long n) {
  float sum = 0;
  for (long long k = 0; k < n; ++k) sum += in[(k % 1024) * 256 + threadIdx.x];
  out[threadIdx.x] = sum;
}
