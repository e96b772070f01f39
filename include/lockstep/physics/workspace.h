// Lockstep accessors: the one place that knows how many scalars an element of a per-world array
// takes, so that no stage spells "position of body b" as 12*b + 9.
//
// Workspace<T>   one world's scratch for the stages of one evaluation, laid out by WorkspaceLayout.
//                ws.X_GB(b) is a Strided view of body b's 12 scalars, ws.H(j) of the H column of
//                generalized speed j, ws.Dinv() of the whole D^-1 array; bodyPose(ws, b) etc. load
//                the typed value.
// Per-world fields and parameters: name##At(view, i) is the Strided view of element i of a field of
//                the registry (views.h), e.g. bodyPoseAt(w, b), massPropsAt(params, b); the width of
//                an element is fieldWidth::name, counted from the registry's component names.
//                bushingFrameF(params, i) etc. load the typed parameters of an element.
#pragma once

#include <cstdint>

#include "lockstep/physics/views.h"

namespace lockstep {

// Scalars per element of each registry field.
namespace fieldWidth {
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) constexpr int name = componentWidth(parts);
LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
}  // namespace fieldWidth

// THE WORKSPACE LIST. Scratch of one evaluation, per world, in scalars: one line per array,
//   X(name, scalars per element, element count (an expression in Sizes s), description)
// The offsets (WorkspaceLayout) and the accessors (Workspace) are generated from it.
#define LOCKSTEP_WORKSPACE_FIELDS(X)                                                                  \
  X(X_GB, 12, s.nb, "body poses in Ground (R row-major, then p)")                                     \
  X(V_GB, 6, s.nb, "body spatial velocities at Bo, in G")                                             \
  X(I_G, 10, s.nb, "body inertias about Bo, in G: m, p_BoC (3), J (6)")                               \
  X(c, 6, s.nb, "velocity-dependent (Coriolis) accelerations")                                        \
  X(IA, 21, s.nb, "articulated inertias about Bo, in G")                                              \
  X(pA, 6, s.nb, "articulated bias forces at Bo, in G")                                               \
  X(A_GB, 6, s.nb, "body spatial accelerations")                                                      \
  X(Fb, 6, s.nb, "total applied body force at Bo, in G (forces stage)")                               \
  X(H, 6, s.nu, "mobilizer H columns at Bo, in G, one per generalized speed")                         \
  X(U, 6, s.nu, "IA * H")                                                                             \
  X(ub, 1, s.nu, "joint-space bias force (Featherstone's u)")                                         \
  X(Dinv, 1, s.nd, "inverse joint inertias, nu_b x nu_b each")                                        \
  X(tauTotal, 1, s.nu, "total mobility force (forces stage)")                                         \
  X(Fc, 6, s.nb, "constraint force pattern, at Bo, in G")                                             \
  X(dA, 6, s.nb, "body accelerations of a constraint-force response")                                 \
  X(dudot, 1, s.nu, "udot of a constraint-force response")                                            \
  X(K, 1, std::int64_t(s.nc) * s.nc, "G M^-1 ~G, then its eigenvalues (nc x nc)")                     \
  X(rhs, 1, s.nc, "constraint errors being solved for")                                               \
  X(lambda, 1, s.nc, "multipliers")                                                                   \
  X(V, 1, std::int64_t(s.nc) * s.nc, "eigenvectors of K (nc x nc)")                                   \
  X(qSave, 1, s.nc > 0 ? s.nq : 0, "q before a projection step (line search)")                        \
  X(y0, 1, s.nq + s.nu + s.nz, "state y = [q; u; z] at the start of a step")                          \
  X(acc, 1, s.nq + s.nu + s.nz, "weighted sum of stage derivatives (RK4)")                            \
  X(ydot, 1, s.nq + s.nu + s.nz, "derivative of the state")                                          \
  X(softRows, 4, s.nSoftRows, "soft rows: pos - margin (a cone's: scale), aref, D, 1 where it exists")  \
  X(softCompliance, 4, s.softCompliant ? s.nSoftRows : 0,                                              \
    "the compliant law's blocks: A, c, delta, lagged, then mu, eps, F0 (softCompliantForceInto)")         \
  X(softBlocks, 6, s.nSoftRows,                                                                        \
    "the solve's blocks with a row in use: first row, rows (< 0: compliant), the speeds of its columns")   \
  X(softJ, 1, std::int64_t(s.nSoftRows) * s.nu, "their Jacobians, row after row (nSoftRows x nu)")     \
  X(softJar, 1, s.nSoftRows, "J qacc - aref of each row")                                              \
  X(softJd, 1, s.nSoftRows, "J times the Newton step")                                                 \
  X(softM, 1, s.mujocoStepping ? std::int64_t(s.nu) * s.nu : 0, "the mass matrix M (crba.h)")           \
  X(softH, 1, s.mujocoStepping ? std::int64_t(s.nu) * s.nu : 0, "the Newton Hessian, then its Cholesky factor") \
  X(softIc, 10, s.mujocoStepping ? s.nb : 0, "composite inertias (crba.h)")                             \
  X(softVec, 1, s.mujocoStepping ? 7 * s.nu : 0,                                                        \
    "qacc0, qacc, gradient, step, M step, M (qacc - qacc0), a block's columns (the Newton Hessian)")      \
  X(rkTheta, 3, s.mujocoStepping ? s.nb : 0, "a body's stage rotation from q0 (MuJoCo's RK4 on rotations)")     \
  X(mujocoContact, 6, hasSoftContacts(s) ? s.nMujocoBodies : 0,                                        \
    "each MuJoCo body's force from the last soft solve's contacts: moment about Ground's origin, force")  \
  X(stepSoftContact, fieldWidth::softContact, s.nSoftPoints,                                              \
    "a step's softContact (advanceWorld): the field keeps what the last evaluate() left")                 \
  X(stepSoftLimitForce, 1, s.nSoftLimits, "a step's softLimitForce")                                       \
  X(stepSoftSolver, fieldWidth::softSolver, s.nSoftRows > 0 ? 1 : 0, "a step's softSolver")

// Offsets of the workspace arrays, in scalars from the start of a world's scratch. Computed once
// per model.
struct WorkspaceLayout {
#define LOCKSTEP_X(name, width, count, doc) std::int64_t name;
  LOCKSTEP_WORKSPACE_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  std::int64_t total;  // scalars per world

  static WorkspaceLayout of(const Sizes& s) {
    WorkspaceLayout L{};
    std::int64_t o = 0;
#define LOCKSTEP_X(name, width, count, doc) \
  L.name = o;                               \
  o += std::int64_t(width) * (count);
    LOCKSTEP_WORKSPACE_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
    L.total = o;
    return L;
  }
};

template <class T>
struct Workspace {
  WorkspaceLayout L;
  Strided<T> base;  // component 0 of this world's scratch
  LOCKSTEP_HD_INLINE Strided<T> at(std::int64_t offset) const { return base + offset; }
  // Element i of an array (its first scalar for arrays of scalars): ws.X_GB(b), ws.H(j), ws.ydot().
#define LOCKSTEP_X(name, width, count, doc) \
  LOCKSTEP_HD_INLINE Strided<T> name(std::int64_t i = 0) const { return base + (L.name + std::int64_t(width) * i); }
  LOCKSTEP_WORKSPACE_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
};

// ---- elements of the per-world fields and parameters, from the registry ------------------------

// name##At(view, i): element i of field `name` of a WorldView or WorldParams.
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc)                                          \
  template <class View>                                                                                \
  LOCKSTEP_HD_INLINE auto name##At(const View& v, std::int64_t i)->decltype(v.name + std::int64_t(0)) { \
    return v.name + std::int64_t(fieldWidth::name) * i;                                                \
  }
LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X

// ---- typed values of the workspace ---------------------------------------------------------------

// Pose, origin and velocity of body b (Ground for b < 0), after computeKinematics.
template <class T>
LOCKSTEP_HD_INLINE Transform<T> bodyPose(const Workspace<T>& ws, int b) {
  return b < 0 ? Transform<T>::identity() : loadTransform<T>(ws.X_GB(b));
}
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> bodyOrigin(const Workspace<T>& ws, int b) {
  return loadTransformOrigin<T>(ws.X_GB(b));
}
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> bodyVelocity(const Workspace<T>& ws, int b) {
  return b < 0 ? SpatialVec<T>::zero() : loadSpatialVec<T>(ws.V_GB(b));
}
// Body b's rigid-body inertia about Bo in G, as computeKinematics stored it.
template <class T>
LOCKSTEP_HD_INLINE SpatialInertia<T> bodyInertiaInG(const Workspace<T>& ws, int b) {
  const Strided<const T> inertia = ws.I_G(b);
  return {inertia[0], loadVec3<T>(inertia + 1), loadSymMat33<T>(inertia + 4)};
}
template <class T>
LOCKSTEP_HD_INLINE void storeBodyInertiaInG(const Workspace<T>& ws, int b, const SpatialInertia<T>& I) {
  const Strided<T> inertia = ws.I_G(b);
  inertia[0] = I.m;
  storeVec3(inertia + 1, I.c);
  storeSymMat33(inertia + 4, I.J);
}
// l = p_PB: from the parent's origin to body b's, in G.
template <class T>
LOCKSTEP_HD_INLINE Vec3<T> parentToChild(const Workspace<T>& ws, int b, int parent) {
  return bodyOrigin(ws, b) - bodyOrigin(ws, parent);
}
// Element b of an array of spatial vectors laid out 6 per body (A_GB, dA, Fc, ...); zero for Ground.
template <class T>
LOCKSTEP_HD_INLINE SpatialVec<T> bodyAcceleration(Strided<const T> A_GB, int b) {
  return b < 0 ? SpatialVec<T>::zero() : loadSpatialVec<T>(A_GB + 6 * b);
}
template <class T>
LOCKSTEP_HD_INLINE Strided<T> bodySpatialVec(Strided<T> perBody, int b) {
  return perBody + 6 * b;
}

// ---- typed values of the per-world parameters ----------------------------------------------------

// Mass properties of body b: mass, center of mass p_BC, central inertia in B.
template <class T>
LOCKSTEP_HD_INLINE SpatialInertia<T> centralInertiaOf(const WorldParams<T>& params, int b) {
  const Strided<const T> mp = massPropsAt(params, b);
  return SpatialInertia<T>::fromCentral(mp[0], Vec3<T>{{mp[1], mp[2], mp[3]}}, loadSymMat33<T>(mp + 4));
}
// Bushing i's frames: F on body 1 (X_B1F), M on body 2 (X_B2M).
template <class T>
LOCKSTEP_HD_INLINE Transform<T> bushingFrameF(const WorldParams<T>& params, int i) {
  return loadTransform<T>(bushingFramesAt(params, i));
}
template <class T>
LOCKSTEP_HD_INLINE Transform<T> bushingFrameM(const WorldParams<T>& params, int i) {
  return loadTransform<T>(bushingFramesAt(params, i) + 12);
}
// Spring-damper i: free length, stiffness, damping; end points p_AP on body A and p_BQ on body B.
template <class T>
struct SpringParams {
  T freeLength, stiffness, damping;
  Vec3<T> p_AP, p_BQ;
};
template <class T>
LOCKSTEP_HD_INLINE SpringParams<T> springParamsOf(const WorldParams<T>& params, int i) {
  const Strided<const T> sp = springParamsAt(params, i), pts = springPointsAt(params, i);
  return {sp[0], sp[1], sp[2], loadVec3<T>(pts), loadVec3<T>(pts + 3)};
}
// Sphere contact i: centers on body F and on body B, radii on F and on B.
template <class T>
struct SphereParams {
  Vec3<T> centerOnF, centerOnB;
  T radiusOnF, radiusOnB;
};
template <class T>
LOCKSTEP_HD_INLINE SphereParams<T> sphereParamsOf(const WorldParams<T>& params, int i) {
  const Strided<const T> c = sphereCentersAt(params, i), r = sphereRadiiAt(params, i);
  return {loadVec3<T>(c), loadVec3<T>(c + 3), r[0], r[1]};
}

// World w's workspace in the GPU's layout: every world's scratch strided across the batch
// (component c of world w at scratch[c * nWorlds + w]), so that consecutive threads touch
// consecutive addresses. The kernels use it; a CPU test runs the same indexing over host memory.
template <class T>
LOCKSTEP_HD_INLINE Workspace<T> deviceWorkspace(const WorkspaceLayout& layout, T* scratch, std::int64_t nWorlds,
                                               std::int64_t w) {
  return {layout, {scratch + w, nWorlds}};
}

}  // namespace lockstep
