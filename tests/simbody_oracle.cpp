#ifdef NDEBUG
#error "Simbody's headers must be compiled without NDEBUG"
#endif
#include "simbody_oracle.h"

#include <Simbody.h>

namespace lockstep::test {

namespace {

SimTK::Vec3 toSimTK(const Vec3d& v) { return {v[0], v[1], v[2]}; }
SimTK::Transform toSimTK(const Transformd& X) {
  SimTK::Mat33 R;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) R(i, j) = X.R(i, j);
  return SimTK::Transform(SimTK::Rotation(R, true), toSimTK(X.p));
}
SimTK::MassProperties toSimTK(const MassProperties& mp) {
  const SymMat33d& I = mp.inertia;
  const SimTK::Inertia central(SimTK::Vec3(I.xx, I.yy, I.zz), SimTK::Vec3(I.xy, I.xz, I.yz));
  return SimTK::MassProperties(mp.mass, toSimTK(mp.com), central.shiftFromMassCenter(-toSimTK(mp.com), mp.mass));
}

int bodyOfSpeed(const Model& m, int u) {
  for (int b = 0; b < m.numBodies(); ++b)
    if (u >= m.body(b).uOffset && u < m.body(b).uOffset + m.body(b).nu) return b;
  return -1;
}

}  // namespace

struct SimbodyOracle::Impl {
  SimTK::MultibodySystem system;
  SimTK::SimbodyMatterSubsystem matter{system};
  SimTK::GeneralForceSubsystem forces{system};
  std::vector<SimTK::MobilizedBody> mobods;
  std::vector<SimTK::Force::MobilityConstantForce> actuators;  // one per u
  std::vector<SimTK::Constraint::SphereOnSphereContact> contacts;
  std::vector<SimTK::Force::MobilityLinearSpring> springs;  // per position actuator, as model.actuators()

  const Model* model;
};

SimbodyOracle::SimbodyOracle(const Model& model) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.model = &model;
  s.matter.setShowDefaultGeometry(false);
  SimTK::Force::UniformGravity(s.forces, s.matter, toSimTK(model.gravity()));
  for (const Body& b : model.bodies()) {
    SimTK::MobilizedBody& parent = b.parent < 0 ? s.matter.updGround() : s.mobods[b.parent];
    const SimTK::Body::Rigid body(toSimTK(b.mass));
    const SimTK::Transform X_PF = toSimTK(b.X_PF), X_BM = toSimTK(b.X_BM);
    SimTK::MobilizedBody mb;
    switch (b.mobilizer) {
      case MobilizerType::Weld: mb = SimTK::MobilizedBody::Weld(parent, X_PF, body, X_BM); break;
      case MobilizerType::Pin: mb = SimTK::MobilizedBody::Pin(parent, X_PF, body, X_BM); break;
      case MobilizerType::Slider: mb = SimTK::MobilizedBody::Slider(parent, X_PF, body, X_BM); break;
      case MobilizerType::Universal: mb = SimTK::MobilizedBody::Universal(parent, X_PF, body, X_BM); break;
      case MobilizerType::Cylinder: mb = SimTK::MobilizedBody::Cylinder(parent, X_PF, body, X_BM); break;
      case MobilizerType::Planar: mb = SimTK::MobilizedBody::Planar(parent, X_PF, body, X_BM); break;
      case MobilizerType::Gimbal: mb = SimTK::MobilizedBody::Gimbal(parent, X_PF, body, X_BM); break;
      case MobilizerType::Ball: mb = SimTK::MobilizedBody::Ball(parent, X_PF, body, X_BM); break;
      case MobilizerType::Translation: mb = SimTK::MobilizedBody::Translation(parent, X_PF, body, X_BM); break;
      case MobilizerType::Free: mb = SimTK::MobilizedBody::Free(parent, X_PF, body, X_BM); break;
    }
    s.mobods.push_back(mb);
    for (int k = 0; k < b.nu; ++k) {
      const double c = model.damping()[b.uOffset + k];
      if (c > 0) SimTK::Force::MobilityLinearDamper(s.forces, mb, SimTK::MobilizerUIndex(k), c);
      s.actuators.emplace_back(s.forces, mb, SimTK::MobilizerUIndex(k), 0.0);
    }
  }
  auto mobod = [&](int b) -> SimTK::MobilizedBody& { return b < 0 ? s.matter.updGround() : s.mobods[b]; };
  for (const LinearBushing& e : model.bushings()) {
    const auto& k = e.desc.stiffness;
    const auto& c = e.desc.damping;
    SimTK::Force::LinearBushing(s.forces, mobod(e.body1), toSimTK(e.desc.X_B1F), mobod(e.body2), toSimTK(e.desc.X_B2M),
                                SimTK::Vec6(k[0], k[1], k[2], k[3], k[4], k[5]),
                                SimTK::Vec6(c[0], c[1], c[2], c[3], c[4], c[5]));
  }
  for (const SpringDamper& e : model.springs()) {
    SimTK::Force::TwoPointLinearSpring(s.forces, mobod(e.bodyA), toSimTK(e.desc.p_AP), mobod(e.bodyB),
                                       toSimTK(e.desc.p_BQ), e.desc.stiffness, e.desc.freeLength);
    SimTK::Force::TwoPointLinearDamper(s.forces, mobod(e.bodyA), toSimTK(e.desc.p_AP), mobod(e.bodyB),
                                       toSimTK(e.desc.p_BQ), e.desc.damping);
  }
  for (const ConstantForce& e : model.constantForces())
    SimTK::Force::ConstantForce(s.forces, mobod(e.body), toSimTK(e.desc.station), toSimTK(e.desc.force));
  for (const SphereContact& e : model.contacts()) {
    s.contacts.emplace_back(mobod(e.bodyF), toSimTK(e.desc.centerOnF), e.desc.radiusOnF, mobod(e.bodyB),
                            toSimTK(e.desc.centerOnB), e.desc.radiusOnB, e.desc.enforceRolling);
  }
  for (const GroundContact& e : model.groundContacts()) {
    const GroundContactDesc& d = e.desc;
    const GroundMaterial& m = d.material;
    SimTK::SmoothSphereHalfSpaceForce f(s.forces);
    f.setParameters(m.stiffness, m.dissipation, m.staticFriction, m.dynamicFriction, m.viscousFriction,
                    m.transitionVelocity, m.cf, m.bd, m.bv);
    f.setContactSphereBody(mobod(e.body));
    f.setContactSphereLocationInBody(toSimTK(d.center));
    f.setContactSphereRadius(d.radius);
    f.setContactHalfSpaceBody(s.matter.updGround());
    // Simbody's half-space frame has its x axis into the half-space: against the outward normal.
    const SimTK::UnitVec3 intoHalfSpace(-toSimTK(d.planeNormal));
    f.setContactHalfSpaceFrame(SimTK::Transform(SimTK::Rotation(intoHalfSpace, SimTK::XAxis), toSimTK(d.planePoint)));
  }
  for (const JointStop& e : model.stops()) {
    const Body& b = model.body(bodyOfSpeed(model, e.u));
    SimTK::Force::MobilityLinearStop(s.forces, s.mobods[bodyOfSpeed(model, e.u)], SimTK::MobilizerQIndex(e.q - b.qOffset),
                                     e.desc.stiffness, e.desc.dissipation, e.desc.lower, e.desc.upper);
  }
  for (const Actuator& e : model.actuators()) {
    const int body = bodyOfSpeed(model, e.u);
    SimTK::MobilizedBody& mb = s.mobods[body];
    const int k = e.u - model.body(body).uOffset;
    if (e.desc.mode == ActuatorMode::Position)
      s.springs.emplace_back(s.forces, mb, SimTK::MobilizerQIndex(k), e.desc.kp, 0.0);
    else
      s.springs.emplace_back();
    if (e.desc.mode != ActuatorMode::Torque) SimTK::Force::MobilityLinearDamper(s.forces, mb, SimTK::MobilizerUIndex(k), e.desc.kd);
  }
  s.system.realizeTopology();
}

SimbodyOracle::~SimbodyOracle() = default;

SimbodyOracle::Result SimbodyOracle::evaluate(const std::vector<double>& q, const std::vector<double>& u,
                                              const std::vector<double>& tau,
                                              const std::vector<double>& targetPosition,
                                              const std::vector<double>& targetVelocity) {
  Impl& s = *impl_;
  SimTK::State state = s.system.getDefaultState();
  for (std::size_t b = 0; b < s.mobods.size(); ++b) {
    const Body& body = s.model->body(static_cast<int>(b));
    for (int k = 0; k < body.nq; ++k) s.mobods[b].setOneQ(state, SimTK::MobilizerQIndex(k), q[body.qOffset + k]);
    for (int k = 0; k < body.nu; ++k) s.mobods[b].setOneU(state, SimTK::MobilizerUIndex(k), u[body.uOffset + k]);
  }
  std::vector<double> constant = tau;  // plus kd * target velocity of the PD actuators
  for (std::size_t i = 0; i < s.model->actuators().size(); ++i) {
    const Actuator& e = s.model->actuators()[i];
    if (e.desc.mode == ActuatorMode::Position && !targetPosition.empty())
      s.springs[i].setQZero(state, targetPosition[e.u]);
    if (e.desc.mode != ActuatorMode::Torque && !targetVelocity.empty()) constant[e.u] += e.desc.kd * targetVelocity[e.u];
  }
  for (std::size_t i = 0; i < s.actuators.size(); ++i) s.actuators[i].setForce(state, constant[i]);
  s.system.realize(state, SimTK::Stage::Acceleration);
  Result r;
  r.udot.assign(state.getNU(), 0.0);
  for (std::size_t b = 0; b < s.mobods.size(); ++b) {
    const Body& body = s.model->body(static_cast<int>(b));
    const SimTK::Vector udotB = s.mobods[b].getUDotAsVector(state);
    for (int k = 0; k < body.nu; ++k) r.udot[body.uOffset + k] = udotB[k];
  }
  const SimTK::Vector_<SimTK::SpatialVec>& F = s.system.getRigidBodyForces(state, SimTK::Stage::Dynamics);
  for (std::size_t b = 0; b < s.mobods.size(); ++b) {
    const SimTK::SpatialVec& Fb = F[s.mobods[b].getMobilizedBodyIndex()];
    r.bodyForces.push_back({{{Fb[0][0], Fb[0][1], Fb[0][2]}}, {{Fb[1][0], Fb[1][1], Fb[1][2]}}});
  }
  for (const auto& c : s.contacts) {
    const SimTK::Vec3 lambda = c.getMultipliers(state);
    r.multipliers.push_back({{lambda[0], lambda[1], lambda[2]}});
  }
  const SimTK::Vector& f = s.system.getMobilityForces(state, SimTK::Stage::Dynamics);
  r.mobilityForces.assign(state.getNU(), 0.0);
  for (std::size_t b = 0; b < s.mobods.size(); ++b) {
    const Body& body = s.model->body(static_cast<int>(b));
    const int first = s.mobods[b].getFirstUIndex(state);
    for (int k = 0; k < body.nu; ++k) r.mobilityForces[body.uOffset + k] = f[first + k];
  }
  r.kinetic = s.system.calcKineticEnergy(state);
  r.potential = s.system.calcPotentialEnergy(state);
  return r;
}

}  // namespace lockstep::test
