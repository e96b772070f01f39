// Recordable quantities: the registry's per-world fields, and the one table of derived quantities.
#include "lockstep/engine/quantities.h"

#include <stdexcept>

namespace lockstep {

namespace {

// What the derived quantities of one world read, from the Batch's getters at its host copy. Only
// the groups some selected quantity needs are filled.
template <class T>
struct WorldSample {
  std::vector<Transformd> X_GB;  // [nb]
  std::vector<SpatialVecd> V_GB;  // [nb], at Bo, in G
  std::vector<BushingQuantities<T>> bushing;
  std::vector<double> bushingDissipated;
  std::vector<SpringDamperQuantities<T>> spring;
  std::vector<typename Batch<T>::ContactQuantities> contact;
  std::vector<GroundContactQuantities<T>> ground;
  std::vector<double> groundAbsorbed;
  Vec3d com = Vec3d::zero(), comVelocity = Vec3d::zero();  // of every body together, in G (when recorded)
  double kinetic = 0, potential = 0, dissipated = 0;  // dissipated: the sum of the z states
  double actuatorWork = 0;                            // minus the "actuation" z state
};

template <class T>
using ComputeFn = void (*)(const WorldSample<T>& s, int element, double* out);

struct Derived {
  const char* name;
  Per per;
  const char* prefix;
  std::string parts;  // space-separated component names
  const char* doc;
  ComputeFn<float> computeFloat;
  ComputeFn<double> computeDouble;
};

// A derived quantity; `compute` is a captureless generic lambda (s, element, out) that writes the
// quantity's components of one element to out, for either precision.
template <class L>
Derived derived(const char* name, Per per, const char* prefix, std::string parts, const char* doc, L compute) {
  return {name, per, prefix, std::move(parts), doc, compute, compute};
}

// Component names of a transform (R row-major, then p), a spatial vector and a 3-vector.
std::string transformParts(const std::string& n) {
  std::string s;
  for (const char* c : {"r00", "r01", "r02", "r10", "r11", "r12", "r20", "r21", "r22", "x", "y", "z"})
    s += n + "." + c + " ";
  return s;
}
std::string spatialParts(const std::string& n) {
  std::string s;
  for (const char* c : {"wx", "wy", "wz", "vx", "vy", "vz"}) s += n + "." + c + " ";
  return s;
}
std::string forceParts(const std::string& n) {
  std::string s;
  for (const char* c : {"mx", "my", "mz", "fx", "fy", "fz"}) s += n + "." + c + " ";
  return s;
}
std::string vec3Parts(const std::string& n) { return n + ".x " + n + ".y " + n + ".z"; }
std::string sixParts(const std::string& n) {
  std::string s;
  for (int i = 0; i < 6; ++i) s += n + "." + std::to_string(i) + " ";
  return s;
}

template <class U>
void put(double* out, const Transform<U>& X) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out[3 * i + j] = double(X.R(i, j));
  for (int i = 0; i < 3; ++i) out[9 + i] = double(X.p[i]);
}
template <class U>
void put(double* out, const SpatialVec<U>& V) {
  for (int i = 0; i < 6; ++i) out[i] = double(V[i]);
}
template <class U>
void put(double* out, const Vec3<U>& v) {
  for (int i = 0; i < 3; ++i) out[i] = double(v[i]);
}
template <class U>
void put(double* out, const U (&a)[6]) {
  for (int i = 0; i < 6; ++i) out[i] = double(a[i]);
}

// THE TABLE of derived quantities: name, counted per, public prefix, component names, description,
// and how to compute it from one world's sample. Public names are prefix.element.part.
const std::vector<Derived>& derivedTable() {
  static const std::vector<Derived> table = {
      // ---- bodies ----
      derived("body.X_GB", Per::Body, "body", transformParts("X_GB"),
              "pose X_GB of each body in Ground: R_GB row-major (r00 .. r22), then p_GB (x, y, z)",
              [](const auto& s, int b, double* out) { put(out, s.X_GB[b]); }),
      derived("body.V_GB", Per::Body, "body", spatialParts("V_GB"),
              "spatial velocity V_GB of each body at its origin Bo, in Ground: [w; v]",
              [](const auto& s, int b, double* out) { put(out, s.V_GB[b]); }),
      // ---- LinearBushing: q and f are the registry field bushingState ----
      derived("bushing.qdot", Per::Bushing, "bushing", sixParts("qdot"),
              "time derivatives of the bushing coordinates q (XYZ angle rates, then v_FM in F)",
              [](const auto& s, int i, double* out) { put(out, s.bushing[i].qdot); }),
      derived("bushing.X_GF", Per::Bushing, "bushing", transformParts("X_GF"), "frame F (on body 1) in Ground",
              [](const auto& s, int i, double* out) { put(out, s.bushing[i].X_GF); }),
      derived("bushing.X_GM", Per::Bushing, "bushing", transformParts("X_GM"), "frame M (on body 2) in Ground",
              [](const auto& s, int i, double* out) { put(out, s.bushing[i].X_GM); }),
      derived("bushing.X_FM", Per::Bushing, "bushing", transformParts("X_FM"), "frame M in frame F",
              [](const auto& s, int i, double* out) { put(out, s.bushing[i].X_FM); }),
      derived("bushing.V_GF", Per::Bushing, "bushing", spatialParts("V_GF"), "velocity of frame F at OF, in Ground",
              [](const auto& s, int i, double* out) { put(out, s.bushing[i].V_GF); }),
      derived("bushing.V_GM", Per::Bushing, "bushing", spatialParts("V_GM"), "velocity of frame M at OM, in Ground",
              [](const auto& s, int i, double* out) { put(out, s.bushing[i].V_GM); }),
      derived("bushing.V_FM", Per::Bushing, "bushing", spatialParts("V_FM"), "velocity of M in F, at OM, expressed in F",
              [](const auto& s, int i, double* out) { put(out, s.bushing[i].V_FM); }),
      derived("bushing.F_GF", Per::Bushing, "bushing", forceParts("F_GF"), "spatial force on body 1 at OF, in Ground",
              [](const auto& s, int i, double* out) { put(out, s.bushing[i].F_GF); }),
      derived("bushing.F_GM", Per::Bushing, "bushing", forceParts("F_GM"), "spatial force on body 2 at OM, in Ground",
              [](const auto& s, int i, double* out) { put(out, s.bushing[i].F_GM); }),
      derived("bushing.potential_energy", Per::Bushing, "bushing", "potential_energy", "sum k_i q_i^2 / 2",
              [](const auto& s, int i, double* out) { out[0] = double(s.bushing[i].potentialEnergy); }),
      derived("bushing.power", Per::Bushing, "bushing", "power", "power dissipated, sum c_i qdot_i^2",
              [](const auto& s, int i, double* out) { out[0] = double(s.bushing[i].powerDissipation); }),
      derived("bushing.dissipated_energy", Per::Bushing, "bushing", "dissipated_energy",
              "energy dissipated so far (the bushing's auxiliary state)",
              [](const auto& s, int i, double* out) { out[0] = s.bushingDissipated[i]; }),
      // ---- LinearSpringDamper ----
      derived("spring.length", Per::Spring, "spring", "length", "distance l from P to Q",
              [](const auto& s, int i, double* out) { out[0] = double(s.spring[i].length); }),
      derived("spring.rate", Per::Spring, "spring", "rate", "its rate of change, ldot",
              [](const auto& s, int i, double* out) { out[0] = double(s.spring[i].lengthDot); }),
      derived("spring.force", Per::Spring, "spring", vec3Parts("f_AP"),
              "force f_AP on body A at P, in Ground (body B gets -f_AP at Q)",
              [](const auto& s, int i, double* out) { put(out, s.spring[i].f_AP); }),
      derived("spring.potential_energy", Per::Spring, "spring", "potential_energy", "k (l - l0)^2 / 2",
              [](const auto& s, int i, double* out) { out[0] = double(s.spring[i].potentialEnergy); }),
      derived("spring.conservative_power", Per::Spring, "spring", "conservative_power", "-k (l - l0) ldot",
              [](const auto& s, int i, double* out) { out[0] = double(s.spring[i].conservativePower); }),
      derived("spring.nonconservative_power", Per::Spring, "spring", "nonconservative_power", "-c ldot^2",
              [](const auto& s, int i, double* out) { out[0] = double(s.spring[i].nonConservativePower); }),
      // ---- SphereOnSphereContact (the position error is the registry field contactError) ----
      derived("contact.velocity_error", Per::Contact, "contact", vec3Parts("velocity_error"),
              "x, y: slip (0 unless rolling is enforced); z: time derivative of the separation",
              [](const auto& s, int i, double* out) { put(out, s.contact[i].velocityErrors); }),
      derived("contact.acceleration_error", Per::Contact, "contact", vec3Parts("acceleration_error"),
              "time derivatives of the velocity errors (of the last evaluation)",
              [](const auto& s, int i, double* out) { put(out, s.contact[i].accelerationErrors); }),
      derived("contact.multipliers", Per::Contact, "contact", vec3Parts("multiplier"),
              "multipliers (x, y, z) in the contact frame C; the force on sphere B is -multipliers",
              [](const auto& s, int i, double* out) { put(out, s.contact[i].multipliers); }),
      derived("contact.force_on_B", Per::Contact, "contact", vec3Parts("force_on_B"),
              "constraint force on sphere B, in Ground (0 when disabled)",
              [](const auto& s, int i, double* out) { put(out, s.contact[i].forceOnSphereBInG); }),
      derived("contact.X_GC", Per::Contact, "contact", transformParts("X_GC"),
              "contact frame C in Ground (Cz along the center line from F to B)",
              [](const auto& s, int i, double* out) { put(out, s.contact[i].X_GC); }),
      derived("contact.separation", Per::Contact, "contact", "separation",
              "distance between the sphere surfaces (negative: overlap)",
              [](const auto& s, int i, double* out) { out[0] = s.contact[i].positionError; }),
      // ---- ground contacts (penetration, slip speed, forces and power are the registry field groundState) ----
      derived("ground.force", Per::Ground, "ground", vec3Parts("force_on_sphere"),
              "force on the sphere's body at the contact point, in Ground",
              [](const auto& s, int i, double* out) { put(out, s.ground[i].forceOnSphere); }),
      derived("ground.contact_point", Per::Ground, "ground", vec3Parts("p_GP"),
              "contact point P (midway into the overlap), in Ground",
              [](const auto& s, int i, double* out) { put(out, s.ground[i].p_GP); }),
      derived("ground.normal_velocity", Per::Ground, "ground", "normal_velocity",
              "velocity of the sphere's point at P into the half-space",
              [](const auto& s, int i, double* out) { out[0] = double(s.ground[i].normalVelocity); }),
      derived("ground.absorbed_energy", Per::Ground, "ground", "absorbed_energy",
              "energy the contact has taken out of the system, minus its work (its auxiliary state)",
              [](const auto& s, int i, double* out) { out[0] = s.groundAbsorbed[i]; }),
      // ---- the whole mechanism ----
      derived("center_of_mass", Per::World, "center_of_mass", "x y z vx vy vz",
              "centre of mass of all bodies together and its velocity, in Ground",
              [](const auto& s, int, double* out) {
                put(out, s.com);
                put(out + 3, s.comVelocity);
              }),
      // ---- energies ----
      derived("energy.total", Per::World, "energy", "total", "kinetic + potential energy",
              [](const auto& s, int, double* out) { out[0] = s.kinetic + s.potential; }),
      derived("energy.balance", Per::World, "energy", "balance",
              "kinetic + potential + dissipated energy - work of the actions and actuators (the sum of the z "
              "states): constant without applied body forces",
              [](const auto& s, int, double* out) { out[0] = s.kinetic + s.potential + s.dissipated; }),
      derived("actuators.work", Per::World, "actuators", "work",
              "work done so far by the actions and PD actuators (efforts within the effort limits, times u)",
              [](const auto& s, int, double* out) { out[0] = s.actuatorWork; }),
  };
  return table;
}

std::vector<std::string> splitWords(const std::string& s) {
  std::vector<std::string> out;
  std::string word;
  for (char c : s + ' ') {
    if (c != ' ') {
      word += c;
    } else if (!word.empty()) {
      out.push_back(word);
      word.clear();
    }
  }
  return out;
}

std::vector<Quantity> listQuantities() {
  std::vector<Quantity> out;
  for (const FieldInfo& f : worldFields()) out.push_back({f, false, -1});
  const std::vector<Derived>& table = derivedTable();
  for (std::size_t i = 0; i < table.size(); ++i) {
    const Derived& d = table[i];
    out.push_back({FieldInfo{d.name, d.per, Role::Observation, d.prefix, splitWords(d.parts), d.doc, false}, true,
                   static_cast<int>(i)});
  }
  return out;
}

// Element e, part k of a registry field of world w, through the Batch's raw host view.
double readField(const FieldView& v, std::int64_t w, std::int64_t c) {
  const std::int64_t at = w * v.worldStride + c * v.componentStride;
  switch (v.elementType) {
    case FieldView::Type::Float32: return double(static_cast<const float*>(v.data)[at]);
    case FieldView::Type::Float64: return static_cast<const double*>(v.data)[at];
    case FieldView::Type::Int32: return double(static_cast<const std::int32_t*>(v.data)[at]);
  }
  return 0;
}

template <class T>
ComputeFn<T> computeOf(const Derived& d);
template <>
ComputeFn<float> computeOf<float>(const Derived& d) { return d.computeFloat; }
template <>
ComputeFn<double> computeOf<double>(const Derived& d) { return d.computeDouble; }

}  // namespace

const std::vector<Quantity>& recordableQuantities() {
  static const std::vector<Quantity> quantities = listQuantities();
  return quantities;
}

const Quantity* findQuantity(const std::string& name) {
  for (const Quantity& q : recordableQuantities())
    if (name == q.info.name) return &q;
  return nullptr;
}

std::string quantityNames() {
  std::string all;
  for (const Quantity& q : recordableQuantities()) all += (all.empty() ? "" : ", ") + q.name();
  return all;
}

std::optional<QuantityColumn> findColumn(const Model& model, const std::string& publicName) {
  for (const Quantity& q : recordableQuantities()) {
    if (publicName.compare(0, std::char_traits<char>::length(q.info.prefix), q.info.prefix) != 0) continue;
    const std::vector<std::string> names = publicNames(model, q.info);
    for (std::size_t c = 0; c < names.size(); ++c)
      if (names[c] == publicName) return QuantityColumn{&q, static_cast<std::int64_t>(c)};
  }
  return std::nullopt;
}

template <class T>
void sampleQuantities(Batch<T>& batch, const std::vector<const Quantity*>& quantities,
                      std::vector<std::vector<double>>& out) {
  const Model& model = batch.model();
  const Sizes s = sizesOf(model);
  const std::int64_t W = batch.numWorlds();
  out.resize(quantities.size());
  std::vector<FieldView> views(quantities.size());
  bool needs[static_cast<int>(Per::MujocoDof) + 1] = {};  // by Per
  bool needsCenterOfMass = false;
  for (std::size_t k = 0; k < quantities.size(); ++k) {
    const Quantity& q = *quantities[k];
    out[k].resize(static_cast<std::size_t>(W * q.info.count(s)));
    needsCenterOfMass |= q.name() == "center_of_mass";
    if (q.derived) needs[static_cast<int>(q.info.per)] = true;
    else views[k] = batch.field(q.info.name, MemorySpace::Host);
  }
  WorldSample<T> sample;
  for (std::int64_t w = 0; w < W; ++w) {
    // Throws when the device copy is newer than the host copy (download() first).
    sample.kinetic = batch.kineticEnergy(w);
    sample.potential = batch.potentialEnergy(w);
    if (needs[static_cast<int>(Per::World)]) {
      sample.dissipated = 0;
      for (double z : batch.z(w)) sample.dissipated += z;
      sample.actuatorWork = batch.actuatorWork(w);
    }
    if (needsCenterOfMass) {
      double mass = 0;
      sample.com = sample.comVelocity = Vec3d::zero();
      for (int b = 0; b < s.nb; ++b) {
        const MassProperties mp = batch.massProperties(w, b);
        const Transformd X = batch.bodyPose(w, b);
        const SpatialVecd V = batch.bodyVelocity(w, b);
        const Vec3d r = X.R * mp.com, om{{V[0], V[1], V[2]}}, v{{V[3], V[4], V[5]}};
        sample.com = sample.com + mp.mass * (X.p + r);
        sample.comVelocity = sample.comVelocity + mp.mass * (v + cross(om, r));
        mass += mp.mass;
      }
      if (mass > 0) {
        sample.com = (1 / mass) * sample.com;
        sample.comVelocity = (1 / mass) * sample.comVelocity;
      }
    }
    if (needs[static_cast<int>(Per::Body)]) {
      sample.X_GB.clear();
      sample.V_GB.clear();
      for (int b = 0; b < s.nb; ++b) {
        sample.X_GB.push_back(batch.bodyPose(w, b));
        sample.V_GB.push_back(batch.bodyVelocity(w, b));
      }
    }
    if (needs[static_cast<int>(Per::Bushing)]) {
      sample.bushing.clear();
      sample.bushingDissipated.clear();
      for (int i = 0; i < s.nBushings; ++i) {
        sample.bushing.push_back(batch.bushing(w, i));
        sample.bushingDissipated.push_back(batch.dissipatedEnergy(w, i));
      }
    }
    if (needs[static_cast<int>(Per::Spring)]) {
      sample.spring.clear();
      for (int i = 0; i < s.nSprings; ++i) sample.spring.push_back(batch.spring(w, i));
    }
    if (needs[static_cast<int>(Per::Contact)]) {
      sample.contact.clear();
      for (int i = 0; i < s.nContacts; ++i) sample.contact.push_back(batch.contact(w, i));
    }
    if (needs[static_cast<int>(Per::Ground)]) {
      sample.ground.clear();
      sample.groundAbsorbed.clear();
      const std::vector<double> z = batch.z(w);
      for (int i = 0; i < s.nGround; ++i) {
        sample.ground.push_back(batch.groundContact(w, i));
        sample.groundAbsorbed.push_back(z[model.groundContactZ(i)]);
      }
    }
    for (std::size_t k = 0; k < quantities.size(); ++k) {
      const Quantity& q = *quantities[k];
      const std::int64_t n = q.info.count(s);
      double* row = out[k].data() + w * n;
      if (!q.derived) {
        for (std::int64_t c = 0; c < n; ++c) row[c] = readField(views[k], w, c);
        continue;
      }
      const ComputeFn<T> compute = computeOf<T>(derivedTable()[q.table]);
      const int width = q.info.width();
      for (std::int64_t e = 0; e < perCount(q.info.per, s); ++e) compute(sample, static_cast<int>(e), row + e * width);
    }
  }
}

template void sampleQuantities<float>(Batch<float>&, const std::vector<const Quantity*>&,
                                      std::vector<std::vector<double>>&);
template void sampleQuantities<double>(Batch<double>&, const std::vector<const Quantity*>&,
                                       std::vector<std::vector<double>>&);

}  // namespace lockstep
