#include "lockstep/engine/builtin_scenes.h"

#include <cmath>

#include "lockstep/physics/inertia.h"

namespace lockstep {

std::shared_ptr<const Model> makeChain(int links) {
  if (links < 1) throw ModelError("chain: links: must be at least 1");
  ModelBuilder mb;
  mb.setGravity({{0, -9.81, 0}});
  for (int i = 1; i <= links; ++i) {
    BodyDesc b;
    b.name = "link" + std::to_string(i);
    b.parent = i == 1 ? "ground" : "link" + std::to_string(i - 1);
    b.jointName = "joint" + std::to_string(i);
    b.mobilizer = MobilizerType::Pin;
    b.X_PF = i == 1 ? Transformd::identity() : Transformd::translation({{0, -0.5, 0}});
    b.mass.mass = 1.0;
    b.mass.com = {{0, -0.25, 0}};
    b.mass.inertia = SymMat33d::diagonal(0.02, 0.005, 0.02);
    mb.addBody(b);
  }
  return mb.build();
}

std::vector<double> chainInitialQ(int links) { return std::vector<double>(links, 0.3); }

}  // namespace lockstep

namespace lockstep {

std::shared_ptr<const Model> makeChain7Seed(SeedElements elements) {
  ModelBuilder mb = ModelBuilder::fromModel(*makeChain(7));
  if (elements.bushing) {
    LinearBushingDesc bushing;
    bushing.name = "bushing";
    bushing.body1 = "ground";
    bushing.X_B1F = Transformd::translation({{0.1, -3.5, 0}});
    bushing.body2 = "link7";
    bushing.X_B2M = Transformd::translation({{0, -0.5, 0}});
    bushing.stiffness = {10, 10, 10, 100, 100, 100};
    bushing.damping = {1, 1, 1, 5, 5, 5};
    mb.add(bushing);
  }
  if (elements.spring) {
    SpringDamperDesc spring;
    spring.name = "spring";
    spring.bodyA = "ground";
    spring.p_AP = {{0.5, 0, 0}};
    spring.bodyB = "link7";
    spring.p_BQ = {{0, -0.5, 0}};
    spring.freeLength = 0.8;
    spring.stiffness = 200;
    spring.damping = 2;
    mb.add(spring);
  }
  if (elements.contact) {
    SphereContactDesc contact;
    contact.name = "contact";
    contact.bodyF = "ground";
    contact.centerOnF = {{0.3, -3.55, 0}};
    contact.radiusOnF = 0.2;
    contact.bodyB = "link7";
    contact.centerOnB = {{0, -0.5, 0}};
    contact.radiusOnB = 0.1;
    contact.enforceRolling = false;
    mb.add(contact);
  }
  return mb.build();
}

namespace {

// docs/reference-values.md (bushing case 1): mass 1.234, com (.1,.2,.3), inertia about the body origin
// 1.234 * UnitInertia(xx 1, yy 1.1, zz 1.2, xy .01, xz .02, yz .03); stored about the com.
MassProperties bushingCase1Body() {
  MassProperties mp;
  mp.mass = 1.234;
  mp.com = {{0.1, 0.2, 0.3}};
  const SymMat33d aboutOrigin = mp.mass * SymMat33d{1.0, 1.1, 1.2, 0.01, 0.02, 0.03};
  mp.inertia = aboutOrigin - mp.mass * SpatialInertia<double>::pointInertia(mp.com);
  return mp;
}

std::string gridName(int i, int j) { return "body_" + std::to_string(i) + "_" + std::to_string(j); }

}  // namespace

std::shared_ptr<const Model> makeFreeBushingGrid(int n) {
  if (n < 1) throw ModelError("free-bushing-grid: n: must be at least 1");
  ModelBuilder mb;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      BodyDesc b;
      b.name = gridName(i, j);
      b.mobilizer = MobilizerType::Free;
      b.X_PF = Transformd::translation({{double(i), double(j), 0}});
      b.mass = bushingCase1Body();
      mb.addBody(b);
    }
  }
  const std::array<double, 6> k = {50, 50, 50, 500, 500, 500}, c = {0.5, 0.5, 0.5, 5, 5, 5};
  auto link = [&](const std::string& a, const Vec3d& onA, const std::string& b, const Vec3d& onB) {
    LinearBushingDesc d;
    d.name = a + "-" + b;
    d.body1 = a;
    d.X_B1F = Transformd::translation(onA);
    d.body2 = b;
    d.X_B2M = Transformd::translation(onB);
    d.stiffness = k;
    d.damping = c;
    mb.add(d);
  };
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      if (i + 1 < n) link(gridName(i, j), {{0.5, 0, 0}}, gridName(i + 1, j), {{-0.5, 0, 0}});
      if (j + 1 < n) link(gridName(i, j), {{0, 0.5, 0}}, gridName(i, j + 1), {{0, -0.5, 0}});
    }
  }
  link("ground", Vec3d::zero(), gridName(0, 0), Vec3d::zero());
  return mb.build();
}

std::vector<double> freeBushingGridInitialQ(int n) {
  std::vector<double> q;
  for (int k = 0; k < n * n; ++k) {
    Vec3d a{{std::sin(k + 1.0), std::cos(2.0 * k + 1.0), 0.5}};
    a = a / norm(a);
    double quat[4];
    Rotationd::aboutUnitVector(a, 0.05).toQuaternion(quat);
    q.insert(q.end(), quat, quat + 4);
    for (int i = 0; i < 3; ++i) q.push_back(0.01 * a[i]);
  }
  return q;
}

}  // namespace lockstep
