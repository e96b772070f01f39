// Simbody 3.7 as a test oracle: builds the Simbody system equivalent to a Lockstep model (bodies,
// mobilizers, gravity, joint damping, LinearBushings, spring-dampers as TwoPointLinearSpring plus
// TwoPointLinearDamper, SphereOnSphereContact constraints, joint stops as MobilityLinearStop, PD
// actuators as MobilityLinearSpring (q0 = target) plus MobilityLinearDamper plus a constant force
// kd * target velocity, ground contacts as SmoothSphereHalfSpaceForce on Ground) and evaluates it
// at a given state. Compiled without NDEBUG (Simbody's inline code requires it).
#pragma once

#include <memory>
#include <vector>

#include "lockstep/engine/model.h"

namespace lockstep::test {

class SimbodyOracle {
 public:
  explicit SimbodyOracle(const Model& model);
  ~SimbodyOracle();
  struct Result {
    std::vector<double> udot;
    double kinetic = 0, potential = 0;
    std::vector<SpatialVecd> bodyForces;  // total applied force on each body at Bo, in G
    std::vector<Vec3d> multipliers;       // per sphere contact, (x, y, z) in its contact frame
    std::vector<double> mobilityForces;   // total applied mobility force per u
  };
  // tau: applied mobility forces; joint damping, stops and actuator gains come from the model;
  // targetPosition, targetVelocity [nu] (empty: zero) are the actuators' setpoints.
  Result evaluate(const std::vector<double>& q, const std::vector<double>& u, const std::vector<double>& tau,
                  const std::vector<double>& targetPosition = {}, const std::vector<double>& targetVelocity = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::test
