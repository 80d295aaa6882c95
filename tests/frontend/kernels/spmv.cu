// Data-dependent kernels the extractor must reject with their source line: a CSR sparse
// matrix-vector product (loop bounds and addresses come from index arrays) and a gather.
__global__ void csr_spmv(const int* row_ptr, const int* col, const float* val, const float* x, float* y, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float sum = 0.0f;
  for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += val[k] * x[col[k]];
  y[r] = sum;
}

__global__ void gather(const float* in, const int* index, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[index[i]];
}

__device__ __noinline__ float twice(float v) { return 2.0f * v; }

__global__ void not_inlined(const float* in, float* out) {
  int i = threadIdx.x;
  out[i] = twice(in[i]);
}

__global__ void threshold(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] > 0.5f) out[i] = 1.0f;
}
