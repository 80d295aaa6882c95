// Element types of the arithmetic families: f16 loads and stores __half but computes in f32.
#pragma once

#include <cuda_fp16.h>

#include "cachewise/model.hpp"

namespace cachewise::kernels {

template <typename T>
struct AccumulatorOf {
  using type = float;
};
template <>
struct AccumulatorOf<double> {
  using type = double;
};

__device__ __forceinline__ float to_accumulator(__half value) { return __half2float(value); }
__device__ __forceinline__ float to_accumulator(float value) { return value; }
__device__ __forceinline__ double to_accumulator(double value) { return value; }

template <typename T>
__device__ __forceinline__ T from_accumulator(typename AccumulatorOf<T>::type value) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(value);
  } else {
    return value;
  }
}

/// Calls `body.template operator()<T>()` with T the CUDA type of `type`.
template <typename Body>
void dispatch_data_type(DataType type, Body&& body) {
  switch (type) {
  case DataType::f32: body.template operator()<float>(); break;
  case DataType::f64: body.template operator()<double>(); break;
  case DataType::f16: body.template operator()<__half>(); break;
  }
}

} // namespace cachewise::kernels
