// `lockstep simulate --record` and `lockstep plot` end to end: every recordable quantity of
// chain-7-seed written by the command line, read back from the .npz and checked against the values
// Simbody 3.7 printed (docs/reference-values.md: sphere case 1, bushing case 1; the same states and
// tolerances as tests/test_constraints.cpp and tests/test_forces.cpp), against the Batch API of the
// same run in process, and against the seeds' closed forms; the names; the errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "lockstep/engine/quantities.h"
#include "lockstep/io/scene.h"
#include "lockstep/io/scene_apply.h"
#include "cli_runner.h"
#include "npz_reader.h"

namespace lockstep::test {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = LOCKSTEP_SOURCE_DIR;


bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The shortest decimal that reads back to the same double.
std::string num(double x) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
}
std::string list(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + num(v[i]);
  return s + "]";
}

// |got - want| <= tol * max(1, |want|) on the infinity norm, as tests/test_util.h's near().
::testing::AssertionResult near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " values, expected " << want.size();
  double scale = 1, err = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::abs(want[i]));
    err = std::max(err, std::abs(got[i] - want[i]));
  }
  if (err <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "difference " << err << " exceeds " << tol << " * " << scale << ": got "
                                       << list(got) << ", expected " << list(want);
}


// A recording read back: quantity arrays [frames, worlds, n] with their column names.
class Recorded {
 public:
  explicit Recorded(const std::string& path) : npz_(readNpz(path)) {}
  const std::map<std::string, NpyArray>& arrays() const { return npz_; }
  // Components `columns` of quantity `name` in world w of frame f.
  std::vector<double> get(const std::string& name, const std::vector<std::string>& columns, int w = 0, int f = 0) const {
    std::vector<double> out;
    const NpyArray& a = array(name);
    const std::vector<std::string> names = npz_.at(name + "_names").strings();
    const std::vector<double> v = a.descr == "<i4" ? ints(a) : a.doubles();
    for (const std::string& c : columns) {
      const auto it = std::find(names.begin(), names.end(), c);
      EXPECT_NE(it, names.end()) << name << " has no column " << c;
      if (it == names.end()) return out;
      const std::int64_t n = a.shape.at(2), W = a.shape.at(1);
      out.push_back(v.at(static_cast<std::size_t>((f * W + w) * n + (it - names.begin()))));
    }
    return out;
  }
  double get1(const std::string& name, const std::string& column, int w = 0, int f = 0) const {
    const std::vector<double> v = get(name, {column}, w, f);
    return v.empty() ? NAN : v[0];
  }
  const NpyArray& array(const std::string& name) const {
    const auto it = npz_.find(name);
    if (it == npz_.end()) ADD_FAILURE() << "no array " << name;
    return it == npz_.end() ? empty_ : it->second;
  }

 private:
  static std::vector<double> ints(const NpyArray& a) {
    std::vector<double> out;
    for (std::int32_t x : a.int32s()) out.push_back(x);
    return out;
  }
  std::map<std::string, NpyArray> npz_;
  NpyArray empty_;
};

// Column names "prefix.a", "prefix.b", ...
std::vector<std::string> columns(const std::string& prefix, std::initializer_list<const char*> parts) {
  std::vector<std::string> out;
  for (const char* p : parts) out.push_back(prefix + "." + p);
  return out;
}
std::vector<std::string> sixColumns(const std::string& prefix) {
  return columns(prefix, {"0", "1", "2", "3", "4", "5"});
}

class Record : public CliTest {
 protected:
  // scenes/chain-7-seed.json with its initial state replaced by `state` and, when given, `record`
  // added to its simulation settings.
  std::string chain7Seed(const std::string& state, const std::string& record = "") {
    std::string text = readText(kRoot + "/scenes/chain-7-seed.json");
    const std::string initial = "\"initial_state\": {\"q\": [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]}";
    const std::size_t at = text.find(initial);
    EXPECT_NE(at, std::string::npos) << "scenes/chain-7-seed.json changed its initial state";
    if (at != std::string::npos) text.replace(at, initial.size(), "\"initial_state\": " + state);
    if (!record.empty()) {
      const std::size_t sim = text.find("\"simulation\": {");
      text.insert(sim + std::string("\"simulation\": {").size(), "\"record\": " + record + ", ");
    }
    return write("chain-7-seed.json", text);
  }
};

// docs/reference-values.md, sphere case 1: Simbody's assembled chain-7-seed state.
const std::vector<double> kSphereCase1Q = {-0.15042011004075018, -0.076440357112119564, 0.0068070761040828643,
                                           0.0915141602205084,   0.16972760733200887,   0.23416257272338142,
                                           0.27891933102116429};
const std::vector<double> kSphereCase1U = {0.089081949380083486, 0.11573921414928448, -0.02431193631809242,
                                           -0.19035276970324333, -0.21784029843104366, -0.070409317181568315,
                                           0.12592456651791878};

TEST_F(Record, EveryQuantityOfChain7SeedMatchesSimbodyAndTheBatch) {
  const std::string scene = chain7Seed("{\"q\": " + list(kSphereCase1Q) + ", \"u\": " + list(kSphereCase1U) + "}");
  const fs::path npzPath = dir_ / "all.npz";
  const CliResult r = run("simulate " + scene + " --worlds 2 --steps 0 --precision double --device cpu --threads 1 " +
                          "--record all --out " + npzPath.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const Recorded rec(npzPath.string());

  // Every quantity is in the file, shaped [frames, worlds, n], with its column names.
  const Scene loaded = loadSceneFile(scene);
  const Model& m = *loaded.model;
  for (const Quantity& q : recordableQuantities()) {
    if (q.name() == "time") continue;
    ASSERT_EQ(rec.arrays().count(q.name()), 1u) << q.name();
    EXPECT_EQ(rec.array(q.name()).shape, (std::vector<std::int64_t>{1, 2, q.count(m)})) << q.name();
    EXPECT_EQ(rec.arrays().at(q.name() + "_names").strings(), publicNames(m, q.info)) << q.name();
  }

  // The state was already assembled (to 1e-12): the command line's assembly leaves it.
  std::vector<std::string> qNames, uNames;
  for (const std::string& n : m.qNames()) qNames.push_back("q." + n);
  for (const std::string& n : m.uNames()) uNames.push_back("udot." + n);
  EXPECT_TRUE(near(rec.get("q", qNames), kSphereCase1Q, 1e-12));

  // docs/reference-values.md, sphere case 1, with test_constraints.cpp's tolerances.
  const std::vector<double> udot = {156.08604412526211, -331.38627794519039, 89.617123534949954, -73.485840135760895,
                                    174.42503354442169, -652.60525281274181, 2310.5839747865539};
  EXPECT_TRUE(near(rec.get("udot", uNames), udot, 1e-9));
  EXPECT_NEAR(rec.get1("contactError", "contact.contact.error"), 5.395684e-14, 1e-13);
  EXPECT_NEAR(rec.get1("contact.separation", "contact.contact.separation"), 5.395684e-14, 1e-13);
  const std::vector<double> verr = rec.get("contact.velocity_error", columns("contact.contact.velocity_error", {"x", "y", "z"}));
  EXPECT_EQ(verr[0], 0.0);
  EXPECT_EQ(verr[1], 0.0);
  EXPECT_NEAR(verr[2], -2.08166817117217e-16, 1e-13);
  EXPECT_NEAR(rec.get1("contact.acceleration_error", "contact.contact.acceleration_error.z"), 0.0, 1e-9);
  EXPECT_TRUE(near(rec.get("contact.multipliers", columns("contact.contact.multiplier", {"x", "y", "z"})),
                   {0, 0, -634.844725288425}, 1e-9));
  EXPECT_NEAR(rec.get1("multipliers", "multiplier.contact.z"), -634.844725288425, 1e-9 * 634.8);
  EXPECT_TRUE(near(rec.get("contact.force_on_B", columns("contact.contact.force_on_B", {"x", "y", "z"})),
                   {-509.839527452726, 378.274346834831, 0}, 1e-9));
  const std::string C = "contact.contact.X_GC";
  EXPECT_TRUE(near(rec.get("contact.X_GC", columns(C, {"x", "y", "z"})), {0.139381345660174, -3.43082933297964, 0}, 1e-12));
  EXPECT_TRUE(near(rec.get("contact.X_GC", columns(C, {"r00", "r10", "r20"})), {0.5958533351017, 0.803093271698986, 0}, 1e-12));
  EXPECT_TRUE(near(rec.get("contact.X_GC", columns(C, {"r02", "r12", "r22"})), {-0.803093271698986, 0.5958533351017, 0}, 1e-12));
  EXPECT_NEAR(rec.get1("energy.total", "energy.total"), 560.715150494808, 1e-9 * 560.7);
  EXPECT_NEAR(rec.get1("energy", "energy.kinetic") + rec.get1("energy", "energy.potential"), 560.715150494808,
              1e-9 * 560.7);

  // The other seed quantities (Simbody printed none for chain-7-seed's bushing and spring): the
  // Batch API of the same run in process, to round-off, in world 1 too.
  Batch<double> batch(loaded.model, 2);
  applyScene(loaded, batch);
  batch.assemble();
  batch.evaluate();
  for (int w = 0; w < 2; ++w) {
    const BushingQuantities<double> b = batch.bushing(w, 0);
    const double tol = 1e-13;
    auto six = [](const double* a) { return std::vector<double>(a, a + 6); };
    auto sv = [](const SpatialVecd& v) { std::vector<double> a; for (int i = 0; i < 6; ++i) a.push_back(v[i]); return a; };
    auto tf = [](const Transformd& X) {
      std::vector<double> a;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) a.push_back(X.R(i, j));
      for (int i = 0; i < 3; ++i) a.push_back(X.p[i]);
      return a;
    };
    const std::string B = "bushing.bushing.";
    EXPECT_TRUE(near(rec.get("bushingState", sixColumns(B + "q"), w), six(b.q), tol));
    EXPECT_TRUE(near(rec.get("bushingState", sixColumns(B + "f"), w), six(b.f), tol));
    EXPECT_TRUE(near(rec.get("bushing.qdot", sixColumns(B + "qdot"), w), six(b.qdot), tol));
    const auto T = [&](const char* n) {
      return columns(B + n, {"r00", "r01", "r02", "r10", "r11", "r12", "r20", "r21", "r22", "x", "y", "z"});
    };
    EXPECT_TRUE(near(rec.get("bushing.X_GF", T("X_GF"), w), tf(b.X_GF), tol));
    EXPECT_TRUE(near(rec.get("bushing.X_GM", T("X_GM"), w), tf(b.X_GM), tol));
    EXPECT_TRUE(near(rec.get("bushing.X_FM", T("X_FM"), w), tf(b.X_FM), tol));
    EXPECT_TRUE(near(rec.get("bushing.V_GF", columns(B + "V_GF", {"wx", "wy", "wz", "vx", "vy", "vz"}), w), sv(b.V_GF), tol));
    EXPECT_TRUE(near(rec.get("bushing.V_GM", columns(B + "V_GM", {"wx", "wy", "wz", "vx", "vy", "vz"}), w), sv(b.V_GM), tol));
    EXPECT_TRUE(near(rec.get("bushing.V_FM", columns(B + "V_FM", {"wx", "wy", "wz", "vx", "vy", "vz"}), w), sv(b.V_FM), tol));
    EXPECT_TRUE(near(rec.get("bushing.F_GF", columns(B + "F_GF", {"mx", "my", "mz", "fx", "fy", "fz"}), w), sv(b.F_GF), tol));
    EXPECT_TRUE(near(rec.get("bushing.F_GM", columns(B + "F_GM", {"mx", "my", "mz", "fx", "fy", "fz"}), w), sv(b.F_GM), tol));
    EXPECT_NEAR(rec.get1("bushing.potential_energy", B + "potential_energy", w), b.potentialEnergy, tol);
    EXPECT_NEAR(rec.get1("bushing.power", B + "power", w), b.powerDissipation, tol);
    EXPECT_EQ(rec.get1("bushing.dissipated_energy", B + "dissipated_energy", w), batch.dissipatedEnergy(w, 0));
    EXPECT_EQ(rec.get1("bushing.dissipated_energy", B + "dissipated_energy", w), 0.0);  // nothing dissipated at t = 0
    // The seed's closed forms, from the recorded values: PE = sum k q^2 / 2, power = sum c qdot^2,
    // f = -(k q + c qdot); k = (10, 10, 10, 100, 100, 100), c = (1, 1, 1, 5, 5, 5).
    const double k[6] = {10, 10, 10, 100, 100, 100}, c[6] = {1, 1, 1, 5, 5, 5};
    const std::vector<double> q = rec.get("bushingState", sixColumns(B + "q"), w),
                              f = rec.get("bushingState", sixColumns(B + "f"), w),
                              qdot = rec.get("bushing.qdot", sixColumns(B + "qdot"), w);
    double pe = 0, power = 0;
    for (int i = 0; i < 6; ++i) {
      pe += 0.5 * k[i] * q[i] * q[i];
      power += c[i] * qdot[i] * qdot[i];
      EXPECT_NEAR(f[i], -(k[i] * q[i] + c[i] * qdot[i]), 1e-12);
    }
    EXPECT_NEAR(rec.get1("bushing.potential_energy", B + "potential_energy", w), pe, 1e-12);
    EXPECT_NEAR(rec.get1("bushing.power", B + "power", w), power, 1e-12);

    const SpringDamperQuantities<double> s = batch.spring(w, 0);
    const std::string S = "spring.spring.";
    const double l = rec.get1("spring.length", S + "length", w), ldot = rec.get1("spring.rate", S + "rate", w);
    EXPECT_NEAR(l, s.length, tol);
    EXPECT_NEAR(ldot, s.lengthDot, tol);
    EXPECT_TRUE(near(rec.get("spring.force", columns(S + "f_AP", {"x", "y", "z"}), w), {s.f_AP[0], s.f_AP[1], s.f_AP[2]}, tol));
    // Drake's closed forms with free length 0.8, stiffness 200, damping 2.
    EXPECT_NEAR(rec.get1("spring.potential_energy", S + "potential_energy", w), 100 * (l - 0.8) * (l - 0.8), 1e-12);
    EXPECT_NEAR(rec.get1("spring.conservative_power", S + "conservative_power", w), -200 * (l - 0.8) * ldot, 1e-12);
    EXPECT_NEAR(rec.get1("spring.nonconservative_power", S + "nonconservative_power", w), -2 * ldot * ldot, 1e-12);
    const std::vector<double> f_AP = rec.get("spring.force", columns(S + "f_AP", {"x", "y", "z"}), w);
    EXPECT_NEAR(std::sqrt(f_AP[0] * f_AP[0] + f_AP[1] * f_AP[1] + f_AP[2] * f_AP[2]), std::abs(200 * (l - 0.8) + 2 * ldot),
                1e-10);

    // Bodies: X_GB and V_GB as the Batch reports them; bodyPose's quaternion is the same rotation.
    for (int body = 0; body < m.numBodies(); ++body) {
      const std::string P = "body." + m.body(body).name + ".";
      const Transformd X = batch.bodyPose(w, body);
      EXPECT_TRUE(near(rec.get("body.X_GB", columns(P + "X_GB", {"r00", "r01", "r02", "r10", "r11", "r12", "r20", "r21",
                                                                 "r22", "x", "y", "z"}), w), tf(X), tol));
      EXPECT_TRUE(near(rec.get("body.V_GB", columns(P + "V_GB", {"wx", "wy", "wz", "vx", "vy", "vz"}), w),
                       sv(batch.bodyVelocity(w, body)), tol));
      EXPECT_TRUE(near(rec.get("bodyPose", columns(P.substr(0, P.size() - 1), {"x", "y", "z"}), w), {X.p[0], X.p[1], X.p[2]}, tol));
    }
    // energy.balance = KE + PE + dissipated energy.
    double z = 0;
    for (double x : batch.z(w)) z += x;
    EXPECT_NEAR(rec.get1("energy.balance", "energy.balance", w), batch.kineticEnergy(w) + batch.potentialEnergy(w) + z,
                1e-12 * 560.7);
    EXPECT_EQ(rec.get1("status", "status", w), 0.0);
  }
}

// docs/reference-values.md, bushing case 1, as a scene file: two Free bodies joined by a LinearBushing.
TEST_F(Record, LinearBushingQuantitiesMatchSimbodyCase1ThroughTheFiles) {
  const double m = 1.234, com[3] = {0.1, 0.2, 0.3};
  // Central inertia = inertia about the origin, m * UnitInertia(1, 1.1, 1.2, .01, .02, .03), minus
  // the point inertia m (|c|^2 1 - c c^T) of the center of mass.
  const double c2 = com[0] * com[0] + com[1] * com[1] + com[2] * com[2];
  const std::vector<double> inertia = {m * (1.0 - (c2 - com[0] * com[0])), m * (1.1 - (c2 - com[1] * com[1])),
                                       m * (1.2 - (c2 - com[2] * com[2])), m * (0.01 + com[0] * com[1]),
                                       m * (0.02 + com[0] * com[2]),      m * (0.03 + com[1] * com[2])};
  std::vector<double> q;
  for (const auto& [angles, p] : {std::pair<Vec3d, Vec3d>{{{0.3, -0.2, 0.5}}, {{0.1, 0.2, -0.3}}},
                                  std::pair<Vec3d, Vec3d>{{{0.1, 0.25, -0.4}}, {{1, 0.6, 0.2}}}}) {
    double quat[4];
    Rotationd::bodyFixedXYZ(angles).toQuaternion(quat);
    q.insert(q.end(), quat, quat + 4);
    q.insert(q.end(), p.v, p.v + 3);
  }
  const std::vector<double> u = {0.4, -0.1, 0.2, 0.05, 0.3, -0.2, -0.3, 0.5, 0.1, 0.2, -0.1, 0.4};
  std::string body;
  for (const char* name : {"body1", "body2"})
    body += std::string(body.empty() ? "" : ", ") + "{\"name\": \"" + name +
            "\", \"mobilizer\": \"free\", \"mass\": 1.234, \"com\": [0.1, 0.2, 0.3], \"inertia\": " + list(inertia) + "}";
  const std::string scene = write("bushing_case1.json", "{\"name\": \"bushing-case1\", \"bodies\": [" + body + "], " +
      "\"linear_bushings\": [{\"name\": \"bushing\", \"body1\": \"body1\", \"frame_on_body1\": "
      "{\"position\": [0.5, 0, 0], \"xyz_angles\": [0.2, 0, 0.1]}, \"body2\": \"body2\", \"frame_on_body2\": "
      "{\"position\": [-0.2, 0.1, 0], \"xyz_angles\": [0, 0.3, 0]}, \"stiffness\": [1, 2, 3, 4, 5, 6], "
      "\"damping\": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}], "
      "\"initial_state\": {\"q\": " + list(q) + ", \"u\": " + list(u) + "}}");
  const fs::path npzPath = dir_ / "bushing.npz";
  const CliResult r = run("simulate " + scene + " --steps 0 --precision double --device cpu --out " + npzPath.string() +
                          " --record bushingState,bushing.qdot,bushing.V_FM,bushing.F_GF,bushing.F_GM,"
                          "bushing.potential_energy,bushing.power,bushing.dissipated_energy,udot,bushing.X_FM,"
                          "bushing.X_GF,bushing.X_GM");
  ASSERT_EQ(r.status, 0) << r.err;
  const Recorded rec(npzPath.string());
  const double tol = 1e-10;  // test_forces.cpp's
  const std::string B = "bushing.bushing.";
  EXPECT_TRUE(near(rec.get("bushingState", sixColumns(B + "q")),
                   {0.216737862773, 0.636196338114, -1.20272932695, 0.576694242593, 0.205624382824, 0.153861138546}, tol));
  EXPECT_TRUE(near(rec.get("bushing.qdot", sixColumns(B + "qdot")),
                   {0.0327928758563, 0.742910088309, -0.573910151002, 0.214275546348, -0.335824639929, 0.398437727935}, tol));
  EXPECT_TRUE(near(rec.get("bushingState", sixColumns(B + "f")),
                   {-0.220017150359, -1.42097469389, 3.78036102615, -2.39248718891, -0.860209594157, -1.16222946803}, tol));
  EXPECT_NEAR(rec.get1("bushing.potential_energy", B + "potential_energy"), 3.43994589784, tol * 3.44);
  EXPECT_NEAR(rec.get1("bushing.power", B + "power"), 0.379308747682, tol);
  EXPECT_EQ(rec.get1("bushing.dissipated_energy", B + "dissipated_energy"), 0.0);
  EXPECT_TRUE(near(rec.get("bushing.F_GF", columns(B + "F_GF", {"mx", "my", "mz", "fx", "fy", "fz"})),
                   {-0.530055503628, 3.77451789533, -3.13441240192, 1.30845488278, 1.26951087693, 2.11920286533}, tol));
  EXPECT_TRUE(near(rec.get("bushing.F_GM", columns(B + "F_GM", {"mx", "my", "mz", "fx", "fy", "fz"})),
                   {0.791818766044, -3.95059756925, 3.07827319999, -1.30845488278, -1.26951087693, -2.11920286533}, tol));
  EXPECT_TRUE(near(rec.get("bushing.V_FM", columns(B + "V_FM", {"wx", "wy", "wz", "vx", "vy", "vz"})),
                   {-0.30819023188, 0.824800540809, -0.291071896368, 0.214275546348, -0.335824639929, 0.398437727935}, tol));
  std::vector<std::string> udotNames;
  for (const char* b : {"body1", "body2"})
    for (const char* a : {"wx", "wy", "wz", "vx", "vy", "vz"}) udotNames.push_back(std::string("udot.") + b + "." + a);
  EXPECT_TRUE(near(rec.get("udot", udotNames),
                   {-0.159774729084, 2.17276079444, -1.8578658426, 0.0479038109544, 0.877684169256, 1.65750394147,
                    0.253238764928, -3.92440194614, 2.7483979982, 0.38436558273, -1.58440662551, -2.59508607533},
                   tol));
  // X_FM = ~X_GF X_GM (translation p_FM = ~R_GF (p_GM - p_GF)); its translation is q[3..5].
  const auto X = [&](const char* n) {
    return rec.get("bushing." + std::string(n), columns(B + n, {"r00", "r01", "r02", "r10", "r11", "r12", "r20", "r21", "r22", "x", "y", "z"}));
  };
  const std::vector<double> GF = X("X_GF"), GM = X("X_GM"), FM = X("X_FM");
  std::vector<double> p_FM(3, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) p_FM[i] += GF[3 * j + i] * (GM[9 + j] - GF[9 + j]);
  EXPECT_TRUE(near({FM[9], FM[10], FM[11]}, p_FM, 1e-14));
  EXPECT_TRUE(near({FM[9], FM[10], FM[11]}, {0.576694242593, 0.205624382824, 0.153861138546}, tol));
}

TEST_F(Record, EveryRegistryFieldIsRecordableAndEveryNameIsUnique) {
  for (const FieldInfo& f : worldFields()) {
    const Quantity* q = findQuantity(f.name);
    ASSERT_NE(q, nullptr) << f.name;
    EXPECT_FALSE(q->derived) << f.name;
    EXPECT_EQ(q->info.per, f.per) << f.name;
    EXPECT_EQ(q->info.parts, f.parts) << f.name;
  }
  EXPECT_EQ(findQuantity("no.such.quantity"), nullptr);
  const Scene scene = loadSceneFile(kRoot + "/scenes/chain-7-seed.json");
  std::set<std::string> names, columnNames;
  std::size_t columnCount = 0;
  for (const Quantity& q : recordableQuantities()) {
    EXPECT_TRUE(names.insert(q.name()).second) << "quantity named twice: " << q.name();
    EXPECT_STRNE(q.info.doc, "") << q.name();
    for (const std::string& c : publicNames(*scene.model, q.info)) {
      EXPECT_TRUE(columnNames.insert(c).second) << "column named twice: " << c << " (" << q.name() << ")";
      ++columnCount;
    }
    EXPECT_EQ(static_cast<std::int64_t>(publicNames(*scene.model, q.info).size()), q.count(*scene.model));
  }
  EXPECT_EQ(columnNames.size(), columnCount);
  EXPECT_GT(columnCount, 400u);  // chain-7-seed: 7 bodies, a bushing, a spring, a contact

  // Every column is found back by its public name.
  const Model& m = *scene.model;
  for (const Quantity& q : recordableQuantities()) {
    const std::vector<std::string> cols = publicNames(m, q.info);
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const std::optional<QuantityColumn> found = findColumn(m, cols[c]);
      ASSERT_TRUE(found.has_value()) << cols[c];
      EXPECT_EQ(found->quantity, &q) << cols[c];
      EXPECT_EQ(found->component, static_cast<std::int64_t>(c)) << cols[c];
    }
  }
  EXPECT_EQ(findColumn(m, "bushing.bushing.F_GM.fz")->component, 5);
  EXPECT_EQ(findColumn(m, "q.joint7")->quantity->name(), "q");
  EXPECT_EQ(findColumn(m, "energy.total")->quantity->name(), "energy.total");
  EXPECT_FALSE(findColumn(m, "q.joint8").has_value());
  EXPECT_FALSE(findColumn(m, "bushing.bushing.F_GM").has_value());
}

TEST_F(Record, CsvColumnsAreTheNpzNamesWithTheSameNumbers) {
  const std::string common = "simulate --worlds 3 --steps 7 --record-every 3 --precision double --device cpu "
                             "--threads 1 --record q,body.X_GB,spring.length,energy,status,contact.multipliers ";
  const fs::path csvPath = dir_ / "run.csv", npzPath = dir_ / "run.npz";
  ASSERT_EQ(run(common + "--out " + csvPath.string()).status, 0);
  ASSERT_EQ(run(common + "--out " + npzPath.string()).status, 0);
  const Recorded rec(npzPath.string());
  const std::vector<std::string> order = {"q", "body.X_GB", "spring.length", "energy", "status", "contact.multipliers"};
  std::vector<std::string> header = {"frame", "world", "time"};
  for (const std::string& n : order) {
    const std::vector<std::string> names = rec.arrays().at(n + "_names").strings();
    header.insert(header.end(), names.begin(), names.end());
  }
  EXPECT_EQ(rec.arrays().size(), 1 + 2 * order.size());  // time, each array and its names
  std::ifstream in(csvPath);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> columnsRead;
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) columnsRead.push_back(c);
  EXPECT_EQ(columnsRead, header);
  // Rows: frames at steps 0, 3, 6, 7, each world; the numbers equal the .npz's.
  const std::vector<double> time = rec.array("time").doubles();
  ASSERT_EQ(rec.array("time").shape, (std::vector<std::int64_t>{4, 3}));
  int rows = 0;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::vector<double> v;
    for (std::string cell; std::getline(row, cell, ',');) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), header.size());
    const int f = static_cast<int>(v[0]), w = static_cast<int>(v[1]);
    EXPECT_EQ(v[2], time[f * 3 + w]);
    std::size_t at = 3;
    for (const std::string& n : order) {
      const std::vector<std::string> names = rec.arrays().at(n + "_names").strings();
      const std::vector<double> want = rec.get(n, names, w, f);
      EXPECT_EQ(std::vector<double>(v.begin() + at, v.begin() + at + names.size()), want) << n << " frame " << f;
      at += names.size();
    }
    ++rows;
  }
  EXPECT_EQ(rows, 12);
  EXPECT_EQ(rec.array("status").descr, "<i4");
  EXPECT_DOUBLE_EQ(time[3 * 3], 7 * 0.001);
}

TEST_F(Record, SceneRecordKeyChoosesTheQuantities) {
  const std::string scene = chain7Seed("{\"q\": [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]}", "[\"spring.length\", \"q\"]");
  const fs::path npzPath = dir_ / "scene.npz";
  const CliResult r = run("simulate " + scene + " --worlds 2 --steps 4 --device cpu --out " + npzPath.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const Recorded rec(npzPath.string());
  std::set<std::string> members;
  for (const auto& [name, a] : rec.arrays()) members.insert(name);
  EXPECT_EQ(members, (std::set<std::string>{"time", "spring.length", "spring.length_names", "q", "q_names"}));
  // --record wins over the scene's list.
  ASSERT_EQ(run("simulate " + scene + " --worlds 2 --steps 4 --device cpu --record u --out " + npzPath.string()).status, 0);
  EXPECT_EQ(Recorded(npzPath.string()).arrays().count("spring.length"), 0u);
  EXPECT_EQ(Recorded(npzPath.string()).arrays().count("u"), 1u);
}

TEST_F(Record, BadNamesGiveTheDocumentedErrors) {
  const std::string chain = kRoot + "/scenes/chain-7.json";
  const std::string out = " --out " + (dir_ / "x.npz").string();
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"simulate " + chain + " --steps 1 --record q,bogus" + out,
       "lockstep: error: --record: no recordable quantity named 'bogus'; the names are q, u, z, time,"},
      {"simulate " + chain + " --steps 1 --record q,,u" + out, "lockstep: error: --record: empty quantity name in 'q,,u'"},
      {"simulate " + chain + " --steps 1 --record q", "--record requires --out"},
  };
  for (const Case& c : cases) {
    const CliResult r = run(c.args);
    if (c.message.rfind("lockstep: error:", 0) == 0) EXPECT_EQ(r.status, 1) << c.args;
    else EXPECT_NE(r.status, 0) << c.args;  // a command-line parse error
    EXPECT_TRUE(contains(r.err, c.message)) << c.args << "\n" << r.err;
  }
  const CliResult all = run("simulate " + chain + " --steps 1 --record bogus" + out);
  for (const char* name : {"bushing.X_FM", "spring.nonconservative_power", "contact.force_on_B", "body.X_GB",
                           "energy.total", "and all", "`lockstep info SCENE` lists them"})
    EXPECT_TRUE(contains(all.err, name)) << name;
  EXPECT_FALSE(fs::exists(dir_ / "x.npz"));  // refused before running

  const std::string scene = chain7Seed("{\"q\": [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]}", "[\"q\", \"bogus\"]");
  const CliResult s = run("simulate " + scene + " --steps 1");
  EXPECT_EQ(s.status, 1);
  EXPECT_EQ(s.err, "lockstep: error: " + scene + ": simulation.record[1]: no recordable quantity named 'bogus'; "
                   "`lockstep info SCENE` lists them\n");
}

TEST_F(Record, InfoListsEveryRecordableNameAndParameter) {
  CliResult r = run("info " + kRoot + "/scenes/chain-7-seed.json");
  ASSERT_EQ(r.status, 0) << r.err;
  // chain-7-seed has every kind of element but ground contacts: a scene with one adds those.
  const std::string ground = (dir_ / "ground.json").string();
  std::ofstream(ground) << R"({"bodies": [{"name": "ball", "mobilizer": "translation", "mass": 1,
                                           "inertia": [0.001, 0.001, 0.001, 0, 0, 0]}],
                               "ground": {"contact_spheres": [{"body": "ball", "radius": 0.05}]}})";
  const CliResult g = run("info " + ground);
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_TRUE(contains(g.out, "ground contact 'ball': ball sphere at (0, 0, 0) radius 0.05")) << g.out;
  EXPECT_TRUE(contains(g.out, "ground.<ground>.{stiffness,dissipation,static_friction")) << g.out;
  r.out += g.out;
  // Sensors come with MJCF models that declare them.
  const std::string mjcf = (dir_ / "sensor.xml").string();
  std::ofstream(mjcf) << R"(<mujoco><worldbody><body><joint name="hinge"/><geom size=".1" mass="1"/></body></worldbody>
                            <sensor><jointpos name="angle" joint="hinge"/></sensor></mujoco>)";
  const CliResult s = run("info " + mjcf);
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_TRUE(contains(s.out, "per sensor value: angle\n    sensors ")) << s.out;
  r.out += s.out;
  // MuJoCo's soft constraints come with an MJCF import under the "mujoco" contact law.
  const std::string softXml = (dir_ / "soft.xml").string(), soft = (dir_ / "soft.json").string();
  std::ofstream(softXml) << R"(<mujoco><worldbody><geom type="plane" size="1 1 .1"/>
                               <body pos="0 0 .1"><joint name="lift" type="slide" axis="0 0 1" limited="true" range="-1 1"/>
                               <geom size=".1" mass="1"/></body></worldbody></mujoco>)";
  std::ofstream(soft) << R"({"mjcf": {"path": "soft.xml", "contact_law": "mujoco"}})";
  const CliResult m = run("info " + soft);
  ASSERT_EQ(m.status, 0) << m.err;
  r.out += m.out;
  for (const Quantity& q : recordableQuantities()) EXPECT_TRUE(contains(r.out, "    " + q.name() + " ")) << q.name();
  for (const char* part : {"recordable quantities", "per body: link1 link2", "body.<body>.X_GB.{r00,r01",
                           "bushing.<bushing>.F_GM.{mx,my,mz,fx,fy,fz}", "spring.<spring>.length",
                           "contact.<contact>.multiplier.{x,y,z}", "per-world parameters",
                           "bushing.<bushing>.stiffness.{0,1,2,3,4,5}", "spring.<spring>.{free_length,stiffness,damping}",
                           "gravity.{x,y,z}"})
    EXPECT_TRUE(contains(r.out, part)) << part << "\n" << r.out;
}

TEST_F(Record, PlotWritesPngImages) {
  const fs::path npzPath = dir_ / "run.npz";
  ASSERT_EQ(run("simulate --worlds 3 --steps 40 --device cpu --record q,energy,energy.balance,contactError,"
                "contact.velocity_error,bushing.X_FM --out " + npzPath.string()).status, 0);
  const fs::path plots = dir_ / "plots";
  const CliResult r = run("plot " + npzPath.string() + " --worlds 0,2 --out " + plots.string());
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* file : {"q.world0.png", "q.world2.png", "energy.world0.png", "energy.world2.png", "energy_drift.png",
                           "constraints.world0.png", "constraints.world2.png"}) {
    const std::string png = readText(plots / file);
    EXPECT_GT(png.size(), 1000u) << file;
    EXPECT_EQ(png.substr(0, 8), "\x89PNG\r\n\x1a\n") << file;
    EXPECT_TRUE(contains(r.out, (plots / file).string())) << file;
  }
  EXPECT_EQ(run("plot " + npzPath.string() + " --quantities bushing.X_FM --out " + plots.string()).status, 0);
  EXPECT_TRUE(fs::exists(plots / "bushing.X_FM.world0.png"));
  // The default recording (kinetic_energy, potential_energy, z) plots too.
  const fs::path legacy = dir_ / "legacy.npz";
  ASSERT_EQ(run("simulate --worlds 1 --steps 10 --device cpu --out " + legacy.string()).status, 0);
  EXPECT_EQ(run("plot " + legacy.string() + " --out " + plots.string() + "/legacy").status, 0);
  EXPECT_TRUE(fs::exists(plots / "legacy" / "energy_drift.png"));

  const CliResult world = run("plot " + npzPath.string() + " --worlds 3");
  EXPECT_EQ(world.status, 1);
  EXPECT_TRUE(contains(world.err, "--worlds: '3' is not a world of " + npzPath.string() + " (it has worlds 0 to 2)"))
      << world.err;
  const std::string notZip = write("not_a_recording.npz", "q,u\n1,2\n");
  const CliResult bad = run("plot " + notZip);
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(contains(bad.err, "lockstep: error: " + notZip + ": cannot open as a .npz archive: Not a zip archive"))
      << bad.err;
  const CliResult what = run("plot " + npzPath.string() + " --quantities u");
  EXPECT_EQ(what.status, 1);
  EXPECT_TRUE(contains(what.err, "--quantities: 'u' is not in " + npzPath.string() + " (it holds bushing.X_FM,"))
      << what.err;
}

}  // namespace
}  // namespace lockstep::test
