// Stage 3b, constraints: SphereOnSphereContact (simbody-SphereOnSphereContact.txt) and the
// constrained forward dynamics
//     M udot + ~G lambda = f,   G udot = b
// solved per world with the articulated-body sweep as the M^-1 operator: no mass matrix is formed.
// Each constraint equation's force pattern ~G e_j is pushed through the factored sweep to get the
// columns of G M^-1 ~G; the small system K lambda = aerr0 (K = G M^-1 ~G, aerr0 the acceleration
// errors of the unconstrained udot) is solved with the pseudo-inverse of K, which also handles
// redundant (rank-deficient) equations as Simbody does; the constraint forces then go through the
// sweep once more.
// Drift control projects q and u back onto the constraint manifold after each step, in the
// kinetic-energy metric (the same K).
//
// Equations of a contact: [x, y, z] when rolling is enforced, [z] otherwise; z is the normal
// (separation) equation, x and y the no-slip equations along the contact frame axes Cx, Cy.
// Signs follow Simbody: the force applied to sphere B is -lambda, expressed in the contact frame C.
#pragma once

#include "lockstep/physics/aba.h"

namespace lockstep {

// Everything about one contact that depends on positions and velocities (Simbody's position and
// velocity caches), in Ground.
template <class T>
struct ContactKinematics {
  Rotation<T> R_GC;       // contact frame axes Cx, Cy, Cz as columns
  Vec3<T> p_GCo;          // contact point Co
  Vec3<T> p_FSf, p_BSb;   // sphere centers from their body origins
  Vec3<T> p_FCo, p_BCo;   // contact point from the body origins
  Vec3<T> p_SfSb;         // center to center
  T distance;             // |p_SfSb|
  T positionError;        // distance - (rf + rb): the signed separation
  MaskOf<T> coincident;   // the centers coincide: Cz is taken as body F's z axis
  // Velocity-dependent terms.
  Vec3<T> pd_SfSb;        // d/dt p_SfSb
  Vec3<T> vF_BCo;         // velocity of B's material point at Co, measured in F
  Vec3<T> wXwX_p_FSf, wXwX_p_BSb, wXpd_FCo, wXpd_BCo;
  Vec3<T> Czd, Cxd, Cyd;  // d/dt of the contact axes in Ground
  T velocityError[3];     // x, y: slip along Cx, Cy; z: d/dt of the separation
};

template <class T>
LOCKSTEP_HD_INLINE T tinyLength() {
  return byPrecision<T>(2.2e-9, 2.5e-20);  // eps^(5/4)
}

// R_GA: orientation of the contact's ancestor frame A, whose axes fix the tangent directions.
template <class T>
LOCKSTEP_HD ContactKinematics<T> contactKinematics(const Transform<T>& X_GF, const SpatialVec<T>& V_GF,
                                                   const Transform<T>& X_GB, const SpatialVec<T>& V_GB,
                                                   const Rotation<T>& R_GA, const Vec3<T>& centerOnF,
                                                   const Vec3<T>& centerOnB, T rf, T rb) {
  ContactKinematics<T> k;
  k.p_FSf = X_GF.R * centerOnF;
  k.p_BSb = X_GB.R * centerOnB;
  const Vec3<T> p_GSf = X_GF.p + k.p_FSf, p_GSb = X_GB.p + k.p_BSb;
  k.p_SfSb = p_GSb - p_GSf;
  k.distance = norm(k.p_SfSb);
  k.positionError = k.distance - (rf + rb);
  k.coincident = k.distance < tinyLength<T>();
  const Vec3<T> Cz = selectVec3(k.coincident, X_GF.R.R.col(2), k.p_SfSb / k.distance);
  // Cx = unit(Cz x e_m), with e_m the axis of the ancestor frame A along which Cz has its smallest
  // component (the lowest index on ties); Cy = Cz x Cx. As in Simbody, A is the nearest common
  // ancestor of F and B in the tree, Ground when either is Ground.
  const Vec3<T> Cz_A = R_GA.invTimes(Cz);
  const T a0 = absT(Cz_A[0]), a1 = absT(Cz_A[1]), a2 = absT(Cz_A[2]);
  const MaskOf<T> pick1 = a1 < a0;
  const MaskOf<T> pick2 = a2 < selectT(pick1, a1, a0);
  const Vec3<T> e_m = selectVec3(pick2, R_GA.R.col(2), selectVec3(pick1, R_GA.R.col(1), R_GA.R.col(0)));
  Vec3<T> Cx = cross(Cz, e_m);
  Cx = Cx / norm(Cx);
  const Vec3<T> Cy = cross(Cz, Cx);
  for (int i = 0; i < 3; ++i) {
    k.R_GC.R.m[i][0] = Cx[i];
    k.R_GC.R.m[i][1] = Cy[i];
    k.R_GC.R.m[i][2] = Cz[i];
  }
  const T kf = rf / (rf + rb);
  k.p_GCo = p_GSf + kf * k.p_SfSb;
  k.p_FCo = k.p_GCo - X_GF.p;
  k.p_BCo = k.p_GCo - X_GB.p;

  const Vec3<T>& w_F = V_GF.ang;
  const Vec3<T>& w_B = V_GB.ang;
  const Vec3<T> wXp_FSf = cross(w_F, k.p_FSf), wXp_BSb = cross(w_B, k.p_BSb);
  k.pd_SfSb = (V_GB.lin + wXp_BSb) - (V_GF.lin + wXp_FSf);
  k.wXwX_p_FSf = cross(w_F, wXp_FSf);
  k.wXwX_p_BSb = cross(w_B, wXp_BSb);
  k.vF_BCo = (V_GB.lin + cross(w_B, k.p_BCo)) - (V_GF.lin + cross(w_F, k.p_FCo));
  // Velocities of the contact point (not a material point of either body) from each origin.
  const Vec3<T> pd_FCo = wXp_FSf + kf * k.pd_SfSb;
  const Vec3<T> pd_BCo = pd_FCo - (V_GB.lin - V_GF.lin);
  k.wXpd_FCo = cross(w_F, pd_FCo);
  k.wXpd_BCo = cross(w_B, pd_BCo);
  k.velocityError[2] = dot(k.pd_SfSb, Cz);
  k.Czd = selectVec3(k.coincident, cross(w_F, Cz), (k.pd_SfSb - k.velocityError[2] * Cz) / k.distance);
  // Cx, Cy turn with Cz but not about it (relative to F): d/dt_F Cx = -CzdF x Cy, d/dt_F Cy = CzdF x Cx.
  const Vec3<T> CzdF = k.Czd - cross(w_F, Cz);
  k.Cxd = cross(Cy, CzdF) + cross(w_F, Cx);
  k.Cyd = cross(CzdF, Cx) + cross(w_F, Cy);
  k.velocityError[0] = dot(k.vF_BCo, Cx);
  k.velocityError[1] = dot(k.vF_BCo, Cy);
  return k;
}

template <class T>
LOCKSTEP_HD_INLINE ContactKinematics<T> contactKinematicsOfWorld(const ModelView<T>& model, const WorldParams<T>& params,
                                                                  const Workspace<T>& ws, int i) {
  const ElementTopology e = model.contact[i];
  const SphereParams<T> p = sphereParamsOf(params, i);
  return contactKinematics(bodyPose(ws, e.bodyA), bodyVelocity(ws, e.bodyA), bodyPose(ws, e.bodyB),
                           bodyVelocity(ws, e.bodyB), bodyPose(ws, e.ancestor).R, p.centerOnF, p.centerOnB, p.radiusOnF,
                           p.radiusOnB);
}

// The signed separation of contact i alone (positions only): what observations need.
template <class T>
LOCKSTEP_HD_INLINE T contactSeparationOfWorld(const ModelView<T>& model, const WorldParams<T>& params,
                                              const Workspace<T>& ws, int i) {
  const ElementTopology e = model.contact[i];
  const SphereParams<T> p = sphereParamsOf(params, i);
  const Vec3<T> Sf = bodyPose(ws, e.bodyA) * p.centerOnF, Sb = bodyPose(ws, e.bodyB) * p.centerOnB;
  return norm(Sb - Sf) - (p.radiusOnF + p.radiusOnB);
}

LOCKSTEP_HD_INLINE int contactEquationCount(const ElementTopology& e) { return (e.flags & kContactRolling) ? 3 : 1; }
// Axis (0 x, 1 y, 2 z) of equation r of a contact.
LOCKSTEP_HD_INLINE int contactEquationAxis(const ElementTopology& e, int r) {
  return (e.flags & kContactRolling) ? r : 2;
}

// The part of an equation's acceleration error that is linear in the body accelerations A_F, A_B.
template <class T>
LOCKSTEP_HD_INLINE T contactAccelerationLinear(const ContactKinematics<T>& k, int axis, const SpatialVec<T>& A_F,
                                               const SpatialVec<T>& A_B) {
  const Vec3<T> dir = k.R_GC.R.col(axis);
  if (axis == 2)
    return dot(A_B.lin + cross(A_B.ang, k.p_BSb) - A_F.lin - cross(A_F.ang, k.p_FSf), dir);
  return dot(A_B.lin + cross(A_B.ang, k.p_BCo) - A_F.lin - cross(A_F.ang, k.p_FCo), dir);
}
// The velocity-dependent remainder of an equation's acceleration error.
template <class T>
LOCKSTEP_HD_INLINE T contactAccelerationBias(const ContactKinematics<T>& k, int axis) {
  const Vec3<T> dir = k.R_GC.R.col(axis);
  if (axis == 2) return dot(k.wXwX_p_BSb - k.wXwX_p_FSf, dir) + dot(k.pd_SfSb, k.Czd);
  return dot(k.wXpd_BCo - k.wXpd_FCo, dir) + dot(k.vF_BCo, axis == 0 ? k.Cxd : k.Cyd);
}

// Adds the constraint force of multiplier lambda on one equation to the body-force array F:
// -lambda * dir on B and +lambda * dir on F, at the sphere centers (normal) or at the material
// points at Co (tangential).
template <class T>
LOCKSTEP_HD_INLINE void addContactForce(const ElementTopology& e, const ContactKinematics<T>& k, int axis, T lambda,
                                        Strided<T> F) {
  const Vec3<T> f = lambda * k.R_GC.R.col(axis);
  const Vec3<T>& rB = axis == 2 ? k.p_BSb : k.p_BCo;
  const Vec3<T>& rF = axis == 2 ? k.p_FSf : k.p_FCo;
  if (e.bodyB >= 0) addSpatialVec(bodySpatialVec(F, e.bodyB), SpatialVec<T>{-cross(rB, f), -f});
  if (e.bodyA >= 0) addSpatialVec(bodySpatialVec(F, e.bodyA), SpatialVec<T>{cross(rF, f), f});
}

// x = K^+ rhs, the minimum-norm least-squares solution, for a symmetric positive semidefinite
// n x n K (row-major; overwritten by its eigenvalues on the diagonal), by cyclic Jacobi
// eigendecomposition K = V diag(d) ~V into the n x n V. Eigenvalues below relTol times the largest
// (or than relTol times scale, the magnitude of K's terms before cancellation) are taken as zero:
// redundant equations share their multiplier (minimum norm), and an
// inconsistent redundant set is satisfied in the least-squares sense, as Simbody does. About 6 n^3
// flops per sweep, a handful of sweeps; n = 1 is a division. On a pack of worlds each lane stops
// sweeping when its own K has converged.
template <class T>
LOCKSTEP_HD void solveSymmetricPseudoInverse(Strided<T> K, int n, Strided<const T> rhs, Strided<T> x, Strided<T> V,
                                             T relTol, T scale) {
  if (n == 1) {
    const MaskOf<T> full = (K[0] > relTol * scale) & isFiniteT(K[0]);
    x[0] = selectT(full, rhs[0] / K[0], T(0));
    return;
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) V[i * n + j] = T(i == j ? 1 : 0);
  T frobenius2 = T(0);
  for (int i = 0; i < n * n; ++i) frobenius2 += K[i] * K[i];
  const T eps = byPrecision<T>(1e-14, 1e-30);
  MaskOf<T> sweeping = MaskOf<T>(true);
  for (int sweep = 0; sweep < 60; ++sweep) {
    T off = T(0);
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) off += K[p * n + q] * K[p * n + q];
    sweeping = sweeping & !(off <= eps * frobenius2);
    if (!anyLane(sweeping)) break;
    for (int p = 0; p < n; ++p) {
      for (int q = p + 1; q < n; ++q) {
        const T kpq = K[p * n + q];
        const MaskOf<T> rotate = sweeping & (kpq != T(0));  // elsewhere the identity rotation
        if (!anyLane(rotate)) continue;
        const T theta = (K[q * n + q] - K[p * n + p]) / (T(2) * kpq);
        const T t = selectT(theta >= T(0), T(1), T(-1)) / (absT(theta) + sqrtT(theta * theta + T(1)));
        const T c0 = T(1) / sqrtT(t * t + T(1));
        const T c = selectT(rotate, c0, T(1)), sn = selectT(rotate, t * c0, T(0));
        for (int k = 0; k < n; ++k) {  // K <- K J (columns p, q)
          const T kp = K[k * n + p], kq = K[k * n + q];
          K[k * n + p] = selectT(rotate, c * kp - sn * kq, kp);
          K[k * n + q] = selectT(rotate, sn * kp + c * kq, kq);
        }
        for (int k = 0; k < n; ++k) {  // K <- ~J K (rows p, q)
          const T kp = K[p * n + k], kq = K[q * n + k];
          K[p * n + k] = selectT(rotate, c * kp - sn * kq, kp);
          K[q * n + k] = selectT(rotate, sn * kp + c * kq, kq);
        }
        for (int k = 0; k < n; ++k) {  // V <- V J
          const T vp = V[k * n + p], vq = V[k * n + q];
          V[k * n + p] = selectT(rotate, c * vp - sn * vq, vp);
          V[k * n + q] = selectT(rotate, sn * vp + c * vq, vq);
        }
      }
    }
  }
  T dmax = scale;
  for (int i = 0; i < n; ++i) dmax = selectT(K[i * n + i] > dmax, K[i * n + i], dmax);
  for (int i = 0; i < n; ++i) x[i] = T(0);
  for (int e = 0; e < n; ++e) {
    const T d = K[e * n + e];
    const MaskOf<T> kept = d > relTol * dmax;
    if (!anyLane(kept)) continue;
    T proj = T(0);  // component of rhs along eigenvector e
    for (int i = 0; i < n; ++i) proj += V[i * n + e] * rhs[i];
    proj = selectT(kept, proj / d, T(0));
    for (int i = 0; i < n; ++i) x[i] = selectT(kept, x[i] + proj * V[i * n + e], x[i]);
  }
}

// Which equations take part in a solve: all enabled ones, or only the normal (holonomic) ones.
enum class EquationSet { All, Holonomic };

template <class T>
LOCKSTEP_HD_INLINE MaskOf<T> equationActive(const WorldParams<T>& params, int contact, int axis, EquationSet set) {
  return (params.contactEnabled[contact] != T(0)) & MaskOf<T>(set == EquationSet::All || axis == 2);
}

// Builds K = G M^-1 ~G over the active equations (inactive ones get an identity row and column)
// into the workspace, from one response pass per active equation. Needs the kinematics and the
// factorization of the current configuration. Returns the scale of K before cancellation: the
// largest acceleration of a constrained point under a unit constraint force. An equation between
// two bodies that cannot move relative to each other has K entries at roundoff of that scale.
template <class T>
LOCKSTEP_HD T buildConstraintMatrix(const ModelView<T>& model, const WorldParams<T>& params, const Workspace<T>& ws,
                                       EquationSet set) {
  const Sizes& s = model.sizes;
  const int nc = s.nc;
  const Strided<T> K = ws.K(), Fc = ws.Fc(), dudot = ws.dudot(), dA = ws.dA();
  T scale = T(0);
  int col = 0;
  for (int ci = 0; ci < s.nContacts; ++ci) {
    const ElementTopology e = model.contact[ci];
    const ContactKinematics<T> kc = contactKinematicsOfWorld(model, params, ws, ci);
    for (int r = 0; r < contactEquationCount(e); ++r, ++col) {
      const int axis = contactEquationAxis(e, r);
      const MaskOf<T> active = equationActive(params, ci, axis, set);
      if (!allLanes(active)) {  // an inactive equation gets an identity row and column
        // Lane by lane: the lanes where it is active keep their row (its entries of the earlier
        // columns are computed already) and get their column below.
        for (int i = 0; i < nc; ++i) {
          const T identity = T(i == col ? 1 : 0);
          K[i * nc + col] = selectT(active, K[i * nc + col], identity);
          K[col * nc + i] = selectT(active, K[col * nc + i], identity);
        }
        if (!anyLane(active)) continue;
      }
      // Response to the force pattern of a unit multiplier: dudot = M^-1 (-~G e_col). The zeroed
      // dudot doubles as the (zero) mobility-force input, read before it is written.
      for (int i = 0; i < 6 * s.nb; ++i) Fc[i] = T(0);
      for (int i = 0; i < s.nu; ++i) dudot[i] = T(0);
      addContactForce(e, kc, axis, T(1), Fc);
      solveArticulated<T>(model, ws, Fc, dudot, false, dudot, dA);
      const SpatialVec<T> AF = bodyAcceleration<T>(dA, e.bodyA), AB = bodyAcceleration<T>(dA, e.bodyB);
      const T pointScale = norm(AF.lin) + norm(AF.ang) * norm(kc.p_FCo) + norm(AB.lin) + norm(AB.ang) * norm(kc.p_BCo);
      scale = selectT(active & (pointScale > scale), pointScale, scale);
      // Column col of K = -G dA.
      int row = 0;
      for (int cj = 0; cj < s.nContacts; ++cj) {
        const ElementTopology f = model.contact[cj];
        const ContactKinematics<T> kr = cj == ci ? kc : contactKinematicsOfWorld(model, params, ws, cj);
        for (int rr = 0; rr < contactEquationCount(f); ++rr, ++row) {
          const int ax = contactEquationAxis(f, rr);
          const T entry = selectT(equationActive(params, cj, ax, set),
                                  -contactAccelerationLinear(kr, ax, bodyAcceleration<T>(dA, f.bodyA),
                                                             bodyAcceleration<T>(dA, f.bodyB)),
                                  T(row == col ? 1 : 0));
          K[row * nc + col] = selectT(active, entry, K[row * nc + col]);
        }
      }
    }
  }
  return scale;
}

template <class T>
LOCKSTEP_HD_INLINE T constraintRankTolerance() {
  return byPrecision<T>(1e-6, 1e-12);
}

// The response dudot = M^-1 (-~G lambda) and dA to multipliers lambda on all equations.
template <class T>
LOCKSTEP_HD void applyMultipliers(const ModelView<T>& model, const WorldParams<T>& params, const Workspace<T>& ws,
                                  Strided<const T> lambda) {
  const Sizes& s = model.sizes;
  const Strided<T> Fc = ws.Fc(), dudot = ws.dudot();
  for (int i = 0; i < 6 * s.nb; ++i) Fc[i] = T(0);
  for (int i = 0; i < s.nu; ++i) dudot[i] = T(0);
  int row = 0;
  for (int ci = 0; ci < s.nContacts; ++ci) {
    const ElementTopology e = model.contact[ci];
    const ContactKinematics<T> kc = contactKinematicsOfWorld(model, params, ws, ci);
    for (int r = 0; r < contactEquationCount(e); ++r, ++row)
      addContactForce(e, kc, contactEquationAxis(e, r), lambda[row], Fc);
  }
  solveArticulated<T>(model, ws, Fc, dudot, false, dudot, ws.dA());
}

// Constrained accelerations: after computeArticulatedAccelerations wrote the unconstrained udot
// and A_GB, solves for the multipliers (into lambda, nc of them) and corrects udot and A_GB.
template <class T>
LOCKSTEP_HD StatusOf<T> solveConstraints(const ModelView<T>& model, const WorldParams<T>& params, const Workspace<T>& ws,
                                 Strided<T> udot, Strided<T> lambda) {
  const Sizes& s = model.sizes;
  if (s.nc == 0) return StatusOf<T>(kStatusOk);
  const Strided<T> rhs = ws.rhs(), A_GB = ws.A_GB();
  // Acceleration errors of the unconstrained motion.
  int row = 0;
  MaskOf<T> any = MaskOf<T>(false);
  for (int ci = 0; ci < s.nContacts; ++ci) {
    const ElementTopology e = model.contact[ci];
    const ContactKinematics<T> kc = contactKinematicsOfWorld(model, params, ws, ci);
    const MaskOf<T> enabled = params.contactEnabled[ci] != T(0);
    any = any | enabled;
    for (int r = 0; r < contactEquationCount(e); ++r, ++row) {
      const int axis = contactEquationAxis(e, r);
      rhs[row] = selectT(enabled,
                         contactAccelerationLinear(kc, axis, bodyAcceleration<T>(A_GB, e.bodyA),
                                                   bodyAcceleration<T>(A_GB, e.bodyB)) +
                             contactAccelerationBias(kc, axis),
                         T(0));
    }
  }
  // (Where no contact is enabled, K is the identity and rhs 0: the multipliers come out 0.)
  if (!anyLane(any)) {
    for (int i = 0; i < s.nc; ++i) lambda[i] = T(0);
    return StatusOf<T>(kStatusOk);
  }
  const T scale = buildConstraintMatrix(model, params, ws, EquationSet::All);
  solveSymmetricPseudoInverse<T>(ws.K(), s.nc, rhs, lambda, ws.V(), constraintRankTolerance<T>(), scale);
  MaskOf<T> finite = MaskOf<T>(true);
  for (int i = 0; i < s.nc; ++i) finite = finite & isFiniteT(lambda[i]);
  const StatusOf<T> status = flagIf(!finite, kStatusConstraintFailed);
  if (allLanes(failed(status))) return status;
  applyMultipliers<T>(model, params, ws, lambda);
  const Strided<T> dudot = ws.dudot(), dA = ws.dA();
  for (int i = 0; i < s.nu; ++i) udot[i] += dudot[i];
  for (int i = 0; i < 6 * s.nb; ++i) A_GB[i] += dA[i];
  return status;
}

// Largest |error| over the active equations: positions (EquationSet::Holonomic) or velocities
// (EquationSet::All), after computeKinematics. Fills rhs with the errors.
template <class T>
LOCKSTEP_HD T constraintErrors(const ModelView<T>& model, const WorldParams<T>& params, const Workspace<T>& ws,
                               EquationSet set, Strided<T> rhs) {
  T worst = T(0);
  int row = 0;
  for (int ci = 0; ci < model.sizes.nContacts; ++ci) {
    const ElementTopology e = model.contact[ci];
    const ContactKinematics<T> kc = contactKinematicsOfWorld(model, params, ws, ci);
    for (int r = 0; r < contactEquationCount(e); ++r, ++row) {
      const int axis = contactEquationAxis(e, r);
      const T err = selectT(equationActive(params, ci, axis, set),
                            set == EquationSet::Holonomic ? kc.positionError : kc.velocityError[axis], T(0));
      rhs[row] = err;
      worst = selectT(absT(err) > worst, absT(err), worst);
    }
  }
  return worst;
}

// Projects q onto the position constraints, then u onto the velocity constraints, in the
// kinetic-energy metric: Gauss-Newton steps q += N(q) M^-1 ~G nu with K nu = perr, each limited to
// 0.5 per coordinate and shortened by halving until the largest |perr| decreases (so that assembly
// from far away converges), until
// every |perr| <= tol; then u += M^-1 ~G nu with K nu = verr (exact in one step: verr is linear in
// u). Returns StatusFlag bits (kStatusConstraintFailed when q does not converge in maxIterations).
// On a pack of worlds each lane iterates, and shortens its steps, on its own; only the lanes
// given are projected (the others, failed earlier, are left as they are).
template <class T>
LOCKSTEP_HD StatusOf<T> projectConstraints(const ModelView<T>& model, const WorldView<T>& w, const Workspace<T>& ws,
                                           T tol, int maxIterations, MaskOf<T> lanes = MaskOf<T>(true)) {
  const Sizes& s = model.sizes;
  StatusOf<T> status = StatusOf<T>(kStatusOk);
  if (s.nc == 0) return status;
  const Strided<T> rhs = ws.rhs(), nu = ws.lambda(), dudot = ws.dudot(), qSave = ws.qSave();
  computeKinematics<T>(model, w.params, w.q, w.u, ws);
  T err = constraintErrors(model, w.params, ws, EquationSet::Holonomic, rhs);
  MaskOf<T> going = lanes & (err > tol);  // lanes still projecting q (of those asked for)
  for (int iter = 0; anyLane(going); ++iter) {
    if (iter == maxIterations) {
      status |= flagIf(going, kStatusConstraintFailed);
      break;
    }
    status = firstFailure(status, statusIf(going, factorArticulatedInertias(model, w.params, ws)));
    going = going & !failed(status);
    if (!anyLane(going)) break;
    const T scale = buildConstraintMatrix(model, w.params, ws, EquationSet::Holonomic);
    solveSymmetricPseudoInverse<T>(ws.K(), s.nc, rhs, nu, ws.V(), constraintRankTolerance<T>(), scale);
    applyMultipliers<T>(model, w.params, ws, nu);  // G dudot = -K nu = -perr
    for (int i = 0; i < s.nq; ++i) qSave[i] = w.q[i];
    // Far from the manifold the linearization is poor: no coordinate moves more than 0.5 per try.
    T biggest = T(0);
    for (int i = 0; i < s.nu; ++i) biggest = selectT(absT(dudot[i]) > biggest, absT(dudot[i]), biggest);
    T alpha = selectT(biggest > T(0.5), T(0.5) / biggest, T(1));
    MaskOf<T> searching = going;  // lanes still shortening this step
    for (int halvings = 0;; ++halvings) {
      for (int b = 0; b < s.nb; ++b) {
        const BodyTopology topo = model.body[b];
        T dq[kMaxMobilizerQ];
        T* dqp = dq;
        mobilizerQdot<T>(topo.mobilizer, Strided<const T>(qSave + topo.qOffset), Strided<const T>(dudot + topo.uOffset),
                         dqp);
        for (int k = 0; k < topo.nq; ++k) dq[k] = qSave[topo.qOffset + k] + alpha * dq[k];
        mobilizerNormalizeQ<T>(topo.mobilizer, dqp);
        for (int k = 0; k < topo.nq; ++k) w.q[topo.qOffset + k] = selectT(searching, dq[k], w.q[topo.qOffset + k]);
      }
      computeKinematics<T>(model, w.params, w.q, w.u, ws);
      const T trial = constraintErrors(model, w.params, ws, EquationSet::Holonomic, rhs);
      const MaskOf<T> accept = searching & ((trial < err) | MaskOf<T>(halvings == 30));
      err = selectT(accept, trial, err);
      searching = searching & !accept;
      if (!anyLane(searching)) break;
      alpha = selectT(searching, alpha * T(0.5), alpha);
    }
    going = going & (err > tol);
  }
  if (allLanes(failed(status))) return status;
  // Velocities, at the projected q (the workspace's kinematics are of the current q of every lane).
  const MaskOf<T> project =
      lanes & (constraintErrors(model, w.params, ws, EquationSet::All, rhs) > tol) & !failed(status);
  if (anyLane(project)) {
    status = firstFailure(status, statusIf(project, factorArticulatedInertias(model, w.params, ws)));
    const MaskOf<T> ok = project & !failed(status);
    if (!anyLane(ok)) return status;
    const T scale = buildConstraintMatrix(model, w.params, ws, EquationSet::All);
    solveSymmetricPseudoInverse<T>(ws.K(), s.nc, rhs, nu, ws.V(), constraintRankTolerance<T>(), scale);
    applyMultipliers<T>(model, w.params, ws, nu);
    for (int i = 0; i < s.nu; ++i) w.u[i] = selectT(ok, w.u[i] + dudot[i], w.u[i]);
  }
  return status;
}

}  // namespace lockstep
