// MuJoCo's soft-constraint law (physics/soft_constraints.h; the MJCF import's "mujoco" contact law):
// the constrained accelerations against MuJoCo's own (Debian's libmujoco, its Newton solver driven to
// convergence) at random states with contacts and limits active: primitive geoms on a free body
// against a plane, a hinge beyond its range, and Gymnasium's robots.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/engine/batch.h"
#include "lockstep/io/mjcf.h"
#include "lockstep/io/scene.h"
#include "lockstep/physics/soft_constraints.h"
#include "central_differences.h"
#include "mjcf_compliant.h"
#include "test_util.h"

namespace lockstep::test {
namespace {

struct MjDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
  void operator()(mjData* d) const { mj_deleteData(d); }
};

std::string writeModel(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// MuJoCo's reference: Newton's method to convergence (the law's optimum is unique).
std::unique_ptr<mjModel, MjDeleter> referenceModel(const std::string& path) {
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  if (!m) {
    ADD_FAILURE() << path << ": " << error;
    return nullptr;
  }
  m->opt.solver = mjSOL_NEWTON;
  m->opt.iterations = 1000;
  m->opt.tolerance = 1e-15;
  return std::unique_ptr<mjModel, MjDeleter>(m);
}

MjcfImport softImport(const std::string& path) {
  MjcfOptions o;
  o.law = MjcfOptions::ContactLaw::Mujoco;
  return importMjcfFile(path, o);
}

// qacc of world 0 at MuJoCo's state (qpos, qvel, ctrl 0), Lockstep's and MuJoCo's, in MuJoCo's dof
// order; the largest |difference| relative to max(1, max |qacc|).
double compareAtState(const MjcfImport& mjcf, Batch<double>& batch, const mjModel* m, mjData* d, int* constraints) {
  mj_forward(m, d);
  batch.setQ(0, qFromMujoco(mjcf, d->qpos));
  batch.setU(0, uFromMujoco(mjcf, d->qpos, d->qvel));
  batch.evaluate();
  EXPECT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
  const std::vector<double> ours = batch.udot(0), theirs = uFromMujoco(mjcf, d->qpos, d->qacc);
  double scale = 1, worst = 0;
  for (double a : theirs) scale = std::max(scale, std::abs(a));
  for (std::size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, std::abs(ours[i] - theirs[i]) / scale);
  *constraints = d->nefc;
  return worst;
}

// A geom on a free body, and more of <option>'s attributes (MuJoCo's elliptic cones).
struct PrimitiveCase {
  const char* geom;
  const char* option;
};
class SoftPrimitive : public ::testing::TestWithParam<PrimitiveCase> {};

// One geom of each shape on a free body, dropped on a plane at random poses and velocities within a
// few millimetres of it: every contact point MuJoCo makes, with friction (a pyramid, or an elliptic
// cone with impratio 3), and with torsional and rolling friction (condim 4 and 6: the geom's friction
// "0.9 0.02 0.01" against the plane's 0.7 and MuJoCo's defaults, the larger of each).
TEST_P(SoftPrimitive, AccelerationsEqualMujocosOnAPlane) {
  const std::string geom = GetParam().geom, option = GetParam().option;
  // MuJoCo takes the larger condim of the two geoms: a frictionless geom's plane is frictionless too.
  const std::string plane = geom.find("condim=\"1\"") != std::string::npos ? "condim=\"1\"" : "";
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();  // .../<case>
  const std::string path = writeModel("soft_" + test.substr(test.find('/') + 1) + ".xml", R"(<mujoco>
  <option timestep="0.005" )" + option + R"(/>
  <worldbody>
    <geom type="plane" size="5 5 .1" friction="0.7" )" + plane + R"(/>
    <body name="b" pos="0 0 1"><freejoint/>
      <geom )" + geom + R"( mass="2" friction="0.9 0.02 0.01" margin="0.002"/></body>
  </worldbody>
</mujoco>)");
  const MjcfImport mjcf = softImport(path);
  ASSERT_FALSE(mjcf.model->planeContacts().empty());
  auto m = referenceModel(path);
  ASSERT_TRUE(m);
  std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
  Batch<double> batch(mjcf.model, 1, Backend::Cpu);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(-1, 1);
  double worst = 0;
  int touching = 0;
  std::map<int, int> zones;  // MuJoCo's elliptic rows by state (mjCNSTRSTATE_*)
  for (int trial = 0; trial < 40; ++trial) {
    mj_resetData(m.get(), d.get());
    double q[4], n = 0;
    for (double& x : q) {
      x = unit(rng);
      n += x * x;
    }
    for (int k = 0; k < 4; ++k) d->qpos[3 + k] = q[k] / std::sqrt(n);
    d->qpos[0] = 0.1 * unit(rng);
    d->qpos[1] = 0.1 * unit(rng);
    d->qpos[2] = 0;
    mj_kinematics(m.get(), d.get());
    // The lowest point of the geom, then the body raised so that it sits within -3 .. +1 mm.
    double lowest = 1e9;
    for (int k = 0; k < 8; ++k) {
      const mjtNum* size = m->geom_size + 3;
      const int type = m->geom_type[1];
      double v[3] = {(k & 1 ? 1 : -1) * size[0], (k & 2 ? 1 : -1) * size[1], (k & 4 ? 1 : -1) * size[2]};
      if (type == mjGEOM_SPHERE) v[0] = v[1] = v[2] = 0;
      const double* R = d->geom_xmat + 9;
      double z = d->geom_xpos[5];
      for (int c = 0; c < 3; ++c) z += R[6 + c] * v[c];
      if (type == mjGEOM_SPHERE || type == mjGEOM_CAPSULE) {
        const double a = (type == mjGEOM_CAPSULE ? size[1] : 0) * R[8];
        z = d->geom_xpos[5] - std::abs(a) - size[0];
      } else if (type == mjGEOM_CYLINDER) {
        const double a = size[1] * std::abs(R[8]), r = size[0] * std::sqrt(std::max(0.0, 1 - R[8] * R[8]));
        z = d->geom_xpos[5] - a - r;
      } else if (type == mjGEOM_ELLIPSOID) {  // the support along -z: |diag(size) R' z|
        double s = 0;
        for (int c = 0; c < 3; ++c) s += (R[6 + c] * size[c]) * (R[6 + c] * size[c]);
        z = d->geom_xpos[5] - std::sqrt(s);
      }
      lowest = std::min(lowest, z);
    }
    d->qpos[2] = -lowest + 0.001 * (unit(rng) - 1) * 2;
    // Every third state nearly at rest, where friction holds (a cone's lower zone), the others sliding.
    const double speed = trial % 3 == 0 ? 0.005 : 0.5;
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = speed * unit(rng);
    int constraints = 0;
    const double error = compareAtState(mjcf, batch, m.get(), d.get(), &constraints);
    for (int i = 0; i < d->nefc; ++i) {
      if (d->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC) ++zones[d->efc_state[i]];
      // A frictionless geom's rows are MuJoCo's frictionless ones, whatever the cone.
      if (!plane.empty()) {
        EXPECT_EQ(d->efc_type[i], mjCNSTR_CONTACT_FRICTIONLESS);
      }
    }
    EXPECT_LT(error, 1e-6) << geom << " " << option << " trial " << trial << " (" << constraints << " constraint rows)";
    worst = std::max(worst, error);
    touching += constraints > 0;
  }
  EXPECT_GT(touching, 30);
  if (option.find("elliptic") != std::string::npos && geom.find("condim") == std::string::npos) {
    // The cone's two zones with a force both occur: sliding (on the cone) and holding (inside it).
    EXPECT_GT(zones[mjCNSTRSTATE_CONE], 0);
    EXPECT_GT(zones[mjCNSTRSTATE_QUADRATIC], 0);
    std::printf("elliptic rows: %d on the cone, %d inside, %d free\n", zones[mjCNSTRSTATE_CONE],
                zones[mjCNSTRSTATE_QUADRATIC], zones[mjCNSTRSTATE_SATISFIED]);
  }
  std::printf("%s %s: largest |qacc - MuJoCo's| / max(1, |qacc|) over 40 states: %.2e\n", geom.c_str(), option.c_str(),
              worst);
}

constexpr const char* kElliptic = "cone=\"elliptic\" impratio=\"3\"";
INSTANTIATE_TEST_SUITE_P(Shapes, SoftPrimitive,
                         ::testing::Values(PrimitiveCase{"type=\"sphere\" size=\"0.1\"", ""},
                                           PrimitiveCase{"type=\"capsule\" size=\"0.05 0.2\"", ""},
                                           PrimitiveCase{"type=\"box\" size=\"0.1 0.15 0.05\"", ""},
                                           PrimitiveCase{"type=\"cylinder\" size=\"0.08 0.1\"", ""},
                                           PrimitiveCase{"type=\"ellipsoid\" size=\"0.12 0.07 0.05\"", ""},
                                           PrimitiveCase{"type=\"sphere\" size=\"0.1\" condim=\"1\"", ""},
                                           PrimitiveCase{"type=\"sphere\" size=\"0.1\"", kElliptic},
                                           PrimitiveCase{"type=\"capsule\" size=\"0.05 0.2\"", kElliptic},
                                           PrimitiveCase{"type=\"box\" size=\"0.1 0.15 0.05\"", kElliptic},
                                           PrimitiveCase{"type=\"cylinder\" size=\"0.08 0.1\"", kElliptic},
                                           PrimitiveCase{"type=\"ellipsoid\" size=\"0.12 0.07 0.05\"", kElliptic},
                                           PrimitiveCase{"type=\"sphere\" size=\"0.1\" condim=\"1\"", kElliptic},
                                           // torsional (condim 4) and rolling (condim 6) friction
                                           PrimitiveCase{"type=\"box\" size=\"0.1 0.15 0.05\" condim=\"4\"", ""},
                                           PrimitiveCase{"type=\"sphere\" size=\"0.1\" condim=\"6\"", ""},
                                           PrimitiveCase{"type=\"box\" size=\"0.1 0.15 0.05\" condim=\"4\"", kElliptic},
                                           PrimitiveCase{"type=\"capsule\" size=\"0.05 0.2\" condim=\"6\"", kElliptic}),
                         [](const ::testing::TestParamInfo<PrimitiveCase>& info) {
                           const std::string s = info.param.geom;
                           std::string name = s.substr(6, s.find('"', 6) - 6);
                           if (s.find("condim=\"1\"") != std::string::npos) name += "Frictionless";
                           if (s.find("condim=\"4\"") != std::string::npos) name += "Torsional";
                           if (s.find("condim=\"6\"") != std::string::npos) name += "Rolling";
                           if (*info.param.option) name += "Elliptic";
                           return name;
                         });

// An elliptic cone's forces, zones and Hessian (softConeForce) and its cost along a line
// (softConeLine) against MuJoCo's own (mj_constraintUpdate: efc_force, efc_state, the contact's cone
// Hessian H) at J qacc - aref drawn at random and exactly on the zones' boundaries, for condim 3, 4
// (torsional friction) and 6 (rolling friction). friction 1 and impratio 4 make MuJoCo's regular
// cone's mu exactly 0.5 (sqrt(R1 / R0) = sqrt(1 / 4)), so that x = (1.25, 0.75, 1, 0, ..) lies
// exactly on the cone (N = mu T) and (-5, 0.75, 1, 0, ..) exactly on its lower boundary (mu N + T = 0).
TEST(SoftCone, ForcesZonesAndHessianAreMujocos) {
  for (int dim : {3, 4, 6}) {
    const std::string geom = "friction=\"1 0.3 0.05\" condim=\"" + std::to_string(dim) + "\"";
    const std::string path = writeModel("soft_cone_zones_" + std::to_string(dim) + ".xml", R"(<mujoco>
  <option cone="elliptic" impratio="4"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" )" + geom + R"(/>
    <body pos="0 0 0.099"><freejoint/><geom type="sphere" size="0.1" mass="1" )" + geom + R"(/></body>
  </worldbody>
</mujoco>)");
    auto m = referenceModel(path);
    ASSERT_TRUE(m);
    std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
    mj_forward(m.get(), d.get());
    ASSERT_EQ(d->ncon, 1);
    ASSERT_EQ(d->nefc, dim);
    ASSERT_EQ(d->efc_type[0], mjCNSTR_CONTACT_ELLIPTIC);
    const mjContact& con = d->contact[0];
    ASSERT_EQ(con.mu, 0.5);
    double scale[6] = {con.mu}, D[6];
    for (int k = 1; k < dim; ++k) scale[k] = con.friction[k - 1];
    for (int k = 0; k < dim; ++k) D[k] = d->efc_D[k];
    std::vector<std::array<double, 6>> xs = {{1.25, 0.75, 1},  {-5, 0.75, 1},    {1, 0, 0},       {-1, 0, 0},
                                              {0, 0, 0},       {1.25, -0.75, -1}, {-5, -1, 0.75}, {0.5, 0.75, 1}};
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> unit(-3, 3), normal(-12, 3);  // (below the cone: x0 <= -4 T)
    for (int k = 0; k < 300; ++k) xs.push_back({normal(rng), unit(rng), unit(rng), unit(rng), unit(rng), unit(rng)});
    int zones[3] = {0, 0, 0};  // MuJoCo's states: satisfied, quadratic, cone
    for (const auto& x : xs) {
      double jar[6], cost = 0;
      for (int k = 0; k < dim; ++k) jar[k] = x[k];
      mj_constraintUpdate(m.get(), d.get(), jar, &cost, 1);
      const SoftConeForce<double> c = softConeForce<double>(x.data(), scale, D, dim, true);
      const int state = d->efc_state[0];
      ++zones[state == mjCNSTRSTATE_SATISFIED ? 0 : state == mjCNSTRSTATE_QUADRATIC ? 1 : 2];
      std::string at = "condim " + std::to_string(dim) + " at x = (";
      for (int k = 0; k < dim; ++k) at += std::to_string(x[k]) + (k + 1 < dim ? ", " : "), MuJoCo's state ");
      at += std::to_string(state);
      EXPECT_EQ(bool(c.engaged), state != mjCNSTRSTATE_SATISFIED) << at;
      for (int i = 0; i < dim; ++i)
        EXPECT_NEAR(c.force[i], d->efc_force[i], 1e-12 * (1 + std::abs(d->efc_force[i]))) << at << " row " << i;
      // The Hessian in jar: on the cone MuJoCo's contact H; below it diag(D); above it 0.
      for (int a = 0; a < dim; ++a)
        for (int b = 0; b < dim; ++b) {
          const double theirs = state == mjCNSTRSTATE_CONE        ? con.H[dim * a + b]
                                : state == mjCNSTRSTATE_QUADRATIC ? (a == b ? D[a] : 0.0)
                                                                  : 0.0;
          EXPECT_NEAR(c.H[dim * a + b], theirs, 1e-12 * (1 + std::abs(theirs))) << at << " H " << a << b;
        }
      // Along a random line: the slope is -f . dx and the curvature dx' H dx.
      double dx[6];
      for (int k = 0; k < dim; ++k) dx[k] = unit(rng);
      double slope = 0, curvature = 0;
      softConeLine<double>(x.data(), dx, scale, D, dim, true, &slope, &curvature);
      double fdx = 0, dHd = 0;
      for (int a = 0; a < dim; ++a) {
        fdx -= c.force[a] * dx[a];
        for (int b = 0; b < dim; ++b) dHd += dx[a] * c.H[dim * a + b] * dx[b];
      }
      EXPECT_NEAR(slope, fdx, 1e-12 * (1 + std::abs(fdx))) << at;
      EXPECT_NEAR(curvature, dHd, 1e-11 * (1 + std::abs(dHd))) << at;
    }
    std::printf("elliptic cone of condim %d at %zu points: %d above, %d below, %d on it\n", dim, xs.size(), zones[0],
                zones[1], zones[2]);
    EXPECT_EQ(zones[0] + zones[1] + zones[2], int(xs.size()));
    EXPECT_GT(zones[0], 10);
    EXPECT_GT(zones[1], 10);
    EXPECT_GT(zones[2], 10);
  }
}

// A hinge pendulum pushed into and beyond both ends of its range.
TEST(SoftLimit, AccelerationsEqualMujocosBeyondTheRange) {
  const std::string path = writeModel("soft_limit.xml", R"(<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="arm"><joint name="hinge" type="hinge" axis="0 1 0" limited="true" range="-30 45" margin="0.01"
        solreflimit="0.03 0.8" solimplimit="0.8 0.95 0.01 0.4 3"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04" mass="1"/></body>
  </worldbody>
</mujoco>)");
  const MjcfImport mjcf = softImport(path);
  ASSERT_EQ(mjcf.model->softLimits().size(), 1u);
  auto m = referenceModel(path);
  ASSERT_TRUE(m);
  std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
  Batch<double> batch(mjcf.model, 1, Backend::Cpu);
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> unit(-1, 1);
  int engaged = 0;
  for (int trial = 0; trial < 40; ++trial) {
    mj_resetData(m.get(), d.get());
    d->qpos[0] = (trial % 2 ? 45 : -30) * M_PI / 180 + 0.02 * unit(rng);
    d->qvel[0] = 2 * unit(rng);
    int constraints = 0;
    EXPECT_LT(compareAtState(mjcf, batch, m.get(), d.get(), &constraints), 1e-6) << "trial " << trial;
    engaged += constraints > 0;
  }
  EXPECT_GT(engaged, 20);
}

// Two free bodies with a sphere, capsule or box each, the second at random poses near the first: MuJoCo's
// contacts (mj_collision in mj_forward: how many, and each one's dist, point and normal) against
// Lockstep's pair contact points (softContact), 1,000 poses per pair of shapes, every fifth with the
// two axes parallel or antiparallel (a capsule pair's two-point case). The first geom's margin of
// 5 cm makes most poses touch (MuJoCo 2.2.2 takes the larger margin, Lockstep the sum: one is 0).
using ShapePair = std::pair<const char*, const char*>;
class SoftPair : public ::testing::TestWithParam<ShapePair> {};

// "SphereCapsule": the test's name of a pair of shapes.
std::string shapePairName(const ::testing::TestParamInfo<ShapePair>& info) {
  std::string name;
  for (const std::string s : {info.param.first, info.param.second}) {
    std::string kind = s.substr(6, s.find('"', 6) - 6);
    kind[0] = static_cast<char>(std::toupper(kind[0]));
    name += kind;
  }
  return name;
}

TEST_P(SoftPair, ContactsEqualMujocosAtRandomPoses) {
  const auto [first, second] = GetParam();
  const std::string path = writeModel("soft_pair_" + shapePairName({GetParam(), 0}) + ".xml",
                                      std::string(R"(<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <body name="a"><freejoint/><geom name="g1" )") + first + R"( mass="1" margin="0.05"/></body>
    <body name="b"><freejoint/><geom name="g2" )" + second + R"( mass="2"/></body>
  </worldbody>
</mujoco>)");
  const MjcfImport mjcf = softImport(path);
  ASSERT_EQ(mjcf.model->pairContacts().size(), 1u);
  auto m = referenceModel(path);
  ASSERT_TRUE(m);
  std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
  Batch<double> batch(mjcf.model, 1, Backend::Cpu);
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> unit(-1, 1);
  auto randomQuaternion = [&](double* q) {
    double n = 0;
    for (int k = 0; k < 4; ++k) {
      q[k] = unit(rng);
      n += q[k] * q[k];
    }
    for (int k = 0; k < 4; ++k) q[k] /= std::sqrt(n);
  };
  const double reach = m->geom_rbound[0] + m->geom_rbound[1] + 0.05;
  int touching = 0, pairs = 0, inside = 0;
  double worst = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    mj_resetData(m.get(), d.get());
    randomQuaternion(d->qpos + 3);
    randomQuaternion(d->qpos + 10);
    if (trial % 5 == 0) {  // the second body's axes along the first's, or turned half a turn about x
      const double* q = d->qpos + 3;
      const double half[4] = {-q[1], q[0], q[3], -q[2]};  // q * (0, 1, 0, 0)
      for (int k = 0; k < 4; ++k) d->qpos[10 + k] = trial % 10 == 0 ? q[k] : half[k];
    }
    for (int k = 0; k < 3; ++k) d->qpos[7 + k] = reach * unit(rng) / std::sqrt(3.0);
    mj_forward(m.get(), d.get());
    batch.setQ(0, qFromMujoco(mjcf, d->qpos));
    batch.setU(0, uFromMujoco(mjcf, d->qpos, d->qvel));
    batch.evaluate();
    ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
    const FieldView f = batch.field("softContact", MemorySpace::Host);
    const double* points = static_cast<const double*>(f.data);  // active dist pos normal force, per point
    const std::int64_t width = f.components / batch.sizes().nSoftPoints;
    std::vector<const double*> active;
    for (std::int64_t k = 0; k < batch.sizes().nSoftPoints; ++k)
      if (points[width * k] > 0.5) active.push_back(points + width * k);
    // MuJoCo 2.2.2 gives a sphere whose centre is inside a box the depth of its radius alone; MuJoCo 4
    // (and Lockstep, python/tests/test_mjcf_pairs.py) adds the nearest face's distance: not compared.
    const bool box = m->geom_type[0] == mjGEOM_BOX || m->geom_type[1] == mjGEOM_BOX;
    const double radius = m->geom_size[3 * (m->geom_type[0] == mjGEOM_SPHERE ? 0 : 1)];
    if (box && d->ncon == 1 && d->contact[0].dist == -radius) {
      ++inside;
      continue;
    }
    ASSERT_EQ(static_cast<int>(active.size()), d->ncon) << first << " / " << second << " trial " << trial;
    for (int c = 0; c < d->ncon; ++c) {
      const mjContact& con = d->contact[c];
      double error = std::abs(active[c][1] - con.dist);
      for (int k = 0; k < 3; ++k)
        error = std::max({error, std::abs(active[c][2 + k] - con.pos[k]), std::abs(active[c][5 + k] - con.frame[k])});
      EXPECT_LT(error, 1e-9) << first << " / " << second << " trial " << trial << " contact " << c;
      worst = std::max(worst, error);
    }
    touching += d->ncon > 0;
    pairs += d->ncon > 1;
  }
  EXPECT_GT(touching, 300);
  if (std::string(first).find("capsule") != std::string::npos && std::string(second).find("capsule") != std::string::npos) {
    EXPECT_GT(pairs, 20) << "too few parallel capsules touching at two points";
  }
  std::printf("%s / %s: %d of 1000 poses touching (%d at two points, %d with the sphere's centre in the box, not "
              "compared): largest difference %.2e\n", first, second, touching, pairs, inside, worst);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, SoftPair,
    ::testing::Values(std::make_pair("type=\"sphere\" size=\"0.1\"", "type=\"sphere\" size=\"0.07\""),
                      std::make_pair("type=\"sphere\" size=\"0.1\"", "type=\"capsule\" size=\"0.05 0.2\""),
                      std::make_pair("type=\"capsule\" size=\"0.05 0.2\"", "type=\"sphere\" size=\"0.1\""),
                      std::make_pair("type=\"capsule\" size=\"0.05 0.2\"", "type=\"capsule\" size=\"0.04 0.15\""),
                      std::make_pair("type=\"sphere\" size=\"0.1\"", "type=\"box\" size=\"0.2 0.1 0.05\""),
                      std::make_pair("type=\"box\" size=\"0.2 0.1 0.05\"", "type=\"sphere\" size=\"0.06\"")),
    shapePairName);

// A field's value c of world w.
double fieldValue(const FieldView& f, std::int64_t w, std::int64_t c) {
  return static_cast<const double*>(f.data)[w * f.worldStride + c * f.componentStride];
}

// Two boxes, the upper one smaller, its faces along the lower one's and 1 mm into it: MuJoCo's box
// pair clips the upper box's bottom face to the lower one's top face, which holds it whole: four
// points at its bottom corners, 1 mm deep, the normal up (from the first box to the second), each
// midway between the two faces.
TEST(SoftPair, AlignedBoxesTouchAtTheSmallerBoxsCorners) {
  const std::string path = writeModel("soft_pair_boxes.xml", R"(<mujoco>
  <worldbody>
    <body name="a"><freejoint/><geom name="g1" type="box" size="0.3 0.2 0.1"/></body>
    <body name="b" pos="0.05 -0.02 0.149"><freejoint/><geom name="g2" type="box" size="0.1 0.15 0.05"/></body>
  </worldbody>
</mujoco>)");
  const MjcfImport mjcf = softImport(path);
  ASSERT_EQ(mjcf.model->pairContacts().size(), 1u);
  Batch<double> batch(mjcf.model, 1, Backend::Cpu);
  const double qpos[14] = {0, 0, 0, 1, 0, 0, 0, 0.05, -0.02, 0.149, 1, 0, 0, 0};  // MuJoCo's qpos0
  batch.setQ(0, qFromMujoco(mjcf, qpos));
  batch.evaluate();
  const FieldView f = batch.field("softContact", MemorySpace::Host);
  ASSERT_EQ(batch.sizes().nSoftPoints, 8);
  std::vector<std::array<double, 2>> corners;
  for (int k = 0; k < 8; ++k) {
    double p[8];
    for (int c = 0; c < 8; ++c) p[c] = fieldValue(f, 0, kSoftContactValues * k + c);
    if (p[0] < 0.5) continue;
    EXPECT_NEAR(p[1], -0.001, 1e-15);
    EXPECT_NEAR(p[4], 0.0995, 1e-15);  // midway between the faces at 0.1 and 0.099
    EXPECT_EQ(p[5], 0);
    EXPECT_EQ(p[6], 0);
    EXPECT_EQ(p[7], 1);
    corners.push_back({p[2], p[3]});
  }
  ASSERT_EQ(corners.size(), 4u);
  std::sort(corners.begin(), corners.end());
  const std::vector<std::array<double, 2>> expected = {{-0.05, -0.17}, {-0.05, 0.13}, {0.15, -0.17}, {0.15, 0.13}};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(corners[k][0], expected[k][0], 1e-15);
    EXPECT_NEAR(corners[k][1], expected[k][1], 1e-15);
  }
}

// A pair of free bodies with geoms geom1 and geom2 (a pair of `slots` points) in packs of worlds
// equals each world alone, bit for bit: 40 worlds at random relative poses and speeds (no contact,
// one point and, with more slots, several in one pack), then each alone; option: more of <option>'s
// attributes.
void expectPairsInAPackEqualEachWorldAlone(const std::string& name, const std::string& geom1, const std::string& geom2,
                                           int slots, const std::string& option = "") {
  const std::string path = writeModel(name, R"(<mujoco>
  <option gravity="0 0 0" )" + option + R"(/>
  <worldbody>
    <body name="a"><freejoint/><geom name="g1" )" + geom1 + R"(/></body>
    <body name="b"><freejoint/><geom name="g2" )" + geom2 + R"(/></body>
  </worldbody>
</mujoco>)");
  const MjcfImport mjcf = softImport(path);
  constexpr int kWorlds = 40;
  Batch<double> batch(mjcf.model, kWorlds, Backend::Cpu), alone(mjcf.model, 1, Backend::Cpu);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::vector<std::vector<double>> qs, us;
  for (int w = 0; w < kWorlds; ++w) {
    std::vector<double> qpos(14, 0.0), qvel(12);
    for (double& v : qvel) v = unit(rng);
    for (int body = 0; body < 2; ++body) {
      double n = 0;
      for (int k = 0; k < 4; ++k) n += (qpos[7 * body + 3 + k] = unit(rng)) * qpos[7 * body + 3 + k];
      for (int k = 0; k < 4; ++k) qpos[7 * body + 3 + k] /= std::sqrt(n);
    }
    for (int k = 0; k < 3; ++k) qpos[7 + k] = 0.2 * unit(rng);
    qs.push_back(qFromMujoco(mjcf, qpos.data()));
    us.push_back(uFromMujoco(mjcf, qpos.data(), qvel.data()));
    batch.setQ(w, qs.back());
    batch.setU(w, us.back());
  }
  batch.evaluate();
  const FieldView all = batch.field("softContact", MemorySpace::Host);
  const FieldView udot = batch.field("udot", MemorySpace::Host);
  int counts[3] = {0, 0, 0};  // worlds with no point, one, several
  for (int w = 0; w < kWorlds; ++w) {
    alone.setQ(0, qs[w]);
    alone.setU(0, us[w]);
    alone.evaluate();
    const FieldView one = alone.field("softContact", MemorySpace::Host);
    const FieldView oneUdot = alone.field("udot", MemorySpace::Host);
    int active = 0;
    for (std::int64_t c = 0; c < one.components; ++c) {
      ASSERT_EQ(fieldValue(one, 0, c), fieldValue(all, w, c)) << "world " << w << " value " << c;
      active += c % kSoftContactValues == 0 && fieldValue(one, 0, c) > 0.5;
    }
    for (std::int64_t c = 0; c < oneUdot.components; ++c)
      ASSERT_EQ(fieldValue(oneUdot, 0, c), fieldValue(udot, w, c)) << "world " << w;
    ++counts[std::min(active, 2)];
  }
  EXPECT_GE(counts[0], 3);
  EXPECT_GE(counts[1], 3);
  if (slots > 1) {
    EXPECT_GE(counts[2], 3);
  }
}

// MuJoCo's elliptic cones (a capsule's two points on a box, sliding or held).
TEST(SoftPair, EllipticConesInAPackEqualEachWorldAlone) {
  expectPairsInAPackEqualEachWorldAlone("soft_pair_elliptic_packed.xml", R"(type="capsule" size="0.05 0.15")",
                                        R"(type="box" size="0.12 0.08 0.1")", 2, R"(cone="elliptic" impratio="3")");
}

// The box pair (clipped faces, edge pairs).
TEST(SoftPair, BoxPairsInAPackEqualEachWorldAlone) {
  expectPairsInAPackEqualEachWorldAlone("soft_pair_boxes_packed.xml", R"(type="box" size="0.12 0.08 0.1" margin="0.01")",
                                        R"(type="box" size="0.1 0.07 0.05")", 8);
}

// The sphere-ellipsoid pair (a bisection per lane, the centre outside and inside).
TEST(SoftPair, SphereEllipsoidPairsInAPackEqualEachWorldAlone) {
  expectPairsInAPackEqualEachWorldAlone("soft_pair_sphere_ellipsoid_packed.xml", R"(type="sphere" size="0.05" margin="0.01")",
                                        R"(type="ellipsoid" size="0.12 0.07 0.05")", 1);
}

// The ellipsoid-box pair (faces; the edges' and corners' normal lines: bisections lane by lane) and
// the ellipsoid pair (Newton's method on the sphere from 13 directions, each lane its own steps).
TEST(SoftPair, EllipsoidBoxPairsInAPackEqualEachWorldAlone) {
  expectPairsInAPackEqualEachWorldAlone("soft_pair_ellipsoid_box_packed.xml",
                                        R"(type="ellipsoid" size="0.12 0.07 0.05" margin="0.01")",
                                        R"(type="box" size="0.1 0.07 0.05")", 1);
}
TEST(SoftPair, EllipsoidPairsInAPackEqualEachWorldAlone) {
  expectPairsInAPackEqualEachWorldAlone("soft_pair_ellipsoids_packed.xml", R"(type="ellipsoid" size="0.12 0.07 0.05")",
                                        R"(type="ellipsoid" size="0.09 0.11 0.04")", 1);
}
// The ellipsoid-cylinder pair (the side's quarter arcs; Newton's method in polar angles about each
// cap's normal, each lane stopping on its own step).
TEST(SoftPair, EllipsoidCylinderPairsInAPackEqualEachWorldAlone) {
  expectPairsInAPackEqualEachWorldAlone("soft_pair_ellipsoid_cylinder_packed.xml",
                                        R"(type="ellipsoid" size="0.12 0.07 0.05" margin="0.01")",
                                        R"(type="cylinder" size="0.08 0.1")", 1);
}

// The capsule-box pair (MuJoCo's second point by a corner, an edge or a face).
TEST(SoftPair, CapsuleBoxPairsInAPackEqualEachWorldAlone) {
  expectPairsInAPackEqualEachWorldAlone("soft_pair_capsule_box_packed.xml",
                                        R"(type="capsule" size="0.04 0.12" margin="0.01")",
                                        R"(type="box" size="0.1 0.07 0.05")", 2);
}

// A pair contact's bad values are refused with the element, the field and the reason: when the model
// is built, and as per-world parameters.
TEST(SoftPair, BadValuesAreRefusedNamingTheFieldAndTheReason) {
  const std::string path = writeModel("soft_pair_bad.xml", R"(<mujoco>
  <worldbody>
    <body name="a"><freejoint/><geom name="g1" type="sphere" size="0.1"/></body>
    <body name="b"><freejoint/><geom name="g2" type="capsule" size="0.05 0.2"/></body>
  </worldbody>
</mujoco>)");
  const MjcfImport mjcf = softImport(path);
  ASSERT_EQ(mjcf.model->pairContacts().size(), 1u);
  const PairContactDesc good = mjcf.model->pairContacts()[0].desc;
  EXPECT_EQ(good.mujocoBody1, 1);  // the geoms' MuJoCo bodies (cfrc_ext): a, then b
  EXPECT_EQ(good.mujocoBody2, 2);
  auto refused = [&](auto change, const std::string& text) {
    PairContactDesc d = good;
    d.name = "bad";
    change(d);
    ModelBuilder builder = ModelBuilder::fromModel(*mjcf.model);
    builder.add(d);
    EXPECT_ERROR_CONTAINS_OF(builder.build(), text, ModelError);
  };
  refused([](PairContactDesc& d) { d.body2 = d.body1; }, "pair contact 'bad': body2: must differ from body1");
  refused([](PairContactDesc& d) { d.body2 = "nowhere"; }, "pair contact 'bad': body2: no body named");
  refused([](PairContactDesc& d) { std::swap(d.shape1, d.shape2); }, "shape1: must not come after shape2");
  refused([](PairContactDesc& d) { d.shape1 = kShapeCylinder; d.shape2 = kShapeBox; },
          "shape: a sphere or a capsule with any shape, an ellipsoid with an ellipsoid, a cylinder or a box, or two boxes");
  refused([](PairContactDesc& d) { d.shape1 = kShapeCylinder; d.shape2 = kShapeCylinder; }, "cylinder pairs");
  refused([](PairContactDesc& d) { d.shape1 = kShapeCylinder; d.shape2 = kShapeBox; }, "cylinder-box: not yet");
  refused([](PairContactDesc& d) { d.size2[1] = 0; }, "size2: must be > 0 (a capsule takes 2)");
  refused([](PairContactDesc& d) { d.condim = 5; }, "condim: 1, 3, 4 or 6");
  refused([](PairContactDesc& d) { d.friction = -1; }, "friction");
  refused([](PairContactDesc& d) { d.torsional = -1; }, "pair contact 'bad': torsional: must be");
  refused([](PairContactDesc& d) { d.rolling = std::nan(""); }, "pair contact 'bad': rolling");
  refused([](PairContactDesc& d) { d.solref = {{0.02, -1}}; }, "solref: both positive");
  refused([](PairContactDesc& d) { d.impratio = 0; }, "impratio: must be > 0");
  refused([](PairContactDesc& d) { d.mujocoBody2 = 7; }, "pair contact 'bad': mujocoBody2: must be -1 or one of the "
                                                          "model's 3 MuJoCo bodies");
  refused([](PairContactDesc& d) { d.mujocoBody1 = 2; }, "pair contact 'bad': mujocoBody1: MuJoCo body 'b' is not on "
                                                          "the contact's body");
  Batch<double> batch(mjcf.model, 2, Backend::Cpu);
  const std::string name = "pair_contact." + good.name;
  EXPECT_ERROR_CONTAINS_OF(batch.setParameter(1, name + ".friction", -1), "friction", std::exception);
  EXPECT_ERROR_CONTAINS_OF(batch.setParameter(1, name + ".margin", -0.1), "margin", std::exception);
  EXPECT_ERROR_CONTAINS_OF(batch.setParameter(1, name + ".torsional", -0.1), "torsional", std::exception);
  EXPECT_ERROR_CONTAINS_OF(batch.setParameter(1, name + ".rolling", -0.1), "rolling", std::exception);
  EXPECT_ERROR_CONTAINS_OF(batch.setParameter(1, name + ".size2.0", -0.1), "size2", std::exception);
  // The other world keeps its values and runs.
  batch.evaluate();
  EXPECT_EQ(batch.status(0), kStatusOk);
  EXPECT_EQ(batch.parameter(0, name + ".friction"), good.friction);
}

// Gymnasium's robot `name` (models/mjcf/) written to a temporary file with the floor's margin 0, and
// the robots' own margins of 1 mm (hopper, humanoid) 0: MuJoCo 2.2.2 (the libmujoco here) takes the
// larger of two geoms' margins where MuJoCo 3 and later (and Lockstep) add them; with one of them 0
// the two agree.
std::string robotWithBareFloor(const std::string& name, const std::string& prefix) {
  std::ifstream file(std::string(LOCKSTEP_SOURCE_DIR) + "/models/mjcf/" + name);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::size_t floor = text.find("name=\"floor\"");
  if (floor != std::string::npos) text.insert(floor, "margin=\"0\" ");
  for (std::size_t at; (at = text.find("margin=\"0.001\"")) != std::string::npos;) text.replace(at, 14, "margin=\"0\"");
  return writeModel(prefix + name, text);
}

// Whether every contact MuJoCo found at d (after mj_forward) is against the world body's geoms.
bool floorContactsOnly(const mjModel* m, const mjData* d) {
  for (int c = 0; c < d->ncon; ++c)
    if (m->geom_bodyid[d->contact[c].geom1] != 0 && m->geom_bodyid[d->contact[c].geom2] != 0) return false;
  return true;
}

// A test's name for a robot's file: "half_cheetah.xml" -> "halfcheetah".
std::string robotTestName(const ::testing::TestParamInfo<const char*>& info) {
  std::string name = info.param;
  name = name.substr(0, name.find('.'));
  name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
  return name;
}

// Gymnasium's seven robots under MuJoCo's law: states along MuJoCo's own rollout (its integrator,
// random controls), compared at zero control with contacts (against the floor, and between the
// robot's own bodies: Humanoid's and Hopper's) and limits active.
class SoftRobot : public ::testing::TestWithParam<const char*> {};

TEST_P(SoftRobot, AccelerationsEqualMujocosAlongItsRollout) {
  const std::string path = robotWithBareFloor(GetParam(), "soft_robot_");
  const MjcfImport mjcf = softImport(path);
  auto m = referenceModel(path);
  ASSERT_TRUE(m);
  std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
  Batch<double> batch(mjcf.model, 1, Backend::Cpu);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(-1, 1);
  mj_resetData(m.get(), d.get());
  for (int i = 0; i < m->nq; ++i) d->qpos[i] += 0.1 * unit(rng) * (m->jnt_type[0] == mjJNT_FREE && i < 7 ? 0 : 1);
  int compared = 0, withConstraints = 0, selfContacts = 0;
  double worst = 0;
  for (int step = 1; step <= 600 && compared < 20; ++step) {
    for (int i = 0; i < m->nu; ++i) d->ctrl[i] = unit(rng);
    mj_step(m.get(), d.get());
    if (step % 25) continue;
    for (int i = 0; i < m->nu; ++i) d->ctrl[i] = 0;
    mj_forward(m.get(), d.get());
    selfContacts += !floorContactsOnly(m.get(), d.get());
    int constraints = 0;
    const double error = compareAtState(mjcf, batch, m.get(), d.get(), &constraints);
    EXPECT_LT(error, 1e-6) << GetParam() << " step " << step << " (" << constraints << " constraint rows)";
    worst = std::max(worst, error);
    withConstraints += constraints > 0;
    ++compared;
  }
  EXPECT_EQ(compared, 20);
  std::printf("%s: %d states (%d with constraint rows, %d with contacts between the robot's bodies): largest "
              "|qacc - MuJoCo's| / max(1, |qacc|) %.2e\n", GetParam(), compared, withConstraints, selfContacts, worst);
}

// MuJoCo 4's RK4 (mj_RungeKutta) on this MuJoCo's forward dynamics (mj_forward): the classic
// tableau, each stage's positions from qpos0 by mj_integratePos of the stage's rates, where a ball's
// or free joint's angular rate at a stage whose rotation from the start is theta is dexp^-1_theta(w) =
// w + theta x w / 2 + theta x (theta x w) / 12. This MuJoCo 2.2.2's own mj_step combines the angular
// velocities themselves; MuJoCo 4.0 from PyPI steps exactly as below (python/tests/test_mjcf_contacts.py
// compares Lockstep with it directly).
void mujoco4Rk4Step(const mjModel* m, mjData* d) {
  const int nq = m->nq, nv = m->nv;
  const double h = m->opt.timestep, stage[3] = {0.5 * h, 0.5 * h, h}, weight[4] = {h / 6, h / 3, h / 3, h / 6};
  const std::vector<double> q0(d->qpos, d->qpos + nq), v0(d->qvel, d->qvel + nv);
  std::vector<double> rates(v0), qacc(nv), rateSum(nv, 0), qaccSum(nv, 0), theta(nv, 0);
  for (int k = 0; k < 4; ++k) {
    if (k > 0) {  // the stage's state, from the start by the previous stage's rates and accelerations
      for (int i = 0; i < nv; ++i) theta[i] = stage[k - 1] * rates[i];
      std::copy(q0.begin(), q0.end(), d->qpos);
      mj_integratePos(m, d->qpos, rates.data(), stage[k - 1]);
      for (int i = 0; i < nv; ++i) d->qvel[i] = v0[i] + stage[k - 1] * qacc[i];
    }
    mj_forward(m, d);
    std::copy(d->qacc, d->qacc + nv, qacc.begin());
    std::copy(d->qvel, d->qvel + nv, rates.begin());
    for (int j = 0; j < m->njnt; ++j) {
      const int type = m->jnt_type[j];
      if (type != mjJNT_FREE && type != mjJNT_BALL) continue;
      const int a = m->jnt_dofadr[j] + (type == mjJNT_FREE ? 3 : 0);  // the angular velocity, in the body
      mjtNum tw[3], ttw[3];
      mju_cross(tw, &theta[a], &rates[a]);
      mju_cross(ttw, &theta[a], tw);
      for (int i = 0; i < 3; ++i) rates[a + i] += tw[i] / 2 + ttw[i] / 12;
    }
    for (int i = 0; i < nv; ++i) {
      rateSum[i] += weight[k] * rates[i];
      qaccSum[i] += weight[k] * qacc[i];
    }
  }
  std::copy(q0.begin(), q0.end(), d->qpos);
  mj_integratePos(m, d->qpos, rateSum.data(), 1.0);
  for (int i = 0; i < nv; ++i) d->qvel[i] = v0[i] + qaccSum[i];
  d->time += h;
}

// One step of the XML's own integrator from states along MuJoCo's rollout equals MuJoCo 4's step: q
// and u to 1e-12 of their scale. RK4 (the soft solve at every stage): mujoco4Rk4Step (this MuJoCo
// 2.2.2's mj_step differs by up to 4e-5 on ant, whose free joint turns). Euler (half_cheetah), implicit
// in the joints' damping: mj_step, the same in 2.2.2 and 4.
TEST_P(SoftRobot, OneStepEqualsMujocosStep) {
  const std::string path = robotWithBareFloor(GetParam(), "soft_step_");
  const MjcfImport mjcf = softImport(path);
  auto m = referenceModel(path);
  ASSERT_TRUE(m);
  const bool rk4 = m->opt.integrator == mjINT_RK4;  // else MuJoCo's Euler (half_cheetah), the same in 2.2.2
  std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
  Batch<double> batch(mjcf.model, 1, Backend::Cpu);
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> unit(-1, 1);
  mj_resetData(m.get(), d.get());
  double worst = 0;
  int compared = 0;
  for (int step = 1; step <= 400 && compared < 10; ++step) {
    for (int i = 0; i < m->nu; ++i) d->ctrl[i] = unit(rng);
    mj_step(m.get(), d.get());
    if (step % 40) continue;
    mj_forward(m.get(), d.get());
    std::unique_ptr<mjData, MjDeleter> next(mj_makeData(m.get()));
    mj_copyData(next.get(), m.get(), d.get());
    for (int i = 0; i < m->nu; ++i) next->ctrl[i] = 0;
    batch.setQ(0, qFromMujoco(mjcf, d->qpos));
    batch.setU(0, uFromMujoco(mjcf, d->qpos, d->qvel));
    if (rk4)
      mujoco4Rk4Step(m.get(), next.get());
    else
      mj_step(m.get(), next.get());
    batch.step(m->opt.timestep, 1, rk4 ? Integrator::RK4 : Integrator::SemiImplicitEuler);
    ASSERT_EQ(batch.status(0), kStatusOk) << describeStatus(batch.status(0));
    const std::vector<double> q = batch.q(0), u = batch.u(0);
    const std::vector<double> mq = qFromMujoco(mjcf, next->qpos), mu = uFromMujoco(mjcf, next->qpos, next->qvel);
    double scale = 1, error = 0;
    for (double x : mu) scale = std::max(scale, std::abs(x));
    for (std::size_t i = 0; i < q.size(); ++i) error = std::max(error, std::abs(q[i] - mq[i]));
    for (std::size_t i = 0; i < u.size(); ++i) error = std::max(error, std::abs(u[i] - mu[i]) / scale);
    EXPECT_LT(error, 1e-12) << GetParam() << " step " << step;
    worst = std::max(worst, error);
    ++compared;
  }
  EXPECT_EQ(compared, 10);
  std::printf("%s: %d steps of %g s: largest difference from MuJoCo 4's %s %.2e\n", GetParam(), compared,
              m->opt.timestep, rk4 ? "RK4" : "Euler", worst);
}

INSTANTIATE_TEST_SUITE_P(Gymnasium, SoftRobot,
                         ::testing::Values("ant.xml", "half_cheetah.xml", "hopper.xml", "humanoid.xml",
                                           "inverted_double_pendulum.xml", "reacher.xml", "walker2d_v5.xml"),
                         robotTestName);

}  // namespace
}  // namespace lockstep::test

namespace lockstep::test {
namespace {

// What MuJoCo's law here does not have is refused or named: an ellipsoid's contact spheres under the
// compliant law (a warning naming the geom; under MuJoCo's law it touches the plane), and a contact
// law that is not one of the two. An elliptic cone is MuJoCo's law's (the compliant law has none).
TEST(SoftLaw, UnsupportedFeaturesAndUnknownLawsAreNamed) {
  const std::string plane = R"(<geom type="plane" size="1 1 .1"/>)";
  const std::string cone = writeModel("soft_cone.xml", R"(<mujoco><option cone="elliptic"/><worldbody>)" + plane +
                                      R"(<body pos="0 0 .2"><freejoint/><geom size=".1" mass="1"/></body></worldbody></mujoco>)");
  const MjcfImport elliptic = softImport(cone);
  ASSERT_EQ(elliptic.model->planeContacts().size(), 1u);
  EXPECT_TRUE(elliptic.model->planeContacts()[0].desc.elliptic);
  EXPECT_NE(describeElement(*elliptic.model, elliptic.model->planeContacts()[0]).find("condim 3 (elliptic cone)"),
            std::string::npos);
  EXPECT_NO_THROW(importCompliant(cone));  // the compliant law has no cones
  const std::string ellipsoid = writeModel("soft_ellipsoid.xml", "<mujoco><worldbody>" + plane +
      R"(<body name="egg" pos="0 0 .2"><freejoint/><geom type="ellipsoid" size=".1 .2 .1" mass="1"/></body></worldbody></mujoco>)");
  const MjcfImport egg = softImport(ellipsoid);
  EXPECT_EQ(egg.model->planeContacts().size(), 1u);
  EXPECT_TRUE(egg.warnings.empty());
  const MjcfImport compliantEgg = importCompliant(ellipsoid);
  ASSERT_EQ(compliantEgg.warnings.size(), 1u);
  EXPECT_NE(compliantEgg.warnings[0].find("ellipsoid geoms on the ground: egg.geom1"), std::string::npos)
      << compliantEgg.warnings[0];
  const std::string scene = ::testing::TempDir() + "soft_law_typo.json";
  std::ofstream(scene) << R"({"mjcf": {"path": ")" + cone + R"(", "contact_law": "mujok"}})";
  try {
    loadSceneFile(scene);
    ADD_FAILURE() << "an unknown contact law was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("mjcf.contact_law: must be \"compliant\" or \"mujoco\", not 'mujok'"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lockstep::test

// ---- derivatives under MuJoCo's law: the solve's by the implicit function theorem (soft_constraints.h) ----
namespace lockstep::test {
namespace {

// The parameter names of the model's first element of `kind` ("plane_contact", "pair_contact") that
// end in each suffix.
std::vector<std::string> contactParameters(const Batch<double>& batch, const std::string& kind,
                                           const std::vector<std::string>& suffixes) {
  const std::vector<std::string> all = batch.parameterNames();
  std::vector<std::string> names;
  for (const std::string& suffix : suffixes)
    for (const std::string& name : all)
      if (name.rfind(kind + ".", 0) == 0 && name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        names.push_back(name);
        break;
      }
  return names;
}

// A free body touching a geom of the world under a pyramid or an elliptic cone: the Jacobians of
// one step, MuJoCo's Euler and RK4 (the solve at each stage), and of one evaluation against central
// differences of the engine's own, by the state, the actions, gravity and the contact's friction,
// solref and solimp. The states are away from any change of the rows' set or a cone's zone, where
// no derivative exists.
//   a box on the floor, resting (every row of its four corners active; a cone's lower zone) or
//   sliding and turning (a pyramid's trailing edges free; a cone's force on its surface);
//   a sphere pressed into an ellipsoid off its top and moving (a pair contact whose point comes from
//   the bisection of softEllipsoidNearest, its derivatives from the root's);
//   a capsule across a cylinder's side, pressed into it and moving (its point from the bisection
//   along the capsule, softCapsuleCylinder, its derivatives from the root's).
struct SoftDerivativeCase {
  const char* name;
  const char* cone;
  const char* world;  // the world's geom
  const char* body;   // the free body's geom and its place
  bool settle;        // 200 steps of 5 ms first
  bool push;          // then a push along x and y, turning, and 10 steps
};
class SoftDerivatives : public ::testing::TestWithParam<SoftDerivativeCase> {};

TEST_P(SoftDerivatives, StepsAndEvaluationsMatchCentralDifferences) {
  const SoftDerivativeCase& k = GetParam();
  const std::string cone = k.cone;
  const std::string path = writeModel(std::string("soft_derivatives_") + k.name + ".xml", R"(<mujoco>
  <option timestep="0.005" cone=")" + cone + R"(" impratio="2"/>
  <worldbody>
    <geom )" + k.world + R"( friction="0.8"/>
    <body )" + k.body + R"(</body>
  </worldbody>
</mujoco>)");
  const MjcfImport mjcf = softImport(path);
  DerivativeCase c;
  c.model = mjcf.model;
  c.tau = {0.1, -0.2, 0.05, 0.3, -0.1, 0.2};
  c.params = {"gravity.z"};
  {
    Batch<double> b(c.model, 1);
    b.setQ(0, mjcf.q0);
    if (k.settle)
      b.step(0.005, 200, Integrator::SemiImplicitEuler);
    else  // moving across the contact; Free: angular velocity, then linear (physics/mobilizer.h)
      b.setU(0, {0.3, -0.2, 0.4, 0.2, -0.1, -0.05});
    if (k.push) {
      std::vector<double> u = b.u(0);
      u[3] = 0.8;
      u[4] = -0.3;
      u[2] = 0.5;
      b.setU(0, u);
      b.step(0.005, 10, Integrator::SemiImplicitEuler);
    }
    ASSERT_EQ(b.status(0), kStatusOk) << describeStatus(b.status(0));
    c.q = b.q(0);
    c.u = b.u(0);
    const std::string kind = c.model->pairContacts().empty() ? "plane_contact" : "pair_contact";
    for (const std::string& name : contactParameters(b, kind, {".friction", ".solref.0", ".solimp.0"}))
      c.params.push_back(name);
  }
  ASSERT_EQ(c.params.size(), 4u);
  {  // touching: the contact has rows
    Batch<double> b(c.model, 1);
    b.setQ(0, c.q);
    b.setU(0, c.u);
    b.evaluate();
    const FieldView points = b.field("softContact", MemorySpace::Host);  // active first, point 0 first
    ASSERT_GT(static_cast<const double*>(points.data)[0], 0.5) << k.name;
  }
  const std::string label = k.name;
  const double euler = expectMatches(c, Linearization::Step, 0.005, Integrator::SemiImplicitEuler, 1e-6, 1e-6,
                                     (label + " Euler").c_str());
  const double rk4 =
      expectMatches(c, Linearization::Step, 0.005, Integrator::RK4, 1e-6, 1e-6, (label + " RK4").c_str());
  const double evaluation = expectMatches(c, Linearization::Evaluation, 0.005, Integrator::RK4, 1e-6, 1e-6,
                                          (label + " evaluation").c_str());
  std::printf("%s: largest |exact - central differences| relative to the column: Euler %.1e, RK4 %.1e, "
              "evaluation %.1e\n", label.c_str(), euler, rk4, evaluation);
}

constexpr const char* kFloor = R"(type="plane" size="5 5 .1")";
constexpr const char* kBox =
    R"(pos="0 0 0.049"><freejoint/><geom type="box" size="0.1 0.15 0.05" mass="2" margin="0.002"/>)";
constexpr const char* kEllipsoid = R"(type="ellipsoid" size="0.3 0.2 0.1")";
constexpr const char* kSphere = R"(pos="0.12 0.05 0.137"><freejoint/><geom type="sphere" size="0.05" mass="1"/>)";
constexpr const char* kCylinder = R"(type="cylinder" size="0.2 0.3")";
constexpr const char* kCapsule =
    R"(pos="0.248 0.02 0.1" euler="80 5 0"><freejoint/><geom type="capsule" size="0.05 0.15" mass="1"/>)";
INSTANTIATE_TEST_SUITE_P(Touching, SoftDerivatives,
                         ::testing::Values(SoftDerivativeCase{"pyramidResting", "pyramidal", kFloor, kBox, true, false},
                                           SoftDerivativeCase{"pyramidSliding", "pyramidal", kFloor, kBox, true, true},
                                           SoftDerivativeCase{"coneResting", "elliptic", kFloor, kBox, true, false},
                                           SoftDerivativeCase{"coneSliding", "elliptic", kFloor, kBox, true, true},
                                           SoftDerivativeCase{"sphereOnEllipsoid", "pyramidal", kEllipsoid,
                                                              kSphere, false, false},
                                           SoftDerivativeCase{"sphereOnEllipsoidCone", "elliptic", kEllipsoid,
                                                              kSphere, false, false},
                                           SoftDerivativeCase{"capsuleOnCylinder", "pyramidal", kCylinder,
                                                              kCapsule, false, false},
                                           SoftDerivativeCase{"capsuleOnCylinderCone", "elliptic", kCylinder,
                                                              kCapsule, false, false}),
                         [](const ::testing::TestParamInfo<SoftDerivativeCase>& info) { return info.param.name; });

// A capsule against an ellipsoid: its point comes from a bisection along the capsule, whose
// derivatives are not given; linearize refuses the model, naming the pair.
TEST(SoftDerivatives, CapsulesAgainstEllipsoidsAreRefusedByName) {
  for (const char* other : {"ellipsoid"}) {
    const std::string path = writeModel(std::string("soft_derivatives_capsule_") + other + ".xml",
                                        std::string(R"(<mujoco><worldbody><geom name="rock" type=")") + other +
                                            R"(" size="0.3 0.2 0.1"/><body pos="0 0 0.2"><freejoint/>)"
                                            R"(<geom name="rod" type="capsule" size="0.05 0.2" mass="1"/>)"
                                            R"(</body></worldbody></mujoco>)");
    const MjcfImport mjcf = softImport(path);
    ASSERT_EQ(mjcf.model->pairContacts().size(), 1u) << other;
    Batch<double> b(mjcf.model, 1);
    try {
      b.linearize(0.002, Integrator::RK4);
      ADD_FAILURE() << other << ": linearized";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("pair contact \"" + mjcf.model->pairContacts()[0].desc.name + "\": a capsule against"),
                std::string::npos) << what;
      EXPECT_NE(what.find(other), std::string::npos) << what;
    }
  }
}

// Gymnasium's hopper (RK4) and half_cheetah (Euler, implicit in the joints' damping), their feet on
// the floor and joints at their limits along a rollout of random actions: the Jacobian of a step of
// the file's integrator against central differences of the engine's own, and the state part of an
// Euler step's against MuJoCo's own finite-difference Jacobian (mjd_transitionFD, centred, its
// solver run to convergence). Neither robot has a ball or free joint, so that MuJoCo's tangent space
// is Lockstep's, up to the order of the dofs.
class SoftRobotDerivatives : public ::testing::TestWithParam<const char*> {};

TEST_P(SoftRobotDerivatives, StepJacobiansMatchDifferencesAndMujocosTransitionFd) {
  const std::string path = robotWithBareFloor(GetParam(), "soft_derivatives_");
  const MjcfImport mjcf = softImport(path);
  auto m = referenceModel(path);
  ASSERT_TRUE(m);
  const int nv = m->nv;
  const double dt = m->opt.timestep;
  const Integrator integrator = mjcf.integrator;
  std::unique_ptr<mjData, MjDeleter> d(mj_makeData(m.get()));
  // Lockstep's speed i is MuJoCo's dof order[i] (hinges and slides: the speeds are the qvel entries).
  std::vector<int> order(nv);
  for (int i = 0; i < nv; ++i) {
    std::vector<double> e(nv, 0.0);
    e[i] = 1;
    const std::vector<double> mapped = uFromMujoco(mjcf, d->qpos, e.data());
    order[std::distance(mapped.begin(), std::max_element(mapped.begin(), mapped.end()))] = i;
  }
  // MuJoCo at Lockstep's state: its constraint rows are the same contacts and limits.
  auto atState = [&](const std::vector<double>& q, const std::vector<double>& u) {
    for (int i = 0; i < nv; ++i) {
      d->qpos[m->jnt_qposadr[m->dof_jntid[order[i]]]] = q[i];
      d->qvel[order[i]] = u[i];
    }
    mj_forward(m.get(), d.get());
  };
  auto limitRows = [&] {
    int n = 0;
    for (int i = 0; i < d->nefc; ++i) n += d->efc_type[i] == mjCNSTR_LIMIT_JOINT;
    return n;
  };
  // Random actions on the legs' joints (after the root's three) until a foot is on the floor and a
  // joint beyond its limit's margin.
  DerivativeCase c;
  c.model = mjcf.model;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(-1, 1);
  Batch<double> rollout(c.model, 1);
  rollout.setQ(0, mjcf.q0);
  int step = 0;
  for (; step < 3000; ++step) {
    std::vector<double> tau(nv, 0.0);
    for (int i = 3; i < nv; ++i) tau[i] = 20 * unit(rng);
    rollout.setTau(0, tau);
    rollout.step(dt, 1, integrator);
    ASSERT_EQ(rollout.status(0), kStatusOk) << describeStatus(rollout.status(0));
    atState(rollout.q(0), rollout.u(0));
    if (step >= 100 && d->ncon > 0 && limitRows() > 0) break;
  }
  ASSERT_LT(step, 3000) << GetParam() << ": no state with a contact and a limit";
  c.q = rollout.q(0);
  c.u = rollout.u(0);
  c.tau.assign(nv, 0.0);
  const int rows = d->nefc, limits = limitRows();
  const double differences = expectMatches(c, Linearization::Step, dt, integrator, 1e-6, 1e-6, GetParam());
  // MuJoCo's A (2nv x 2nv, row-major; rows and columns [dq; qvel]) in Lockstep's order, of a step of
  // MuJoCo's Euler (MuJoCo 4 refuses RK4 in mjd_transitionFD), and Lockstep's of the same step.
  m->opt.integrator = mjINT_EULER;
  std::vector<double> A(4 * nv * nv);
  mjd_transitionFD(m.get(), d.get(), 1e-6, 1, A.data(), nullptr, nullptr, nullptr);
  Batch<double> b(c.model, 1);
  place(b, 0, c, c.q, c.u, c.tau);
  b.linearize(dt, Integrator::SemiImplicitEuler);
  const std::vector<double> ours = b.jacobian(0, Batch<double>::JacobianBlock::State);
  auto at = [&](int r) { return r < nv ? order[r] : nv + order[r - nv]; };
  double worst = 0, scale = 1;
  for (double x : A) scale = std::max(scale, std::abs(x));
  for (int r = 0; r < 2 * nv; ++r)
    for (int k = 0; k < 2 * nv; ++k)
      worst = std::max(worst, std::abs(ours[r * 2 * nv + k] - A[at(r) * 2 * nv + at(k)]) / scale);
  EXPECT_LT(worst, 1e-6) << GetParam();
  std::printf("%s (%d constraint rows, %d of them limits): largest |exact - central differences| %.1e; "
              "Euler: |A - MuJoCo's mjd_transitionFD| / max |A| %.1e\n", GetParam(), rows, limits, differences, worst);
}

INSTANTIATE_TEST_SUITE_P(Gymnasium, SoftRobotDerivatives, ::testing::Values("hopper.xml", "half_cheetah.xml"),
                         robotTestName);

}  // namespace
}  // namespace lockstep::test
