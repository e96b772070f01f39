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

// Seeds directions k0 .. k0 + N - 1 into a dual world just loaded (all tangents zero). L is the
// batch's scalar or a pack of worlds (every lane seeded alike).
template <class L, int N>
LOCKSTEP_HD void seedDirections(const Sizes& s, const BodyTopology* body, const DualWorld<Dual<L, N>>& d,
                                const Directions& dirs, int k0) {
  const int nu = s.nu;
  for (int j = 0; j < N; ++j) {
    const int k = k0 + j;
    if (k >= dirs.count()) break;
    if (k < nu) {  // a position increment of speed k's coordinates
      for (int b = 0; b < s.nb; ++b) {
        const BodyTopology topo = body[b];
        const int i = k - topo.uOffset;
        if (i < 0 || i >= topo.nu) continue;
        Strided<Dual<L, N>> q = d.w.q + topo.qOffset;
        if (mobilizerQdotIsU(topo.mobilizer)) {
          q[i].d[j] = L(1);
        } else if (i >= 3) {  // Free: translation
          q[4 + i - 3].d[j] = L(1);
        } else {  // the rotation: dq/d(dq_w[i]) = 1/2 (0, e_i) * q
          const L qw = q[0].v, qx = q[1].v, qy = q[2].v, qz = q[3].v, half = L(0.5);
          const L x[3] = {qx, qy, qz}, rows[3][3] = {{qw, qz, -qy}, {-qz, qw, qx}, {qy, -qx, qw}};
          q[0].d[j] = -half * x[i];
          for (int r = 0; r < 3; ++r) q[1 + r].d[j] = half * rows[r][i];
        }
      }
    } else if (k < 2 * nu) {
      d.w.u[k - nu].d[j] = L(1);
    } else if (k < 3 * nu) {
      d.w.tau[k - 2 * nu].d[j] = L(1);
    } else {
      d.params[dirs.param[k - 3 * nu]].d[j] = L(1);
    }
  }
}

// The tangent-space rows of q (nu of them) for tangent j of the dual q, each given to set(row,
// value): dq itself where qdot is u, and for quaternions the rotation vector 2 vec(dq conj(q)) of
// the unit q.
template <class L, int N, class Set>
LOCKSTEP_HD void positionTangents(const Sizes& s, const BodyTopology* body, Strided<const Dual<L, N>> q, int j,
                                  const Set& set) {
  for (int b = 0; b < s.nb; ++b) {
    const BodyTopology topo = body[b];
    Strided<const Dual<L, N>> qb = q + topo.qOffset;
    if (mobilizerQdotIsU(topo.mobilizer)) {
      for (int i = 0; i < topo.nu; ++i) set(topo.uOffset + i, qb[i].d[j]);
      continue;
    }
    const L w = qb[0].v, dw = qb[0].d[j];
    const Vec3<L> v = {{qb[1].v, qb[2].v, qb[3].v}}, dv = {{qb[1].d[j], qb[2].d[j], qb[3].d[j]}};
    const Vec3<L> wdv = w * dv, dwv = dw * v;
    const Vec3<L> rot = L(2) * (wdv - dwv - cross(dv, v));
    for (int i = 0; i < 3; ++i) set(topo.uOffset + i, rot[i]);
    if (topo.mobilizer == MobilizerType::Free)
      for (int i = 0; i < 3; ++i) set(topo.uOffset + 3 + i, qb[4 + i].d[j]);
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

// The passes of a linearization of the world (or pack of worlds, L a pack) that load(d) copies into
// the dual world d: seed N directions, step (settings: as the batch steps, one step) or evaluate,
// and give store(k, row, value) the column of each direction k (value: an L). Returns the StatusFlag
// bits of the first failing pass of each lane (its columns then are not all stored); the lanes that
// failed before keep failing.
template <class L, int N, int kFeatures, class Load, class Store>
LOCKSTEP_HD StatusOf<L> linearizePasses(const ModelView<Dual<L, N>>& dualModel, const DualWorld<Dual<L, N>>& d,
                                        const StepSettings<Dual<L, N>>& settings, const Directions& dirs,
                                        Linearization what, const Load& load, const Store& store) {
  using D = Dual<L, N>;
  const Sizes& s = dualModel.sizes;
  const int count = dirs.count();
  StatusOf<L> status = StatusOf<L>(kStatusOk);
  for (int k0 = 0; k0 < count; k0 += N) {
    load(d);
    seedDirections<L, N>(s, dualModel.body, d, dirs, k0);
    if (what == Linearization::Step) {
      status = firstFailure(status, stepWorld<D, kFeatures>(dualModel, d.w, d.ws, settings));
    } else {
      const ForceSummary<D> f = forwardDynamics<D, kFeatures>(dualModel, d.w, d.ws, d.w.udot,
                                                                 d.ws.ydot(s.nq + s.nu), d.w.multipliers);
      status = firstFailure(status, f.status);
    }
    if (allLanes(failed(status))) break;
    for (int j = 0; j < N && k0 + j < count; ++j) {
      const int k = k0 + j;
      if (what == Linearization::Step) {
        positionTangents<L, N>(s, dualModel.body, Strided<const D>(d.w.q), j,
                               [&](int r, const L& value) { store(k, r, value); });
        for (int r = 0; r < s.nu; ++r) store(k, s.nu + r, d.w.u[r].d[j]);
      } else {
        for (int r = 0; r < s.nu; ++r) store(k, r, d.w.udot[r].d[j]);
      }
    }
  }
  return status;
}

// The Jacobian J (rows x dirs.count(), view J[r * count + k] of this world) of one step of world w
// or of its evaluation, through the dual world d (dualModel: the model's frames as duals). A flagged
// world, or one whose step fails (singular joint inertia, non-finite state, ...), gets NaN
// everywhere; returns that world's StatusFlag bits (the world itself is not changed).
template <class T, int N, int kFeatures>
LOCKSTEP_HD int linearizeWorld(const ModelView<Dual<T, N>>& dualModel, const WorldView<T>& w,
                               const DualWorld<Dual<T, N>>& d, const StepSettings<Dual<T, N>>& settings,
                               const Directions& dirs, Linearization what, Strided<T> J) {
  const Sizes& s = dualModel.sizes;
  const int count = dirs.count(), rows = jacobianRows(s, what);
  int status = w.status[0];
  if (status == kStatusOk)
    status = linearizePasses<T, N, kFeatures>(
        dualModel, d, settings, dirs, what, [&](const DualWorld<Dual<T, N>>& x) { loadDualWorld(s, w, x); },
        [&](int k, int r, T value) { J[std::int64_t(r) * count + k] = value; });
  if (status != kStatusOk) {
    const T nan = T(0) / T(0);
    for (std::int64_t c = 0; c < std::int64_t(rows) * count; ++c) J[c] = nan;
  }
  return status;
}

}  // namespace lockstep
