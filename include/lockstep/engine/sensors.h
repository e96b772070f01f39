// MuJoCo's sensors (MJCF <sensor>) computed from a world's state: Model::sensors() says what each
// one measures (SensorDesc in model.h); the values come in the order of Model::sensorDataNames(),
// as MuJoCo's sensordata does for the sensors Lockstep computes. Recordable as the quantity
// "sensors" (quantities.h). Tested against MuJoCo's own sensordata (tests/frontend/test_sensors.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "lockstep/engine/batch.h"

namespace lockstep {

// The sensor values of world w at the batch's host copy. Accelerations (accelerometer, force,
// torque) use the udot of the last evaluate(): call evaluate() (and download()) first.
template <class T>
std::vector<double> sensorData(const Batch<T>& batch, std::int64_t w);

extern template std::vector<double> sensorData<float>(const Batch<float>&, std::int64_t);
extern template std::vector<double> sensorData<double>(const Batch<double>&, std::int64_t);

}  // namespace lockstep
