"""MuJoCo's view of a batch loaded from MJCF: qpos, qvel and MuJoCo's per-body quantities (xpos,
xmat, xipos, subtree_com, cinert, cvel, cfrc_ext) as the engine computes them for every world, on the
batch's device (under MuJoCo's law after a step, as MuJoCo's after mj_step, from the step's last
evaluation: RK4's fourth stage, Euler's start) (physics/mujoco_bodies.h: the per-world fields mujocoQpos, mujocoQvel and mujocoBody),
and the few things tasks derive from them (site positions, MuJoCo's order of per-speed values).
Nothing here leaves the device on CUDA: the arrays are views of the engine's memory."""
from __future__ import annotations

import numpy as np

from . import Batch

# The parts of one MuJoCo body's values in the field mujocoBody (physics/mujoco_bodies.h).
_XPOS, _XMAT, _XIPOS, _SUBTREE_COM, _CINERT, _CVEL, _CFRC_EXT, _WIDTH = 0, 3, 12, 15, 18, 28, 34, 40


class MujocoState:
    """MuJoCo's view of the worlds of a batch loaded from MJCF, for all worlds at once (arrays
    [num_envs, ...] that are views of the engine's fields, refreshed by every step and reset).

    Lockstep's q equals MuJoCo's qpos on hinges and slides; a free joint's q is (quaternion,
    position) and its u (angular velocity in Ground, linear velocity), MuJoCo's qpos (position,
    quaternion) and qvel (linear velocity, angular velocity in the body); a ball joint's u is R qvel.
    """

    def __init__(self, batch: Batch, layout: dict, xp):
        self.batch, self.layout, self.xp = batch, layout, xp
        self.nq, self.nv = layout["nq"], layout["nv"]
        self.fields = {n: xp.view(batch.field(n)) for n in ("q", "u", "mujocoQpos", "mujocoQvel", "mujocoBody",
                                                           "actuator", "stopForce", "tau", "target", "status")}

        # Joints: hinges and slides map one to one; free and ball joints are converted (to_lockstep).
        self.scalar = [(j["qpos_adr"], j["q_offset"], j["dof_adr"], j["u_offset"]) for j in layout["joints"]
                       if j["type"] in ("hinge", "slide")]
        self.free = [j for j in layout["joints"] if j["type"] == "free"]
        self.ball = [j for j in layout["joints"] if j["type"] == "ball"]
        self.qpos_of_q = np.array([s[0] for s in self.scalar], dtype=np.int64)
        self.q_of_qpos = np.array([s[1] for s in self.scalar], dtype=np.int64)
        self.dof_of_u = np.array([s[2] for s in self.scalar], dtype=np.int64)
        self.u_of_dof = np.array([s[3] for s in self.scalar], dtype=np.int64)

        bodies = layout["bodies"]
        self.body_names = [b["name"] for b in bodies]
        self.nbm = len(bodies)
        self.root = np.array([b["root"] for b in bodies], dtype=np.int64)  # MuJoCo's body_rootid
        self.sites = {s["name"]: s for s in layout["sites"]}
        # Each site: its MuJoCo body's index and its point on that body, on the device (made once).
        self._site_points = {}
        for site in layout["sites"]:
            X = np.asarray(site["X_BS"], dtype=np.float64)
            body = 0 if site["body"] == "ground" else self.body_names.index(site["body"])  # a site's body keeps its name
            self._site_points[site["name"]] = (body, xp.asarray(X[9:]))
        self._cache = {}

    def invalidate(self):
        """Forgets the arrays rearranged from the fields (after a step, a reset or a state change)."""
        self._cache.clear()

    def _rows(self, name):
        """A field as [num_envs, components] (the views' strides are world-major already)."""
        return self.fields[name]

    def _copy(self, name, make):
        """One copy per state of an array made from the fields (on the batch's device): what callers
        keep across a step (a task's progress before it) must not change with the engine's memory."""
        if name not in self._cache:
            self._cache[name] = self.xp.copy(make())
        return self._cache[name]

    def _part(self, start: int, stop: int):
        """Columns start:stop of every MuJoCo body's values in the field mujocoBody, [num_envs, MuJoCo
        bodies, stop - start]: a copy of that part alone (the whole field is 40 values a body)."""
        return self._copy(("part", start),
                          lambda: self._rows("mujocoBody").reshape(-1, self.nbm, _WIDTH)[:, :, start:stop])

    # --- coordinates ---
    def qpos(self):
        return self._copy("qpos", lambda: self._rows("mujocoQpos"))

    def qvel(self):
        return self._copy("qvel", lambda: self._rows("mujocoQvel"))

    def to_lockstep(self, qpos: np.ndarray, qvel: np.ndarray):
        """Lockstep's q, u (NumPy) from MuJoCo's qpos, qvel (NumPy, [n, nq] and [n, nv]): the model's
        joint map (Model.from_mujoco; quaternions normalized)."""
        return self.batch.model.from_mujoco(np.ascontiguousarray(qpos, dtype=np.float64),
                                            np.ascontiguousarray(qvel, dtype=np.float64))

    # --- bodies ---
    def xpos(self):
        """xpos [n, nbm, 3] of every MuJoCo body."""
        return self._part(_XPOS, _XPOS + 3)

    def frames(self):
        """xmat [n, nbm, 3, 3], xpos [n, nbm, 3], xipos [n, nbm, 3] of every MuJoCo body."""
        return (self._part(_XMAT, _XMAT + 9).reshape(-1, self.nbm, 3, 3), self.xpos(),
                self._part(_XIPOS, _XIPOS + 3))

    def site_xpos(self, name: str):
        """MuJoCo's site_xpos of one site [n, 3]."""
        b, p = self._site_points[name]
        xmat, xpos, _ = self.frames()
        return xpos[:, b] + self.xp.einsum("nij,j->ni", xmat[:, b], p)

    def subtree_com(self, xipos=None):
        """The centre of mass of each body's root subtree (MuJoCo's subtree_com[body_rootid]) [n, nbm, 3]."""
        return self._part(_SUBTREE_COM, _SUBTREE_COM + 3)[:, self.root]

    def mass_center(self, xipos=None):
        """MuJoCo's mass-weighted mean of xipos over all bodies [n, 3] (Gymnasium's mass_center): the
        world body's subtree_com."""
        return self._part(_SUBTREE_COM, _SUBTREE_COM + 3)[:, 0]

    def cinert(self, xmat=None, xipos=None, c=None):
        """MuJoCo's cinert [n, nbm, 10]: the inertia about c in Ground (xx yy zz xy xz yz), m (xipos - c), m."""
        return self._part(_CINERT, _CINERT + 10)

    def cvel(self, c=None):
        """MuJoCo's cvel [n, nbm, 6]: [w; velocity of the body's point at c], in Ground."""
        return self._part(_CVEL, _CVEL + 6)

    def cfrc_ext(self, c=None):
        """[n, nbm, 6]: each body's contact force [moment about c; force], in Ground. Under MuJoCo's
        law its own geoms' contacts from the last solve (a step's last evaluation; zero after a reset
        or a state set), as MuJoCo's; under the compliant law the ground contacts of the Lockstep body
        carrying it, on that body's own MuJoCo body (welded bodies read 0)."""
        return self._part(_CFRC_EXT, _CFRC_EXT + 6)

    def contact_forces(self):
        """cfrc_ext about each body's root subtree centre of mass."""
        return self.cfrc_ext()

    def dof_forces(self, name: str):
        """A per-speed field's values in MuJoCo's dof order [n, nv] (hinges and slides; 0 elsewhere)."""
        values = self._rows(name)
        width = values.shape[1] // self.batch.model.nu
        out = self.xp.zeros((values.shape[0], self.nv))
        out[:, self.dof_of_u] = values[:, self.u_of_dof * width]
        return out
