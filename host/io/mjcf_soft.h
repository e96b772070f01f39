// MuJoCo's soft-constraint law for an MJCF import (the "mujoco" contact law, MjcfOptions::law): a
// geom's contact with a plane and a joint's limit as Lockstep's PlaneContact and SoftLimit, with the
// parameters MuJoCo's collision and constraint code give them (mj_contactParam's mixing of the two
// geoms' condim, friction, solref and solimp; margin and gap summed as MuJoCo 3 and later sums them; the
// bodies' and dofs' invweight0; opt.impratio and opt.timestep). Private to host/io/.
#pragma once

#include <mujoco/mujoco.h>

#include <string>

#include "lockstep/engine/model.h"

namespace lockstep {

// Geom g (on the Lockstep body `body` at X_BG) against the plane geom `plane` (at X_GP in Ground).
PlaneContactDesc mjcfPlaneContact(const mjModel* m, int g, int plane, const std::string& name, const std::string& body,
                                  const Transformd& X_BG, const Transformd& X_GP);
// Hinge or slide j's range, on the coordinate of that name.
SoftLimitDesc mjcfSoftLimit(const mjModel* m, int j, const std::string& coordinate);

}  // namespace lockstep
