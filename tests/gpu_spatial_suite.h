// One evaluation of every spatial-algebra and inertia function on one input case, compiled for the
// host by g++ and for the device by nvcc, so the GPU test can compare the two.
#pragma once

#include <string>

#include "lockstep/physics/inertia.h"

namespace lockstep::test {

struct SpatialCase {
  Transform<double> X_FA, X_FB;
  SpatialVec<double> V_FA, V_FB, A_FA, A_FB;
  Vec3<double> r, from, to;
  ArticulatedInertia<double> P;
  SpatialInertia<double> I;
};

struct SpatialResults {
  SpatialVec<double> out[14];
  ArticulatedInertia<double> shifted, sum;
  SymMat33<double> central;
};

LOCKSTEP_HD inline void evaluateSpatialSuite(const SpatialCase& c, SpatialResults& r) {
  r.out[0] = findRelativeVelocity(c.X_FA, c.V_FA, c.X_FB, c.V_FB);
  r.out[1] = findRelativeVelocityInF(c.X_FB.p - c.X_FA.p, c.V_FA, c.V_FB);
  r.out[2] = findRelativeAcceleration(c.X_FA, c.V_FA, c.A_FA, c.X_FB, c.V_FB, c.A_FB);
  r.out[3] = findRelativeAccelerationInF(c.X_FB.p - c.X_FA.p, c.V_FA, c.A_FA, c.V_FB, c.A_FB);
  r.out[4] = reverseRelativeVelocity(c.X_FA, c.V_FA);
  r.out[5] = reverseRelativeVelocityInA(c.X_FA, c.V_FA);
  r.out[6] = shiftVelocityBy(c.V_FA, c.r);
  r.out[7] = shiftVelocityFromTo(c.V_FA, c.from, c.to);
  r.out[8] = shiftForceBy(c.V_FB, c.r);
  r.out[9] = shiftForceFromTo(c.V_FB, c.from, c.to);
  r.out[10] = shiftAccelerationBy(c.A_FA, c.V_FA.ang, c.r);
  r.out[11] = shiftAccelerationFromTo(c.A_FA, c.V_FA.ang, c.from, c.to);
  r.out[12] = c.P * c.V_FA;
  r.out[13] = c.I.gyroscopicForce(c.V_FB.ang) + c.I * c.A_FB;
  r.shifted = c.P.shift(c.r);
  r.sum = c.P + ArticulatedInertia<double>::fromRigid(c.I.reexpress(c.X_FB.R));
  r.central = c.I.shift(c.r).centralInertia();
}

// Runs evaluateSpatialSuite on the GPU for n cases; returns false (and says why) without a device.
bool evaluateSpatialSuiteOnDevice(const SpatialCase* cases, SpatialResults* results, int n, std::string* why);

}  // namespace lockstep::test
