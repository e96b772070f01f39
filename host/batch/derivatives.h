// The buffers of a Batch's linearizations (derivatives.cpp): the Jacobians, host and device copies,
// and the dual worlds the backend runs them on. Private to host/batch/.
#pragma once

#include <cstdint>
#include <vector>

#include "device_memory.h"

namespace lockstep {

template <class T>
struct Batch<T>::Derivatives {
  JacobianShape shape;
  std::vector<T> jacobian;              // host copy: component c of world w at [c * worlds + w]
  std::vector<std::int32_t> paramIndex;  // the flat parameter index of each parameter column
  std::vector<Transform<DualOf<T>>> X_PF, X_MB;  // the model's constant frames as duals
  std::vector<DualOf<T>> dualScratch;    // CPU: one dual world per thread
  std::vector<std::int32_t> dualInts;
  // CUDA: the same in device memory.
  DeviceArray<T> deviceJacobian;
  DeviceArray<std::int32_t> deviceParamIndex;
  DeviceArray<Transform<DualOf<T>>> deviceX_PF, deviceX_MB;
  DeviceArray<DualOf<T>> deviceScratch;
  DeviceArray<std::int32_t> deviceInts;
};

}  // namespace lockstep
