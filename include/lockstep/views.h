// Lockstep views: the plain structs that kernels and the CPU backend receive.
//
// ModelView<T>   the model's topology and constant frames, converted to T (shared by all worlds).
// BatchView<T>   base pointers of every per-world field and parameter of a batch.
// WorldView<T>   one world's Strided views into a BatchView (what the per-world physics sees).
// Workspace<T>   one world's scratch for the stages of one evaluation, laid out by WorkspaceLayout.
//
// Every per-world field is declared exactly once, in LOCKSTEP_WORLD_FIELDS or LOCKSTEP_PARAM_FIELDS;
// allocation, host/device copies, readback and comparisons are generated from those lists.
#pragma once

#include <cstdint>

#include "lockstep/mobilizer.h"

namespace lockstep {

// Constraint equations one world may carry (3 per rolling contact, 1 otherwise).
constexpr int kMaxConstraintEquationsPerWorld = 64;

// Counts that size every per-world array.
struct Sizes {
  std::int32_t nb = 0;  // mobilized bodies (Ground excluded)
  std::int32_t nq = 0;  // generalized coordinates
  std::int32_t nu = 0;  // generalized speeds
  std::int32_t nz = 0;  // auxiliary states (dissipated energies)
  std::int32_t nd = 0;  // entries of the per-body inverse joint inertias D^-1 (sum of nu_b^2)
  std::int32_t nBushings = 0;
  std::int32_t nSprings = 0;
  std::int32_t nContacts = 0;
  std::int32_t nc = 0;  // constraint equations of all contacts (3 rolling, 1 otherwise)
};

// Per-world state, inputs and outputs: X(type, name, count per world, description). The
// observations (bodyPose, bodyVelocity, bushingState, contactError) are written after every
// step() call, reset and evaluate(), from the positions and velocities then current.
#define LOCKSTEP_WORLD_FIELDS(X, s)                                                                       \
  X(T, q, (s).nq, "generalized coordinates [world][nq]; written by the integrator")                       \
  X(T, u, (s).nu, "generalized speeds [world][nu]; written by the integrator")                            \
  X(T, z, (s).nz, "auxiliary states [world][nz]: dissipated energies; written by the integrator")         \
  X(T, time, 1, "simulated time [world]; written by the integrator")                                      \
  X(T, tau, (s).nu, "applied mobility forces, the actions [world][nu]; written by the user")              \
  X(T, bodyForce, 6 * (s).nb, "applied spatial force at each body origin, in G [world][body][6]; user")   \
  X(T, udot, (s).nu, "generalized accelerations [world][nu]; written by evaluate()")                      \
  X(T, energy, 2, "kinetic and potential energy [world][2]; written by evaluate()")                       \
  X(T, multipliers, (s).nc, "constraint multipliers [world][nc]; written by evaluate()")                  \
  X(T, bodyPose, 7 * (s).nb, "observation: p_GB, then R_GB as a quaternion (w,x,y,z) [world][body][7]")    \
  X(T, bodyVelocity, 6 * (s).nb, "observation: V_GB at Bo, in G [world][body][6]")                         \
  X(T, bushingState, 12 * (s).nBushings, "observation: q[6] then f[6] of each bushing [world][bushing][12]") \
  X(T, contactError, (s).nContacts, "observation: signed separation of each contact [world][contact]")   \
  X(T, initialQ, (s).nq, "the q a reset returns to [world][nq]")                                          \
  X(T, initialU, (s).nu, "the u a reset returns to [world][nu]")                                          \
  X(std::int32_t, status, 1, "StatusFlag bits [world]; 0 while the world is healthy")                     \
  X(std::int32_t, lastFailure, 1, "StatusFlag bits that caused the last automatic reset [world]")         \
  X(std::int32_t, resetCount, 1, "automatic resets of the world so far [world]")

// Per-world parameters: a shared default (world stride 0) until some world overrides it, then one
// copy per world. X(name, count per world, description).
#define LOCKSTEP_PARAM_FIELDS(X, s)                                                                        \
  X(massProps, 10 * (s).nb, "mass, center of mass p_BC (3), central inertia xx yy zz xy xz yz [world][body][10]") \
  X(gravity, 3, "gravity, in G [world][3]")                                                                \
  X(damping, (s).nu, "viscous joint damping per generalized speed [world][nu]")                           \
  X(effortLimit, (s).nu, "bound on |tau| per generalized speed [world][nu]")                            \
  X(bushingFrames, 24 * (s).nBushings, "X_B1F then X_B2M of each bushing [world][bushing][2][12]")        \
  X(bushingStiffness, 6 * (s).nBushings, "stiffness k of each bushing [world][bushing][6]")              \
  X(bushingDamping, 6 * (s).nBushings, "damping c of each bushing [world][bushing][6]")                  \
  X(springParams, 3 * (s).nSprings, "free length, stiffness, damping of each spring [world][spring][3]") \
  X(springPoints, 6 * (s).nSprings, "p_AP then p_BQ of each spring [world][spring][6]")                  \
  X(sphereCenters, 6 * (s).nContacts, "center on F then on B of each contact [world][contact][6]")      \
  X(sphereRadii, 2 * (s).nContacts, "radius on F and on B of each contact [world][contact][2]")          \
  X(contactEnabled, (s).nContacts, "1 where the contact is enabled, 0 where disabled [world][contact]")

// Why a world stopped advancing. A world with any bit set is skipped by step() until reset.
enum StatusFlag : std::int32_t {
  kStatusOk = 0,
  kStatusNonFinite = 1 << 0,             // q, u or z became NaN or infinite
  kStatusSingularMassMatrix = 1 << 1,    // a joint inertia D of the sweep is singular
  kStatusSpringLengthZero = 1 << 2,      // a spring-damper's length became nearly zero
  kStatusBushingSingular = 1 << 3,       // a bushing's middle angle reached +/-90 degrees
  kStatusConstraintFailed = 1 << 4,      // the constraint solve or projection failed
};

// Topology of one body, as kernels read it.
enum FrameFlag : std::int32_t {
  kPFTranslationOnly = 1,  // X_PF has the identity rotation
  kMBIdentity = 2,         // X_BM is the identity
};
struct BodyTopology {
  MobilizerType mobilizer;
  std::int32_t parent;   // -1: Ground
  std::int32_t qOffset, uOffset, nq, nu;
  std::int32_t dOffset;  // first entry of this body's D^-1 in the workspace
  std::int32_t frames;   // FrameFlag bits
};

// The two bodies an element connects (-1: Ground), and its flags.
struct ElementTopology {
  std::int32_t bodyA, bodyB;
  std::int32_t flags;     // contacts: kContactRolling when rolling is enforced
  std::int32_t ancestor;  // contacts: the nearest common ancestor of the two bodies (-1: Ground)
};
enum ElementFlag : std::int32_t { kContactRolling = 1 };

template <class T>
struct ModelView {
  Sizes sizes;
  const BodyTopology* body;        // [nb]
  const Transform<T>* X_PF;        // [nb]
  const Transform<T>* X_MB;        // [nb] ~X_BM, the body frame in M
  const ElementTopology* bushing;  // [nBushings]: body1, body2
  const ElementTopology* spring;   // [nSprings]: bodyA, bodyB
  const ElementTopology* contact;  // [nContacts]: bodyF, bodyB, rolling flag
};

// A per-world parameter array: component c of world w at data[c * compStride + w * worldStride].
template <class T>
struct ParamArray {
  const T* data;
  std::int64_t worldStride;  // 0 while all worlds share the default
  std::int64_t compStride;
  LOCKSTEP_HD_INLINE Strided<const T> world(std::int64_t w) const { return {data + w * worldStride, compStride}; }
};

template <class T>
struct WorldParams {
#define LOCKSTEP_X(name, count, doc) Strided<const T> name;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, Sizes{})
#undef LOCKSTEP_X
};

template <class T>
struct WorldView {
#define LOCKSTEP_X(type, name, count, doc) Strided<type> name;
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X, Sizes{})
#undef LOCKSTEP_X
  WorldParams<T> params;
};

template <class T>
struct BatchView {
  std::int64_t nWorlds;
#define LOCKSTEP_X(type, name, count, doc) type* name;
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X, Sizes{})
#undef LOCKSTEP_X
#define LOCKSTEP_X(name, count, doc) ParamArray<T> name;
  LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, Sizes{})
#undef LOCKSTEP_X

  // World w's views: component c of a field at base[c * nWorlds + w].
  LOCKSTEP_HD_INLINE WorldView<T> world(std::int64_t w) const {
    WorldView<T> v;
#define LOCKSTEP_X(type, name, count, doc) v.name = Strided<type>{name + w, nWorlds};
    LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X, Sizes{})
#undef LOCKSTEP_X
#define LOCKSTEP_X(name, count, doc) v.params.name = name.world(w);
    LOCKSTEP_PARAM_FIELDS(LOCKSTEP_X, Sizes{})
#undef LOCKSTEP_X
    return v;
  }
};

// Scratch of one evaluation, per world, in scalars. Offsets are computed once per model.
struct WorkspaceLayout {
  std::int64_t X_GB;      // [nb][12]  body poses in Ground
  std::int64_t V_GB;      // [nb][6]   body spatial velocities at Bo, in G
  std::int64_t I_G;       // [nb][10]  body inertias about Bo, in G: m, p_BoC (3), J (6)
  std::int64_t c;         // [nb][6]   velocity-dependent (Coriolis) accelerations
  std::int64_t IA;        // [nb][21]  articulated inertias about Bo, in G
  std::int64_t pA;        // [nb][6]   articulated bias forces at Bo, in G
  std::int64_t A_GB;      // [nb][6]   body spatial accelerations
  std::int64_t Fb;        // [nb][6]   total applied body force at Bo, in G (forces stage)
  std::int64_t H;         // [nu][6]   mobilizer H columns at Bo, in G
  std::int64_t U;         // [nu][6]   IA * H
  std::int64_t ub;        // [nu]      joint-space bias force (Featherstone's u)
  std::int64_t Dinv;      // [nd]      inverse joint inertias, nu_b x nu_b each
  std::int64_t tauTotal;  // [nu]      total mobility force (forces stage)
  std::int64_t Fc;        // [nb][6]   constraint force pattern, at Bo, in G
  std::int64_t dA;        // [nb][6]   body accelerations of a constraint-force response
  std::int64_t dudot;     // [nu]      udot of a constraint-force response
  std::int64_t K;         // [nc][nc]  G M^-1 ~G, then its eigenvalues
  std::int64_t rhs;       // [nc]      constraint errors being solved for
  std::int64_t lambda;    // [nc]      multipliers
  std::int64_t V;         // [nc][nc]  eigenvectors of K
  std::int64_t qSave;     // [nq]      q before a projection step (line search)
  std::int64_t y0;        // [nq+nu+nz] state at the start of a step
  std::int64_t acc;       // [nq+nu+nz] weighted sum of stage derivatives (RK4)
  std::int64_t ydot;      // [nq+nu+nz] derivative of the state
  std::int64_t total;

  static WorkspaceLayout of(const Sizes& s) {
    WorkspaceLayout L{};
    std::int64_t o = 0;
    const std::int64_t ny = s.nq + s.nu + s.nz;
    L.X_GB = o; o += 12 * s.nb;
    L.V_GB = o; o += 6 * s.nb;
    L.I_G = o; o += 10 * s.nb;
    L.c = o; o += 6 * s.nb;
    L.IA = o; o += 21 * s.nb;
    L.pA = o; o += 6 * s.nb;
    L.A_GB = o; o += 6 * s.nb;
    L.Fb = o; o += 6 * s.nb;
    L.H = o; o += 6 * s.nu;
    L.U = o; o += 6 * s.nu;
    L.ub = o; o += s.nu;
    L.Dinv = o; o += s.nd;
    L.tauTotal = o; o += s.nu;
    L.Fc = o; o += 6 * s.nb;
    L.dA = o; o += 6 * s.nb;
    L.dudot = o; o += s.nu;
    L.K = o; o += static_cast<std::int64_t>(s.nc) * s.nc;
    L.rhs = o; o += s.nc;
    L.lambda = o; o += s.nc;
    L.V = o; o += static_cast<std::int64_t>(s.nc) * s.nc;
    L.qSave = o; o += s.nc > 0 ? s.nq : 0;
    L.y0 = o; o += ny;
    L.acc = o; o += ny;
    L.ydot = o; o += ny;
    L.total = o;
    return L;
  }
};

template <class T>
struct Workspace {
  WorkspaceLayout L;
  Strided<T> base;  // component 0 of this world's scratch
  LOCKSTEP_HD_INLINE Strided<T> at(std::int64_t offset) const { return base + offset; }
};

}  // namespace lockstep
