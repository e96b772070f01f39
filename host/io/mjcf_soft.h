// MuJoCo's soft-constraint law for an MJCF import (the "mujoco" contact law, MjcfOptions::law): a
// geom's contact with a plane, two geoms' contact and a joint's limit as Lockstep's PlaneContact,
// PairContact and SoftLimit, with the parameters MuJoCo's collision and constraint code give them (mj_contactParam's mixing of the two
// geoms' condim, friction, solref and solimp; margin and gap summed as MuJoCo 3 and later sums them; the
// bodies' and dofs' invweight0; opt.impratio and opt.timestep). Private to host/io/.
#pragma once

#include <mujoco/mujoco.h>

#include <string>

#include "lockstep/engine/model.h"
#include "lockstep/physics/soft_constraints.h"  // softPairModelled

namespace lockstep {

// The shape of MuJoCo's geom type (an ellipsoid for every type Lockstep has no shape of: the
// elements' build rules refuse it, naming it).
PlaneContactShape mjcfShape(int type);
// The condim of the contact between geoms g1 and g2 as mj_contactParam mixes it: the higher
// priority's, else the larger.
int mjcfContactCondim(const mjModel* m, int g1, int g2);
// Geom g (on the Lockstep body `body` at X_BG) against the plane geom `plane` (at X_GP in Ground).
PlaneContactDesc mjcfPlaneContact(const mjModel* m, int g, int plane, const std::string& name, const std::string& body,
                                  const Transformd& X_BG, const Transformd& X_GP);
// Geoms g1 and g2 (a pair softPairModelled names, g1's type not after g2's) on the Lockstep bodies body1 and
// body2 (either "ground"), at X_BG1 and X_BG2 on them: MuJoCo's contact between them.
PairContactDesc mjcfPairContact(const mjModel* m, int g1, int g2, const std::string& name, const std::string& body1,
                                const std::string& body2, const Transformd& X_BG1, const Transformd& X_BG2);
// Explicit pair p (<contact><pair>) of such geoms g1 and g2 (its geoms in that order), with its own
// condim, friction, solref, solimp and margin.
PairContactDesc mjcfExplicitPair(const mjModel* m, int p, int g1, int g2, const std::string& name, const std::string& body1,
                                 const std::string& body2, const Transformd& X_BG1, const Transformd& X_BG2);
// Hinge or slide j's range, on the coordinate of that name.
SoftLimitDesc mjcfSoftLimit(const mjModel* m, int j, const std::string& coordinate);

}  // namespace lockstep
