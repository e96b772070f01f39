// Exact derivatives of one world's step and of one evaluation, by the per-world code itself run on
// dual numbers (dual.h): no second copy of the physics.
//
// The world is copied into a dual world (every registry field and parameter as Dual<T, N>), N
// directions of its inputs are seeded, and the same stepWorld (integrator.h) or forwardDynamics
// (forward.h) that the backends run computes the value and N directional derivatives at once; a
// linearization runs ceil(directions / N) such passes.
//
// The directions, in the world's tangent space (as MuJoCo's mjd_transitionFD):
//   [0, nu)          position increments dq: one per generalized speed. For a mobilizer whose qdot is
//                    u, dq adds to q; for Ball and Free the rotation is q(dq) = exp(dq_w) * q, the
//                    increment dq_w a rotation vector in F (as their u = w_FM in F: integrating u for
//                    a unit time moves q by dq = u), and Free's translation adds to p_FM.
//   [nu, 2nu)        speeds u
//   [2nu, 3nu)       actions tau
//   [3nu, 3nu + np)  per-world parameter components, each a flat index into the world's parameters
//                    (LOCKSTEP_PARAM_FIELDS in registry order, parameterOffset below)
// The outputs: a step's next state x+ = [q+ in the same tangent space at q+ (rotations: 2 vec(dq+
// conj(q+))); u+] (2nu rows), or an evaluation's udot (nu rows). Column k of a world's Jacobian is
// the derivative along direction k; component (row r, column k) of world w is
// J[(r * directions + k) * worlds + w] (world innermost, as every per-world field).
#pragma once

#include "lockstep/physics/dual.h"
#include "lockstep/physics/integrator.h"

namespace lockstep {

// Tangents per dual pass: the directions one pass differentiates along.
constexpr int kDualTangents = 8;

struct Directions {
  std::int32_t nu = 0;
  std::int32_t nParams = 0;
  const std::int32_t* param = nullptr;  // [nParams] flat parameter indices (backend memory)
  LOCKSTEP_HD_INLINE std::int32_t count() const { return 3 * nu + nParams; }
};

// Scalars of every parameter of one world, in registry order, and where parameter field `name`
// starts among them.
LOCKSTEP_HD_INLINE std::int64_t parameterCount(const Sizes& s) {
  std::int64_t n = 0;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) n += fieldCount(s, per, parts);
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  return n;
}

// Scalars of one dual world: its world fields of the batch's scalar type, its parameters and its
// workspace; and the int32 fields (status bits) beside them.
struct DualWorldLayout {
  std::int64_t fields = 0, params = 0, workspace = 0, total = 0, ints = 0;
  WorkspaceLayout ws;
  static DualWorldLayout of(const Sizes& s) {
    DualWorldLayout L;
    using T = double;  // the registry's batch scalar: only which fields are int32 matters here
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  (std::is_same<type, std::int32_t>::value ? L.ints : L.fields) += fieldCount(s, per, parts);
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    L.params = parameterCount(s);
    L.ws = WorkspaceLayout::of(s);
    L.workspace = L.ws.total;
    L.total = L.fields + L.params + L.workspace;
    return L;
  }
};

// One dual world in an array of D and one of int32, each component `stride` apart (1: one world's
// own storage, as the CPU backend's threads keep it; the number of worlds: world innermost, as the
// CUDA kernel keeps them): its world view (parameters included), its parameters as one writable
// view and its workspace.
template <class D>
struct DualWorld {
  WorldView<D> w;
  Strided<D> params;  // every parameter, registry order
  Workspace<D> ws;
};
template <class D>
LOCKSTEP_HD DualWorld<D> dualWorldAt(const Sizes& s, const DualWorldLayout& L, D* base, std::int32_t* ints,
                                     std::int64_t stride) {
  using T = D;  // the registry's batch scalar, as the dual world holds it
  DualWorld<D> r;
  std::int64_t o = 0, oi = 0;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc)          \
  if constexpr (std::is_same<type, std::int32_t>::value) {             \
    r.w.name = Strided<std::int32_t>{ints + oi * stride, stride};      \
    oi += fieldCount(s, per, parts);                                   \
  } else {                                                             \
    r.w.name = Strided<D>{base + o * stride, stride};                  \
    o += fieldCount(s, per, parts);                                    \
  }
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  r.params = Strided<D>{base + L.fields * stride, stride};
  o = 0;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) \
  r.w.params.name = Strided<const D>(r.params + o);           \
  o += fieldCount(s, per, parts);
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  r.ws = Workspace<D>{L.ws, Strided<D>{base + (L.fields + L.params) * stride, stride}};
  return r;
}

// Copies world w's fields and parameters into the dual world, every tangent zero.
template <class T, class D>
LOCKSTEP_HD void loadDualWorld(const Sizes& s, const WorldView<T>& w, const DualWorld<D>& d) {
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc)                      \
  for (std::int64_t c = 0, n = fieldCount(s, per, parts); c < n; ++c) {            \
    if constexpr (std::is_same<type, std::int32_t>::value) d.w.name[c] = w.name[c]; \
    else d.w.name[c] = D(w.name[c]);                                               \
  }
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  std::int64_t o = 0;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc)                              \
  for (std::int64_t c = 0, n = fieldCount(s, per, parts); c < n; ++c) d.params[o + c] = D(w.params.name[c]); \
  o += fieldCount(s, per, parts);
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
}

// Seeds directions k0 .. k0 + N - 1 into a dual world just loaded (all tangents zero).
template <class T, int N>
LOCKSTEP_HD void seedDirections(const ModelView<T>& model, const DualWorld<Dual<T, N>>& d, const Directions& dirs,
                                int k0) {
  const Sizes& s = model.sizes;
  const int nu = s.nu;
  for (int j = 0; j < N; ++j) {
    const int k = k0 + j;
    if (k >= dirs.count()) break;
    if (k < nu) {  // a position increment of speed k's coordinates
      for (int b = 0; b < s.nb; ++b) {
        const BodyTopology topo = model.body[b];
        const int i = k - topo.uOffset;
        if (i < 0 || i >= topo.nu) continue;
        Strided<Dual<T, N>> q = d.w.q + topo.qOffset;
        if (mobilizerQdotIsU(topo.mobilizer)) {
          q[i].d[j] = T(1);
        } else if (i >= 3) {  // Free: translation
          q[4 + i - 3].d[j] = T(1);
        } else {  // the rotation: dq/d(dq_w[i]) = 1/2 (0, e_i) * q
          const T qw = q[0].v, qx = q[1].v, qy = q[2].v, qz = q[3].v;
          const T e[3] = {T(i == 0), T(i == 1), T(i == 2)};
          q[0].d[j] = T(-0.5) * (e[0] * qx + e[1] * qy + e[2] * qz);
          q[1].d[j] = T(0.5) * (e[0] * qw + e[1] * qz - e[2] * qy);
          q[2].d[j] = T(0.5) * (e[1] * qw + e[2] * qx - e[0] * qz);
          q[3].d[j] = T(0.5) * (e[2] * qw + e[0] * qy - e[1] * qx);
        }
      }
    } else if (k < 2 * nu) {
      d.w.u[k - nu].d[j] = T(1);
    } else if (k < 3 * nu) {
      d.w.tau[k - 2 * nu].d[j] = T(1);
    } else {
      d.params[dirs.param[k - 3 * nu]].d[j] = T(1);
    }
  }
}

// The tangent-space rows of q (nu of them) for tangent j of the dual q: dq itself where qdot is u,
// and for quaternions the rotation vector 2 vec(dq conj(q)) of the unit q.
template <class T, int N>
LOCKSTEP_HD void positionTangents(const ModelView<T>& model, Strided<const Dual<T, N>> q, int j, Strided<T> rows) {
  for (int b = 0; b < model.sizes.nb; ++b) {
    const BodyTopology topo = model.body[b];
    Strided<const Dual<T, N>> qb = q + topo.qOffset;
    const Strided<T> r = rows + topo.uOffset;
    if (mobilizerQdotIsU(topo.mobilizer)) {
      for (int i = 0; i < topo.nu; ++i) r[i] = qb[i].d[j];
      continue;
    }
    const T w = qb[0].v, dw = qb[0].d[j];
    const Vec3<T> v = {{qb[1].v, qb[2].v, qb[3].v}}, dv = {{qb[1].d[j], qb[2].d[j], qb[3].d[j]}};
    const Vec3<T> rot = T(2) * (w * dv - dw * v - cross(dv, v));
    for (int i = 0; i < 3; ++i) r[i] = rot[i];
    if (topo.mobilizer == MobilizerType::Free)
      for (int i = 0; i < 3; ++i) r[3 + i] = qb[4 + i].d[j];
  }
}

// What a world's linearization computes.
enum class Linearization : std::int8_t {
  Step,        // d x+ / d (dq, u, tau, p): 2nu rows
  Evaluation,  // d udot / d (dq, u, tau, p) at the current state: nu rows
};

// Rows of the Jacobian of a linearization.
LOCKSTEP_HD_INLINE int jacobianRows(const Sizes& s, Linearization what) {
  return what == Linearization::Step ? 2 * s.nu : s.nu;
}

// The Jacobian J (rows x dirs.count(), view J[r * count + k] of this world) of one step of world w
// (settings as the batch steps, one step) or of its evaluation, through the dual world d
// (dualModel: the model's frames as duals). A flagged world, or one whose step fails (singular
// joint inertia, non-finite state, ...) gets NaN everywhere; returns that world's StatusFlag bits
// (the world itself is not changed).
template <class T, int N, bool kConstraints>
LOCKSTEP_HD int linearizeWorld(const ModelView<T>& model, const ModelView<Dual<T, N>>& dualModel,
                               const WorldView<T>& w, const DualWorld<Dual<T, N>>& d,
                               const StepSettings<Dual<T, N>>& settings, const Directions& dirs,
                               Linearization what, Strided<T> J) {
  using D = Dual<T, N>;
  const Sizes& s = model.sizes;
  const int count = dirs.count(), rows = jacobianRows(s, what);
  int status = w.status[0];
  for (int k0 = 0; k0 < count && status == kStatusOk; k0 += N) {
    loadDualWorld(s, w, d);
    seedDirections<T, N>(model, d, dirs, k0);
    if (what == Linearization::Step) {
      status = stepWorld<D, kConstraints>(dualModel, d.w, d.ws, settings);
    } else {
      status = forwardDynamics<D, kConstraints>(dualModel, d.w, d.ws, d.w.udot, d.ws.ydot(s.nq + s.nu),
                                                d.w.multipliers).status;
    }
    if (status != kStatusOk) break;
    for (int j = 0; j < N && k0 + j < count; ++j) {
      const int k = k0 + j;
      if (what == Linearization::Step) {
        positionTangents<T, N>(model, Strided<const D>(d.w.q), j, Strided<T>{(J + k).p, J.stride * count});
        for (int r = 0; r < s.nu; ++r) J[std::int64_t(s.nu + r) * count + k] = d.w.u[r].d[j];
      } else {
        for (int r = 0; r < s.nu; ++r) J[std::int64_t(r) * count + k] = d.w.udot[r].d[j];
      }
    }
  }
  if (status != kStatusOk) {
    const T nan = T(0) / T(0);
    for (std::int64_t c = 0; c < std::int64_t(rows) * count; ++c) J[c] = nan;
  }
  return status;
}

}  // namespace lockstep
