"""MuJoCo's view of a batch loaded from MJCF: qpos, qvel and MuJoCo's per-body quantities (xpos,
xipos, cinert, cvel, cfrc_ext, qfrc_actuator, site_xpos) computed from the engine's registry fields
for all worlds at once (docs/environments.md). The tasks' observations and rewards read them here;
it serves any MJCF model."""
from __future__ import annotations

import numpy as np

from . import Batch
from .arrays import NUMPY as _NUMPY, cross as _cross, rotations as _rotations


class MujocoState:
    """MuJoCo's view of the worlds of a batch loaded from MJCF: qpos, qvel and per-body quantities
    computed from the registry fields, for all worlds at once (arrays [num_envs, ...]).

    Lockstep's q equals MuJoCo's qpos on hinges and slides; a free joint's q is (quaternion,
    position) and its u (angular velocity in Ground, linear velocity), MuJoCo's qpos (position,
    quaternion) and qvel (linear velocity, angular velocity in the body); a ball joint's u is R qvel.
    """

    def __init__(self, batch: Batch, layout: dict, xp):
        self.batch, self.layout, self.xp = batch, layout, xp
        model = batch.model
        self.nq, self.nv = layout["nq"], layout["nv"]
        names = [n[len("body."):-len(".x")] for n in model.field_components("bodyPose")[::7]]
        index = {n: i for i, n in enumerate(names)}
        self.nb = len(names)
        self.fields = {n: xp.view(batch.field(n)) for n in ("q", "u", "bodyPose", "bodyVelocity", "bodyContact",
                                                           "actuator", "stopForce", "tau", "target", "status")}

        # Joints: hinges and slides map one to one; free and ball joints are converted.
        self.scalar = [(j["qpos_adr"], j["q_offset"], j["dof_adr"], j["u_offset"]) for j in layout["joints"]
                       if j["type"] in ("hinge", "slide")]
        self.free = [j for j in layout["joints"] if j["type"] == "free"]
        self.ball = [j for j in layout["joints"] if j["type"] == "ball"]
        self.qpos_of_q = np.array([s[0] for s in self.scalar], dtype=np.int64)
        self.q_of_qpos = np.array([s[1] for s in self.scalar], dtype=np.int64)
        self.dof_of_u = np.array([s[2] for s in self.scalar], dtype=np.int64)
        self.u_of_dof = np.array([s[3] for s in self.scalar], dtype=np.int64)

        # Bodies: the Lockstep body carrying each MuJoCo body (-1: Ground) and its placement there.
        bodies = layout["bodies"]
        self.body_names = [b["name"] for b in bodies]
        self.carrier = np.array([-1 if b["body"] == "ground" else index[b["body"]] for b in bodies], dtype=np.int64)
        X = np.array([b["X_BL"] for b in bodies], dtype=np.float64)
        self.R_BL, self.p_BL = X[:, :9].reshape(-1, 3, 3), X[:, 9:]
        self.mass = np.array([b["mass"] for b in bodies], dtype=np.float64)
        self.com = np.array([b["com"] for b in bodies], dtype=np.float64)
        I = np.array([b["inertia"] for b in bodies], dtype=np.float64)  # xx yy zz xy xz yz, in L about the com
        self.inertia = np.stack([I[:, [0, 3, 4]], I[:, [3, 1, 5]], I[:, [4, 5, 2]]], axis=1)
        # MuJoCo's body_rootid: the world body's child each body descends from.
        parent = [b["parent"] for b in bodies]
        root = []
        for b in range(len(bodies)):
            r = b
            while r > 0 and parent[r] > 0:
                r = parent[r]
            root.append(r)
        self.root = np.array(root, dtype=np.int64)
        # The body whose own frame a Lockstep body's contact force belongs to (welded bodies get 0).
        self.contact_of = np.array([index.get(b["name"], -1) if b["body"] == b["name"] else -1 for b in bodies],
                                   dtype=np.int64)
        self.sites = {s["name"]: s for s in layout["sites"]}
        self._cache = {}

        # The same constants and index arrays as the array library takes them (torch: on the device,
        # made once here rather than converted from NumPy at every step).
        self._R_BL, self._p_BL, self._com = xp.asarray(self.R_BL), xp.asarray(self.p_BL), xp.asarray(self.com)
        self._mass, self._inertia = xp.asarray(self.mass), xp.asarray(self.inertia)
        self._carrier = xp.index(np.where(self.carrier >= 0, self.carrier, self.nb))  # Ground: row nb
        # Hinges and slides only (no free or ball joint): qpos is q, and qvel u, with their columns
        # in MuJoCo's order.
        self._qpos_columns = self._qvel_columns = None
        if not self.free and not self.ball and len(self.scalar) == self.nq == self.nv:
            qpos_columns, qvel_columns = np.empty(self.nq, dtype=np.int64), np.empty(self.nv, dtype=np.int64)
            qpos_columns[self.qpos_of_q], qvel_columns[self.dof_of_u] = self.q_of_qpos, self.u_of_dof
            self._qpos_columns, self._qvel_columns = xp.index(qpos_columns), xp.index(qvel_columns)
        self._ix = {name: xp.index(getattr(self, name)) for name in ("qpos_of_q", "q_of_qpos", "dof_of_u", "u_of_dof")}
        self._sites = {}  # per site: (carrier, its position in the carrier's frame) or its fixed position

    def invalidate(self):
        """Forgets what was computed from the fields (after a step, a reset or a state change)."""
        self._cache.clear()

    def _cached(self, key, compute):
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    # --- coordinates ---
    def _rows(self, name):
        """A field as [num_envs, components] (the views' strides are world-major already)."""
        return self.fields[name]

    def qpos(self):
        return self._cached("qpos", self._qpos)

    def qvel(self):
        return self._cached("qvel", self._qvel)

    def frames(self):
        """xmat [n, nbm, 3, 3], xpos [n, nbm, 3], xipos [n, nbm, 3] of every MuJoCo body."""
        return self._cached("frames", self._frames)

    def _qpos(self):
        xp, q = self.xp, self._rows("q")
        if self._qpos_columns is not None:
            return q[:, self._qpos_columns]  # a new array (indexing by an array copies)
        out = xp.zeros((q.shape[0], self.nq))
        out[:, self._ix["qpos_of_q"]] = q[:, self._ix["q_of_qpos"]]
        for j in self.free:
            a, o = j["qpos_adr"], j["q_offset"]
            out[:, a:a + 3] = q[:, o + 4:o + 7]
            out[:, a + 3:a + 7] = q[:, o:o + 4]
        for j in self.ball:
            out[:, j["qpos_adr"]:j["qpos_adr"] + 4] = q[:, j["q_offset"]:j["q_offset"] + 4]
        return out

    def _qvel(self):
        xp, q, u = self.xp, self._rows("q"), self._rows("u")
        if self._qvel_columns is not None:
            return u[:, self._qvel_columns]
        out = xp.zeros((u.shape[0], self.nv))
        out[:, self._ix["dof_of_u"]] = u[:, self._ix["u_of_dof"]]
        for j in self.free:
            d, o, uo = j["dof_adr"], j["q_offset"], j["u_offset"]
            R = _rotations(q[:, o:o + 4], xp)
            out[:, d:d + 3] = u[:, uo + 3:uo + 6]
            out[:, d + 3:d + 6] = xp.einsum("nji,nj->ni", R, u[:, uo:uo + 3])  # R^T w: in the body
        for j in self.ball:
            d, o, uo = j["dof_adr"], j["q_offset"], j["u_offset"]
            R = _rotations(q[:, o:o + 4], xp)
            out[:, d:d + 3] = xp.einsum("nji,nj->ni", R, u[:, uo:uo + 3])
        return out

    def to_lockstep(self, qpos: np.ndarray, qvel: np.ndarray):
        """Lockstep's q, u (NumPy) from MuJoCo's qpos, qvel (NumPy, [n, nq] and [n, nv])."""
        n = qpos.shape[0]
        model = self.batch.model
        q = np.zeros((n, model.nq))
        u = np.zeros((n, model.nu))
        q[:, self.q_of_qpos] = qpos[:, self.qpos_of_q]
        u[:, self.u_of_dof] = qvel[:, self.dof_of_u]
        for j in self.free:
            a, d, o, uo = j["qpos_adr"], j["dof_adr"], j["q_offset"], j["u_offset"]
            quat = qpos[:, a + 3:a + 7] / np.linalg.norm(qpos[:, a + 3:a + 7], axis=1, keepdims=True)
            q[:, o:o + 4] = quat
            q[:, o + 4:o + 7] = qpos[:, a:a + 3]
            u[:, uo:uo + 3] = np.einsum("nij,nj->ni", _rotations(quat, _NUMPY), qvel[:, d + 3:d + 6])
            u[:, uo + 3:uo + 6] = qvel[:, d:d + 3]
        for j in self.ball:
            a, d, o, uo = j["qpos_adr"], j["dof_adr"], j["q_offset"], j["u_offset"]
            quat = qpos[:, a:a + 4] / np.linalg.norm(qpos[:, a:a + 4], axis=1, keepdims=True)
            q[:, o:o + 4] = quat
            u[:, uo:uo + 3] = np.einsum("nij,nj->ni", _rotations(quat, _NUMPY), qvel[:, d:d + 3])
        return q, u

    # --- bodies ---
    def _carrier_poses(self):
        """R [n, nbm, 3, 3] and p [n, nbm, 3] of each MuJoCo body's carrier (identity for Ground)."""
        xp = self.xp
        pose = self._rows("bodyPose").reshape(-1, self.nb, 7)
        n = pose.shape[0]
        R = xp.zeros((n, self.nb + 1, 3, 3))
        p = xp.zeros((n, self.nb + 1, 3))
        R[:, :self.nb] = _rotations(pose[:, :, 3:7], xp)
        p[:, :self.nb] = pose[:, :, 0:3]
        for i in range(3):
            R[:, self.nb, i, i] = 1.0  # row nb: Ground
        return R[:, self._carrier], p[:, self._carrier]

    def _frames(self):
        R_G, p_G = self._carrier_poses()
        xmat = R_G @ self._R_BL
        xpos = p_G + (R_G @ self._p_BL[..., None])[..., 0]
        xipos = xpos + (xmat @ self._com[..., None])[..., 0]
        return xmat, xpos, xipos

    def site_xpos(self, name: str):
        """A site's position in Ground [n, 3]: its carrier body's pose applied to the site's fixed
        position in that body (the other bodies' frames are not computed)."""
        if name not in self._sites:
            s = self.sites[name]
            X = np.asarray(s["X_BS"], dtype=np.float64)
            if s["body"] == "ground":
                self._sites[name] = (None, self.xp.asarray(np.broadcast_to(X[9:], (self.batch.worlds, 3)).copy()))
            else:
                b = self.body_names.index(s["body"])  # a site's body is a Lockstep body: it keeps its MuJoCo name
                c, r = int(self.carrier[b]), self.p_BL[b] + self.R_BL[b] @ X[9:]
                r_cross = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])  # e @ r_cross = e x r
                self._sites[name] = (c, self.xp.asarray(r), self.xp.asarray(r_cross)) if c >= 0 else \
                    (None, self.xp.asarray(np.broadcast_to(r, (self.batch.worlds, 3)).copy()), None)
        c, r, r_cross = self._sites[name]
        if c is None:
            return self.xp.copy(r)
        # r turned by the carrier's unit quaternion (w, e): (w^2 - e.e) r + 2 (e.r) e + 2 w (e x r),
        # in matrix products (few operations: each costs microseconds on small arrays).
        pose = self._rows("bodyPose")[:, 7 * c:7 * c + 7]
        w, e = pose[:, 3:4], pose[:, 4:7]
        return pose[:, 0:3] + (w * w - self.xp.sum(e * e, 1)[:, None]) * r + 2 * (e @ r)[:, None] * e + \
            2 * w * (e @ r_cross)

    def subtree_com(self, xipos):
        """The centre of mass of each body's root subtree (MuJoCo's subtree_com[body_rootid]) [n, nbm, 3]."""
        xp = self.xp
        out = xp.zeros(tuple(xipos.shape))
        for r in np.unique(self.root[1:]):
            members = np.flatnonzero(self.root == r)
            m = self.mass[members]
            c = xp.einsum("nbi,b->ni", xipos[:, members], xp.asarray(m)) / max(m.sum(), 1e-300)
            for b in members:
                out[:, b] = c
        return out

    def mass_center(self, xipos):
        """MuJoCo's mass-weighted mean of xipos over all bodies [n, 3] (Gymnasium's mass_center)."""
        return self.xp.einsum("nbi,b->ni", xipos, self._mass) / self.mass.sum()

    def cinert(self, xmat, xipos, c):
        """MuJoCo's cinert [n, nbm, 10]: the inertia about c in Ground (xx yy zz xy xz yz), m (xipos - c), m."""
        xp = self.xp
        d = xipos - c
        m = self._mass
        I = xmat @ self._inertia @ xmat.transpose(-1, -2) if xp.name == "torch" else xmat @ self._inertia @ np.swapaxes(xmat, -1, -2)
        dx, dy, dz = d[..., 0], d[..., 1], d[..., 2]
        return xp.stack([I[..., 0, 0] + m * (dy * dy + dz * dz), I[..., 1, 1] + m * (dx * dx + dz * dz),
                         I[..., 2, 2] + m * (dx * dx + dy * dy), I[..., 0, 1] - m * dx * dy,
                         I[..., 0, 2] - m * dx * dz, I[..., 1, 2] - m * dy * dz,
                         m * dx, m * dy, m * dz, m + 0 * dx], axis=-1)

    def cvel(self, c):
        """MuJoCo's cvel [n, nbm, 6]: [w; velocity of the body's point at c], in Ground."""
        xp = self.xp
        V = self._rows("bodyVelocity").reshape(-1, self.nb, 6)
        pose = self._rows("bodyPose").reshape(-1, self.nb, 7)
        n = V.shape[0]
        out = xp.zeros((n, len(self.carrier), 6))
        moving = np.flatnonzero(self.carrier >= 0)
        k = self.carrier[moving]
        w, v, p = V[:, k, 0:3], V[:, k, 3:6], pose[:, k, 0:3]
        out[:, moving, 0:3] = w
        out[:, moving, 3:6] = v + _cross(w, c[:, moving] - p, xp)
        return out

    def cfrc_ext(self, c):
        """[n, nbm, 6]: each body's ground contact force [moment about c; force], in Ground (welded
        bodies' contacts are on the body they are welded into)."""
        xp = self.xp
        F = self._rows("bodyContact").reshape(-1, self.nb, 6)
        pose = self._rows("bodyPose").reshape(-1, self.nb, 7)
        n = F.shape[0]
        out = xp.zeros((n, len(self.carrier), 6))
        own = np.flatnonzero(self.contact_of >= 0)
        k = self.contact_of[own]
        f = F[:, k, 3:6]
        out[:, own, 0:3] = F[:, k, 0:3] + _cross(pose[:, k, 0:3] - c[:, own], f, xp)
        out[:, own, 3:6] = f
        return out

    def contact_forces(self):
        """cfrc_ext about each body's root subtree centre of mass, once per state (cached)."""
        return self._cached("cfrc_ext", lambda: self.cfrc_ext(self.subtree_com(self.frames()[2])))

    def dof_forces(self, name: str):
        """A per-speed field's values in MuJoCo's dof order [n, nv] (hinges and slides; 0 elsewhere)."""
        values = self._rows(name)
        width = values.shape[1] // self.batch.model.nu
        key = ("dof_forces", width)
        if key not in self._ix:
            self._ix[key] = self.xp.index(self.u_of_dof * width)
        out = self.xp.zeros((values.shape[0], self.nv))
        out[:, self._ix["dof_of_u"]] = values[:, self._ix[key]]
        return out
